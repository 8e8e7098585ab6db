"""aks-mlops components, in layers: `core` (pure shared facts) <- `config` (validated settings) <- `base`
(the component contract and Pulumi helpers) <- one package or module per domain (`cluster`, `compute`,
`gpu`, `network`, `training`, `queueing`, `storage`, `teams`, `monitoring`, `workloads`) <- `__main__.py`.

A domain never imports another domain: what one needs of another travels through its Args.
`tests/project/test_architecture.py` enforces the direction and the absence of cycles.
"""
