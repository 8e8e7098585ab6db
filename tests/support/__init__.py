"""The tests' one vocabulary: `config` (stack configs and validated settings), `engine` (component runs on the
mock engine), `policy` (mutations of captured resources for the policy pack), `crds` (pinned upstream CRDs and the
strict schema checker), `kueue` (Kueue objects and the rules their webhooks enforce). Test modules import from here."""
