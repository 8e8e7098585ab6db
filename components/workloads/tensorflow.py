"""The program of the TensorFlow reference (`tfjob.yaml`, components.workloads.reference): synchronous data-parallel
training over the TFJob's workers with `tf.distribute.MultiWorkerMirroredStrategy`.

The Kubeflow Training Operator v1 sets `TF_CONFIG` in the container named `tensorflow` of every replica of a TFJob
with more than one replica (kubeflow/trainer v1.9.4 pkg/controller.v1/tensorflow/tfjob_controller.go,
SetClusterSpec): the cluster (each worker's Service and port) and this pod's task. The strategy's cluster resolver
reads it; the program never sets it. Gradients are all-reduced across the workers' GPUs with NCCL (the strategy's
CommunicationImplementation.NCCL), over the pool's network as NCCL's environment in the pod sets it.

It trains a linear model on synthetic data, which is what a team replaces: the distribution, the input pipeline
(`distribute_datasets_from_function`, each worker drawing its own share of every global batch) and the checkpoints
are the pattern. Checkpoints: every worker saves (saving distributed variables is collective), the chief (worker 0,
the TFJob having no Chief replica) into the job's folder on the `checkpoints` claim, the others into a temporary
folder they delete; on start every worker restores the chief's newest one, so a job restarted after an eviction
resumes there. SIGTERM is not caught: a worker cannot checkpoint alone (the others would wait in the collective),
so it exits 143 and the replica's `ExitCode` restart policy retries it; the last periodic checkpoint bounds the loss.

Kept as text (TensorFlow is not a dependency of the platform) and run with `python -c` on the pinned TensorFlow image
(components.core.versions.TENSORFLOW_IMAGE); tests parse it.
"""

from __future__ import annotations

from dataclasses import dataclass

# The program, after the constants `tensorflow_program` puts in front of it.
PROGRAM_BODY = """\
import json
import shutil
import tempfile

import tensorflow as tf

# Created first, as TensorFlow requires: it reads TF_CONFIG and connects to the other workers.
strategy = tf.distribute.MultiWorkerMirroredStrategy(
    communication_options=tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.NCCL
    )
)
resolver = strategy.cluster_resolver
task = f"{resolver.task_type}-{resolver.task_id}"
# Without a Chief replica, worker 0 is the chief: its checkpoints are the job's.
chief = resolver.task_type in (None, "chief") or (resolver.task_type == "worker" and resolver.task_id == 0)


def log(event, **fields):
    print(json.dumps({"event": event, "task": task, **fields}), flush=True)


with strategy.scope():
    weights = tf.Variable(tf.zeros([FEATURES, 1]), name="weights")
    bias = tf.Variable(tf.zeros([1]), name="bias")
step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
checkpoint = tf.train.Checkpoint(weights=weights, bias=bias, step=step)
directory = CHECKPOINT_DIR if chief else tempfile.mkdtemp(prefix=f"checkpoints-{task}-")
manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=KEEP_CHECKPOINTS)
latest = tf.train.latest_checkpoint(CHECKPOINT_DIR)
if latest:
    checkpoint.restore(latest)
log("start", resumed_from_step=int(step.numpy()) if latest else None, steps=STEPS,
    replicas=strategy.num_replicas_in_sync)

TRUE_WEIGHTS = tf.reshape(tf.linspace(-1.0, 1.0, FEATURES), [FEATURES, 1])


def dataset_fn(context):
    size = context.get_per_replica_batch_size(GLOBAL_BATCH)
    pipeline = tf.cast(context.input_pipeline_id, tf.int64)

    def batch(index):
        x = tf.random.stateless_normal([size, FEATURES], seed=tf.stack([index, pipeline]))
        return x, tf.matmul(x, TRUE_WEIGHTS) + 0.5

    return tf.data.Dataset.range(int(step.numpy()), STEPS).map(batch).prefetch(2)


iterator = iter(strategy.distribute_datasets_from_function(dataset_fn))


@tf.function
def train_step(iterator):
    def replica_step(x, y):
        with tf.GradientTape() as tape:
            errors = tf.reduce_mean(tf.square(tf.matmul(x, weights) + bias - y), axis=1)
            loss = tf.nn.compute_average_loss(errors, global_batch_size=GLOBAL_BATCH)
        gradients = tape.gradient(loss, [weights, bias])
        # The all-reduce across the workers' GPUs (NCCL); every replica then applies the same update to its copy.
        gradients = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.SUM, gradients)
        for variable, gradient in zip([weights, bias], gradients):
            variable.assign_sub(LEARNING_RATE * gradient)
        return loss

    losses = strategy.run(replica_step, args=next(iterator))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


while int(step.numpy()) < STEPS:
    loss = train_step(iterator)
    step.assign_add(1)
    done = int(step.numpy())
    if done % CHECKPOINT_EVERY == 0 or done == STEPS:
        manager.save(checkpoint_number=done)
        log("checkpoint", step=done, loss=float(loss))
if not chief:
    shutil.rmtree(directory, ignore_errors=True)
log("done", step=int(step.numpy()))
"""


@dataclass(frozen=True)
class TensorflowRun:
    """What a run of the program does: where the chief checkpoints, how long it trains, how it batches."""

    checkpoint_dir: str
    steps: int
    checkpoint_every: int
    keep_checkpoints: int
    global_batch: int
    features: int
    learning_rate: float


def tensorflow_program(run: TensorflowRun) -> str:
    """The program's source: the run's constants, then the body."""
    constants = [
        f"CHECKPOINT_DIR = {run.checkpoint_dir!r}",
        f"STEPS = {run.steps}",
        f"CHECKPOINT_EVERY = {run.checkpoint_every}",
        f"KEEP_CHECKPOINTS = {run.keep_checkpoints}",
        f"GLOBAL_BATCH = {run.global_batch}",
        f"FEATURES = {run.features}",
        f"LEARNING_RATE = {run.learning_rate!r}",
    ]
    return "\n".join(constants) + "\n\n" + PROGRAM_BODY
