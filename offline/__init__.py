"""Running the platform without a cloud: the mock-engine harness (`harness`), the offline plan and its reports
(`plan`), and the workload checker (`checker`), sharing how stack files are read (`stacks`)."""
