"""The network domain's pure builders: the Network Operator's chart values and its NicClusterPolicy, per stack.

The NicClusterPolicy is validated structurally against a strict schema written from the NicClusterPolicy CRD of
Mellanox/network-operator v26.4.1 (deployment/network-operator/crds/mellanox.com_nicclusterpolicies.yaml, sha256
6e7233dcad83ff1f2f2e14dde7b7bce85129cfd249ec87780f76d67c49fc67df): the field names of the parts the platform sets,
their types and required fields. The CRD itself is not in ../shared/schemas, so it is not pinned in
tests/support/crds.py (whose tests fail rather than skip where a file is missing). A one-off check on 2026-12-01
validated prod's rendered policy (`python -m offline prod`) against that whole CRD file, strictly (every schema
object closed to undeclared fields, as tests.support.crds.strict does): no errors, and a misspelt `ofedDriverr`
was refused.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import jsonschema
import pytest

from components.core.fabric import RDMA_RESOURCE
from components.core.naming import NETWORK_OPERATOR_NAMESPACE, PLATFORM_NAMESPACES
from components.core.placement import SYSTEM_NODE_SELECTOR
from components.core.versions import (
    DOCA_DRIVER_VERSION,
    NETWORK_OPERATOR,
    RDMA_SHARED_DEVICE_PLUGIN_VERSION,
)
from components.gpu import gpu_operator_values, nvidia_driver, operator_driver_pools
from components.network import (
    NIC_CLUSTER_POLICY_NAME,
    NetworkOperator,
    NetworkOperatorArgs,
    infiniband_pools,
    network_operator_values,
    nic_cluster_policy,
    rdma_shared_device_plugin_config,
)
from tests.support.kueue import stack_platform, stack_settings

PROD = stack_settings("prod")
DEV = stack_settings("dev")
SYSTEM_TOLERATION = {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
H100_TOLERATIONS = [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
H100_AFFINITY = {
    "requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "agentpool", "operator": "In", "values": ["h100"]}]}]
    }
}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False, "required": list(required)}


STRING, INTEGER, BOOLEAN = {"type": "string"}, {"type": "integer", "minimum": 0}, {"type": "boolean"}
PROBE = _object(
    {"initialDelaySeconds": INTEGER, "periodSeconds": INTEGER, "timeoutSeconds": INTEGER, "failureThreshold": INTEGER},
    ("initialDelaySeconds", "periodSeconds"),
)
IMAGE = {"image": {"type": "string", "pattern": "[a-zA-Z0-9\\-]+"}, "repository": STRING, "version": STRING}
NODE_SELECTOR_TERM = _object(
    {
        "matchExpressions": {
            "type": "array",
            "items": _object(
                {"key": STRING, "operator": STRING, "values": {"type": "array", "items": STRING}}, ("key", "operator")
            ),
        }
    }
)
# Mellanox/network-operator v26.4.1, NicClusterPolicy v1alpha1: spec properties (all of them), and of ofedDriver and
# rdmaSharedDevicePlugin the ones the platform sets (the CRD requires `image` in both).
SPEC_PROPERTIES = {
    "deploymentNodeAffinity",
    "deploymentTolerations",
    "docaTelemetryService",
    "global",
    "ibKubernetes",
    "nicConfigurationOperator",
    "nicFeatureDiscovery",
    "nodeAffinity",
    "nvIpam",
    "ofedDriver",
    "rdmaSharedDevicePlugin",
    "secondaryNetwork",
    "spectrumXOperator",
    "sriovDevicePlugin",
    "tolerations",
}
NIC_CLUSTER_POLICY_SCHEMA = _object(
    {
        "apiVersion": {"const": "mellanox.com/v1alpha1"},
        "kind": {"const": "NicClusterPolicy"},
        "metadata": _object({"name": STRING}, ("name",)),
        "spec": _object(
            {
                "nodeAffinity": _object(
                    {
                        "requiredDuringSchedulingIgnoredDuringExecution": _object(
                            {"nodeSelectorTerms": {"type": "array", "items": NODE_SELECTOR_TERM}},
                            ("nodeSelectorTerms",),
                        )
                    }
                ),
                "tolerations": {
                    "type": "array",
                    "items": _object(
                        {
                            "effect": STRING,
                            "key": STRING,
                            "operator": STRING,
                            "value": STRING,
                            "tolerationSeconds": INTEGER,
                        }
                    ),
                },
                "ofedDriver": _object(
                    {
                        **IMAGE,
                        "upgradePolicy": _object(
                            {
                                "autoUpgrade": BOOLEAN,
                                "maxParallelUpgrades": INTEGER,
                                "drain": _object(
                                    {
                                        "enable": BOOLEAN,
                                        "force": BOOLEAN,
                                        "deleteEmptyDir": BOOLEAN,
                                        "timeoutSeconds": INTEGER,
                                        "podSelector": STRING,
                                    }
                                ),
                            }
                        ),
                        "startupProbe": PROBE,
                        "livenessProbe": PROBE,
                        "readinessProbe": PROBE,
                    },
                    ("image",),
                ),
                "rdmaSharedDevicePlugin": _object({**IMAGE, "config": STRING}, ("image",)),
            }
        ),
    },
    ("apiVersion", "kind", "metadata", "spec"),
)


def schema_errors(manifest: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(NIC_CLUSTER_POLICY_SCHEMA)
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(manifest)]


def test_only_prod_has_an_infiniband_pool() -> None:
    assert [pool.name for pool in infiniband_pools(PROD.pool_facts)] == ["h100"]
    assert infiniband_pools(DEV.pool_facts) == []


def test_prod_nic_cluster_policy_exactly() -> None:
    policy = nic_cluster_policy(PROD.pool_facts)
    assert schema_errors(policy) == []
    assert set(policy["spec"]) <= SPEC_PROPERTIES
    # The operator reconciles only this name.
    assert policy["metadata"] == {"name": NIC_CLUSTER_POLICY_NAME} == {"name": "nic-cluster-policy"}
    spec = policy["spec"]
    # The h100 nodes whose locked-memory limit the rdma-memlock DaemonSet has lifted (components.network.memlock).
    assert spec["nodeAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "agentpool", "operator": "In", "values": ["h100"]},
                        {"key": "aks-mlops/rdma-memlock", "operator": "In", "values": ["unlimited"]},
                    ]
                }
            ]
        }
    }
    assert spec["tolerations"] == H100_TOLERATIONS
    assert (spec["ofedDriver"]["repository"], spec["ofedDriver"]["image"], spec["ofedDriver"]["version"]) == (
        "nvcr.io/nvidia/mellanox",
        "doca-driver",
        "doca3.4.1-26.04-1.1.0.0-1",
    )
    assert spec["ofedDriver"]["upgradePolicy"]["maxParallelUpgrades"] == 1
    plugin = spec["rdmaSharedDevicePlugin"]
    assert (plugin["repository"], plugin["image"], plugin["version"]) == (
        "nvcr.io/nvidia/mellanox",
        "k8s-rdma-shared-dev-plugin",
        "network-operator-v26.4.1",
    )
    assert json.loads(plugin["config"]) == {
        "configList": [
            {
                "resourceName": "shared_ib",
                "resourcePrefix": "rdma",
                "rdmaHcaMax": 63,
                "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]},
            }
        ]
    }


def test_the_plugin_advertises_the_resource_the_pools_facts_name() -> None:
    (entry,) = rdma_shared_device_plugin_config()["configList"]
    assert f"{entry['resourcePrefix']}/{entry['resourceName']}" == RDMA_RESOURCE
    assert {pool.rdma_resource for pool in infiniband_pools(PROD.pool_facts)} == {RDMA_RESOURCE}


def test_the_schema_check_sees_a_misspelt_field() -> None:
    policy = nic_cluster_policy(PROD.pool_facts)
    policy["spec"]["rdmaSharedDevicePlugin"]["configs"] = policy["spec"]["rdmaSharedDevicePlugin"].pop("config")
    policy["spec"]["ofedDriver"].pop("image")
    errors = schema_errors(policy)
    assert any("'configs' was unexpected" in e for e in errors)
    assert any("'image' is a required property" in e for e in errors)


def test_prod_operator_values_reuse_the_gpu_operators_nfd() -> None:
    values = network_operator_values(PROD.pool_facts, PROD.gpu_software)
    assert PROD.gpu_software == "gpu-operator"
    assert values == {
        "nfd": {"enabled": False, "deployNodeFeatureRules": True},
        "operator": {
            "nodeSelector": SYSTEM_NODE_SELECTOR,
            "tolerations": [
                {"key": "CriticalAddonsOnly", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
            ],
        },
    }


def test_a_device_plugin_stack_with_infiniband_runs_the_charts_own_nfd_on_the_infiniband_pools() -> None:
    h100 = replace(next(f for f in PROD.pool_facts if f.name == "h100"))
    values = network_operator_values([*DEV.pool_facts, h100], "device-plugin")
    assert values["nfd"] == {"enabled": True, "deployNodeFeatureRules": True}
    nfd = values["node-feature-discovery"]
    assert nfd["worker"] == {"tolerations": H100_TOLERATIONS, "affinity": {"nodeAffinity": H100_AFFINITY}}
    assert nfd["master"]["nodeSelector"] == nfd["gc"]["nodeSelector"] == SYSTEM_NODE_SELECTOR


def test_the_gpu_operator_loads_peermem_exactly_where_the_network_operator_runs_ofed() -> None:
    """nvidia-peermem needs the OFED driver: the NVIDIADrivers enable RDMA on exactly the pools the NicClusterPolicy
    runs the DOCA-OFED driver on (prod: h100), and the ClusterPolicy enables it on none."""
    platform = stack_platform("prod")
    rdma = {pool.name for pool in operator_driver_pools(platform) if nvidia_driver(pool)["spec"]["rdma"]["enabled"]}
    affinity = nic_cluster_policy(platform.pools)["spec"]["nodeAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (pools,) = [expression["values"] for expression in term["matchExpressions"] if expression["key"] == "agentpool"]
    ofed = set(pools)
    assert rdma == ofed == {"h100"}
    assert "rdma" not in gpu_operator_values(platform.pools, platform.mig_strategy)["driver"]


def test_versions_are_pinned_exactly() -> None:
    assert (NETWORK_OPERATOR.chart, NETWORK_OPERATOR.version, NETWORK_OPERATOR.repository) == (
        "network-operator",
        "26.4.1",
        "https://helm.ngc.nvidia.com/nvidia",
    )
    assert re.fullmatch(r"doca\d+\.\d+\.\d+-\d+\.\d+-[\d.]+-\d+", DOCA_DRIVER_VERSION)
    assert f"network-operator-v{NETWORK_OPERATOR.version}" == RDMA_SHARED_DEVICE_PLUGIN_VERSION


def test_the_network_operator_namespace_is_the_platforms() -> None:
    assert NETWORK_OPERATOR_NAMESPACE == "network-operator"
    assert NETWORK_OPERATOR_NAMESPACE in PLATFORM_NAMESPACES


def test_a_stack_without_infiniband_pools_gets_no_network_operator() -> None:
    with pytest.raises(ValueError, match="no InfiniBand pool"):
        NetworkOperator("network-operator", NetworkOperatorArgs(stack_platform("dev"), None, None))  # type: ignore[arg-type]
