"""aks-mlops components, in layers: `core` (pure shared facts) <- `config` (validated settings) <- `model` (every
fact derived from the settings, decided once) <- `base` (the component contract, Pulumi helpers and the program's
entry, `load_platform`) <- one package or module per domain (`cluster`, `compute`, `gpu`, `network`, `training`,
`queueing`, `storage`, `teams`, `monitoring`, `serving`, `workloads`) <- `__main__.py`.

A domain never imports another domain: what one needs of another travels through its Args.
`tests/project/test_architecture.py` enforces the direction and the absence of cycles.
"""
