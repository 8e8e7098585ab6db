"""The mock-engine harness: the real `__main__.py` (or one component) run on the Pulumi SDK's mock engine with a
stack's configuration handed over as the CLI hands it, every registration captured with its inputs and options
(`engine`), Azure's answers faked offline (`fake_azure`). The plan and the tests run the program through it."""
