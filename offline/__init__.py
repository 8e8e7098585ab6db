"""Running the Pulumi program without a cloud: the mock engine harness and the offline command."""
