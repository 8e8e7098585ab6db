"""Team workloads: what teams run on the platform, as the platform expects it.

`reference` renders each team's reference workloads of a stack (a checkpointed Job, a distributed PyTorchJob and
TrainJob, a MIG trial, a TFJob) from the stack's settings, purely, and `serving` each serving team's InferenceService
with a canary and its weighted route; the offline plan writes them to `workloads/<team>/`. The training entrypoint is
`trainer/train.py`, which every team namespace holds in a ConfigMap (components.core.trainer); the TFJob runs the
TensorFlow program of `tensorflow`, and `nccl` renders each multi-node pool's all-reduce test. `admission` holds the
guardrails the API server applies to the teams' own workloads.
"""
