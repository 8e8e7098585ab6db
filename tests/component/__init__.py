"""One component at a time on the mock engine, registered once per module, asserting the exact inputs."""
