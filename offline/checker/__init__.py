"""The workload checker (`python -m offline check <stack> PATH...`): team manifests against a stack's platform model,
without cloud credentials and without the Pulumi SDK, so a team's CI installs little and starts fast.

`cli` reads the files and reports, `kinds` says what a document it does not read is (another object, or one the
cluster would refuse), `normalize` turns each job kind into roles of pods, `rules` runs the checks in order (`jobs`:
the workload itself, `pods`: each role's pods, `serving`: KServe's contracts) on a workload's `scope` (its team and
queue) with `placement`'s readings of pods and pools; across the documents of a run, `routes` checks the canary's
HTTPRoute and `references` the ServiceAccounts and claims the pods name.
"""
