"""The platform model: every fact derived from a stack's validated settings, decided once (`build_platform`).

`platform` (the `Platform` and how it is built), `flavors` (the Kueue flavors of the GPU pools), `teams` (each
team's names, queues and admissible quota), `names` (the registry of every derived name), `pods` (the training-pod
builder and pod sizing). Pure: no Pulumi, no resource SDK; it stands above `config` and `core` and below the domains,
the offline plan, the workload checker and the program.
"""
