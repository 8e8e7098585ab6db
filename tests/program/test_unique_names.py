"""What `pulumi preview` refuses and the API server silently merges, for every stack and a new stack copied from dev:
no two resources share a URN (the harness fails such a run, as the engine does), and no two Kubernetes objects the
program creates share kind, namespace and name (the second apply would overwrite the first)."""

from __future__ import annotations

from collections import Counter

from offline.harness.engine import ProgramRun, run_stack
from offline.plan.inventory import HELM_RELEASE, KUSTOMIZE


def object_identities(run: ProgramRun) -> list[tuple[str, str, str, str]]:
    """(API group, kind, namespace, name) of every Kubernetes object registered as a resource of its own."""
    identities = []
    for resource in run.resources:
        if not resource.type.startswith("kubernetes:") or resource.type in (HELM_RELEASE, KUSTOMIZE):
            continue
        metadata = resource.inputs.get("metadata") or {}
        group = str(resource.inputs["apiVersion"]).rpartition("/")[0]
        identities.append((group, resource.inputs["kind"], metadata.get("namespace", ""), metadata["name"]))
    return identities


def assert_unique(run: ProgramRun) -> None:
    assert run.error is None, run.error
    urns = Counter(resource.urn for resource in run.resources)
    assert [urn for urn, count in urns.items() if count > 1] == []
    objects = Counter(object_identities(run))
    assert [identity for identity, count in objects.items() if count > 1] == []
    # Not vacuous: the run registered Kubernetes objects of many kinds, namespaced and cluster-scoped.
    kinds = {kind for _, kind, _, _ in objects}
    assert {"Namespace", "ClusterQueue", "LocalQueue", "PersistentVolumeClaim", "PodMonitor"} <= kinds
    assert len(objects) > 50


def test_every_urn_and_every_kubernetes_object_of_a_stack_is_unique(
    stack: str, stack_runs: dict[str, ProgramRun]
) -> None:
    assert_unique(stack_runs[stack])


def test_a_stack_copied_from_dev_is_unique_too() -> None:
    """A stack added by copying Pulumi.dev.yaml with another environment (docs/operating.md, "Adding a stack")."""
    assert_unique(run_stack("dev", {"environment": "staging"}, raise_on_error=False))


def test_the_identity_reader_tells_objects_apart_by_namespace(stack_runs: dict[str, ProgramRun]) -> None:
    """Two teams' `default` LocalQueues share kind and name, not namespace: they are two objects, counted once each."""
    queues = [identity for identity in object_identities(stack_runs["prod"]) if identity[1] == "LocalQueue"]
    assert [name for _, _, _, name in queues].count("default") == len({namespace for _, _, namespace, _ in queues})
