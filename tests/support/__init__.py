"""The tests' one vocabulary: `config` (stack configs and validated settings), `engine` (component runs on the
mock engine), `policy` (mutations of captured resources for the policy pack). Test modules import from here."""
