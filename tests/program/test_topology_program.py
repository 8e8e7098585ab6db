"""The program with a topology-aware pool (prod's h100 fixed at two nodes): it registers the pool's queues after
Kueue and the team namespace, and the whole policy pack passes."""

from __future__ import annotations

from offline.plan.policy import check, load_policy_config
from tests.support.policy import topology_run


def test_the_pools_queues_are_registered_and_the_pack_passes() -> None:
    run = topology_run()
    local_queue = run.named("queueing-localqueue-team-a-h100")
    cluster_queue = run.named("queueing-clusterqueue-team-a-h100")
    assert local_queue.inputs["metadata"] == {"name": "h100", "namespace": "team-a", "labels": {"team": "team-a"}}
    assert local_queue.inputs["spec"] == {"clusterQueue": "team-a-h100"}
    kueue = run.named("queueing-kueue")
    assert kueue.urn in local_queue.dependencies
    assert kueue.urn in cluster_queue.dependencies
    assert run.named("team-a-namespace").urn in local_queue.dependencies
    pool = run.named("h100-pool")
    assert (pool.inputs["minCount"], pool.inputs["maxCount"]) == (2, 2)
    assert check(run, load_policy_config("prod")) == []
