"""The name registry: every name the platform derives from settings, with the settings it comes from.

Names are composed from settings (`<team>-<pool>` for a topology queue, `id-<stem>-<team>` for a team identity), so
two settings can yield one name: teams `ml` and `ml-h100` beside a topology-aware pool `h100` both give a
ClusterQueue `ml-h100`, a team `aks` the control plane's identity name. Kubernetes would let the second object
overwrite the first, Azure would hand one identity to two owners, and Pulumi refuses the duplicate URN only at
preview. Registering every derived name here, scoped as its API scopes it (a LocalQueue per namespace, a
ClusterQueue per cluster, an identity per resource group), turns any such clash into one ConfigError that names both
settings, before any resource exists.

Each kind whose API limits its names has a rule (`NAME_RULES`, with its source): a composed name can break it although
every setting it comes from is valid on its own (a 50-character namespace is a valid namespace, but the host label
`reference-llm-<namespace>` of its InferenceService is then 64 characters, one more than DNS allows), so the registry
checks every name it is given against its kind's rule and blames the setting it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from components.config.errors import ConfigError
from components.config.settings import Settings
from components.core.naming import (
    BLOB_CONTAINER_NAME_LENGTH,
    CPU_FLAVOR,
    DNS_LABEL_LENGTH,
    FEDERATED_CREDENTIAL_NAME_LENGTH,
    MANAGED_IDENTITY_NAME_LENGTH,
    PLATFORM_NAMESPACES,
    Names,
)
from components.core.serving import inference_host
from components.model.flavors import GpuFlavor
from components.model.teams import Team

# The InferenceService the platform renders for every serving team (components.workloads.serving.MODEL_NAME; a test
# holds the two equal): its host label, `<name>-<namespace>`, bounds a serving team's namespace.
REFERENCE_INFERENCE_SERVICE = "reference-llm"


@dataclass(frozen=True)
class NameRule:
    """What an API takes as a name of one kind: a pattern and a length range, the rule in words, and its source."""

    pattern: re.Pattern[str]
    min_length: int
    max_length: int
    rule: str
    source: str

    def breaks(self, name: str) -> bool:
        return not (self.min_length <= len(name) <= self.max_length and self.pattern.fullmatch(name))


_RFC1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_AZURE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

# Name kinds (without their scope: `LocalQueue in namespace x` is a `LocalQueue`) -> the rule their names must keep.
# Kinds without a rule here have names that cannot break one (pool names have at most 12 characters, Azure names
# of the stack are built from a prefix of at most 10).
NAME_RULES: Mapping[str, NameRule] = MappingProxyType(
    {
        "Namespace": NameRule(
            _RFC1123_LABEL,
            1,
            DNS_LABEL_LENGTH,
            f"Kubernetes names a namespace by an RFC 1123 label of at most {DNS_LABEL_LENGTH} characters",
            "Kubernetes, Object Names and IDs",
        ),
        "ClusterQueue": NameRule(
            _RFC1123_LABEL,
            1,
            DNS_LABEL_LENGTH,
            "Kueue labels every pod it admits with its ClusterQueue's name (kueue.x-k8s.io/cluster-queue-name) only "
            f"when the name is a valid label value, at most {DNS_LABEL_LENGTH} characters, and leaves the pods of "
            "longer names unlabelled",
            "Kueue v0.19.2 pkg/constants ClusterQueueLabel",
        ),
        "LocalQueue": NameRule(
            _RFC1123_LABEL,
            1,
            DNS_LABEL_LENGTH,
            "jobs name their LocalQueue in the label kueue.x-k8s.io/queue-name, whose value has at most "
            f"{DNS_LABEL_LENGTH} characters",
            "Kubernetes, Labels and Selectors",
        ),
        "Azure managed identity": NameRule(
            _AZURE_NAME,
            *MANAGED_IDENTITY_NAME_LENGTH,
            f"Azure takes {MANAGED_IDENTITY_NAME_LENGTH[0]} to {MANAGED_IDENTITY_NAME_LENGTH[1]} letters, digits, "
            "hyphens and underscores for a user-assigned identity, starting with a letter or digit",
            "Azure resource name rules, Microsoft.ManagedIdentity",
        ),
        "federated identity credential": NameRule(
            _AZURE_NAME,
            *FEDERATED_CREDENTIAL_NAME_LENGTH,
            f"Azure takes {FEDERATED_CREDENTIAL_NAME_LENGTH[0]} to {FEDERATED_CREDENTIAL_NAME_LENGTH[1]} letters, "
            "digits, hyphens and underscores for a federated identity credential, starting with a letter or digit",
            "Microsoft Entra, Workload identity federation considerations, Errors",
        ),
        "blob container": NameRule(
            re.compile(r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9]))*"),
            *BLOB_CONTAINER_NAME_LENGTH,
            f"Azure takes {BLOB_CONTAINER_NAME_LENGTH[0]} to {BLOB_CONTAINER_NAME_LENGTH[1]} lowercase letters, "
            "digits and hyphens for a blob container, starting and ending with a letter or digit, never two hyphens "
            "in a row",
            "Azure Storage, Naming and referencing containers, blobs, and metadata",
        ),
        "InferenceService host label": NameRule(
            _RFC1123_LABEL,
            1,
            DNS_LABEL_LENGTH,
            f"a DNS label has at most {DNS_LABEL_LENGTH} characters, so the host KServe gives the InferenceService "
            "(<name>-<namespace>.<serving.domain>), which the team's HTTPRoute serves, would resolve nowhere",
            "RFC 1035 2.3.4; KServe domainTemplate, components.core.serving",
        ),
    }
)


def rule_for(kind: str) -> NameRule | None:
    """The rule of a kind, its scope (`... in namespace x`, `... of <identity>`) left out."""
    return NAME_RULES.get(re.split(r" (?:in|of) ", kind, maxsplit=1)[0])


@dataclass(frozen=True)
class Source:
    """Where a derived name comes from: a config key path and its value, and how the name is derived from it when
    more than that setting goes into it. `key` None: a name of the platform's own, fixed in code."""

    key: str | None
    value: str = ""
    via: str = ""

    def describe(self) -> str:
        if self.key is None:
            return "the platform itself"
        return f"{self.key} {self.value!r}" + (f" {self.via}" if self.via else "")


PLATFORM = Source(None)


class NameRegistry:
    """Derived names by kind (`ClusterQueue`, `LocalQueue in namespace team-a`, `Azure managed identity`, ...)."""

    def __init__(self) -> None:
        self._owners: dict[tuple[str, str], Source] = {}

    def claim(self, kind: str, name: str, source: Source) -> str:
        """Register `name`; a name that breaks its kind's rule (`NAME_RULES`), or a second, different source of the
        same name, is a ConfigError blaming a setting."""
        rule = rule_for(kind)
        if rule is not None and rule.breaks(name):
            if source.key is None:
                raise ValueError(f"the platform derives the {kind} {name!r}, which breaks its naming rule")
            raise ConfigError(
                source.key,
                source.value,
                f"{source.via + ' ' if source.via else ''}gives the {kind} {name!r} ({len(name)} characters), but "
                f"{rule.rule} ({rule.source}); choose another",
            )
        owner = self._owners.setdefault((kind, name), source)
        if owner == source:
            return name
        blamed, other = (source, owner) if source.key is not None else (owner, source)
        if blamed.key is None:
            raise ValueError(f"the platform derives the {kind} {name!r} twice")
        raise ConfigError(
            blamed.key,
            blamed.value,
            f"{blamed.via + ' ' if blamed.via else ''}gives the {kind} {name!r}, which {other.describe()} gives too: "
            "two objects cannot share it; rename one of them",
        )

    def names(self, kind: str) -> list[str]:
        """Every registered name of a kind, sorted."""
        return sorted(name for registered, name in self._owners if registered == kind)

    def kinds(self) -> list[str]:
        return sorted({kind for kind, _ in self._owners})


def register_names(
    settings: Settings, azure: Names, teams: Sequence[Team], gpu_flavors: Sequence[GpuFlavor]
) -> NameRegistry:
    """Every derived Azure, Kubernetes and Pulumi name of the stack: first the platform's own, then the pools', then
    each team's in configuration order, so the error names the later setting and the earlier one it clashes with."""
    registry = NameRegistry()
    _register_platform(registry, settings, azure)
    _register_pools(registry, settings, gpu_flavors)
    for index, team in enumerate(teams):
        _register_team(registry, settings, f"teams[{index}]", team)
    return registry


def _register_platform(registry: NameRegistry, settings: Settings, azure: Names) -> None:
    stem = Source("namePrefix", settings.name_prefix, f"with environment {settings.environment!r}")
    registry.claim("Azure resource group", azure.resource_group, stem)
    registry.claim("Azure resource group", azure.node_resource_group, stem)
    registry.claim("AKS cluster", azure.cluster, stem)
    registry.claim("Azure managed identity", azure.control_plane_identity, stem)
    registry.claim("Log Analytics workspace", azure.log_analytics, stem)
    registry.claim("Azure Monitor workspace", azure.monitor_workspace, stem)
    registry.claim("action group", azure.action_group, stem)
    registry.claim("Grafana workspace", azure.grafana, stem)
    located = Source(
        "namePrefix", settings.name_prefix, f"with environment {settings.environment!r} in {settings.location}"
    )
    registry.claim("data collection rule", azure.prometheus_rule(settings.location), located)
    registry.claim("data collection rule", azure.container_insights_rule(settings.location), located)
    registry.claim("data collection endpoint", azure.prometheus_endpoint(settings.location), located)
    for namespace in PLATFORM_NAMESPACES:
        registry.claim("Namespace", namespace, PLATFORM)
    registry.claim("ResourceFlavor", CPU_FLAVOR, PLATFORM)
    registry.claim("AKS agent pool", settings.system_pool.name, Source("systemPool.name", settings.system_pool.name))


def _register_pools(registry: NameRegistry, settings: Settings, gpu_flavors: Sequence[GpuFlavor]) -> None:
    for pool in settings.gpu_pools:
        registry.claim("AKS agent pool", pool.name, _pool_source(settings, pool.name))
    for index, cpu_pool in enumerate(settings.cpu_pools):
        registry.claim("AKS agent pool", cpu_pool.name, Source(f"cpuPools[{index}].name", cpu_pool.name))
    for flavor in gpu_flavors:
        source = _pool_source(settings, flavor.name)
        registry.claim("ResourceFlavor", flavor.name, source)
        if flavor.pool.topology_levels:
            registry.claim("Topology", flavor.name, source)


def _pool_source(settings: Settings, pool: str, via: str = "") -> Source:
    index = next(index for index, settings_pool in enumerate(settings.gpu_pools) if settings_pool.name == pool)
    return Source(f"gpuPools[{index}].name", pool, via)


def _register_team(registry: NameRegistry, settings: Settings, key: str, team: Team) -> None:
    name = Source(f"{key}.name", team.name)
    # Without an explicit namespace the team's name is used (config.teams), so that is the key to blame.
    namespace = name if team.namespace == team.name else Source(f"{key}.namespace", team.namespace)
    registry.claim("Namespace", team.namespace, namespace)
    registry.claim("Azure managed identity", team.names.identity, name)
    registry.claim(
        f"federated identity credential of {team.names.identity}", team.names.federated_credential, namespace
    )
    registry.claim("blob container", team.names.blob_container, namespace)
    if team.serves:
        host = inference_host(REFERENCE_INFERENCE_SERVICE, team.namespace, settings.serving.domain)
        registry.claim(
            "InferenceService host label",
            host.split(".", 1)[0],
            Source(namespace.key, namespace.value, f"(the host of its InferenceService {REFERENCE_INFERENCE_SERVICE})"),
        )
    for queue in team.queues:
        if queue.pool is not None:
            pool = _pool_source(settings, queue.pool)
            via = f"with {pool.describe()} (the team's queue of that topology-aware pool)"
            registry.claim("ClusterQueue", queue.cluster_queue, Source(name.key, name.value, via))
            registry.claim(f"LocalQueue in namespace {team.namespace}", queue.local_queue, pool)
        else:
            via = "" if queue.is_default else f"(its {queue.local_queue} queue)"
            registry.claim("ClusterQueue", queue.cluster_queue, Source(name.key, name.value, via))
            registry.claim(f"LocalQueue in namespace {team.namespace}", queue.local_queue, PLATFORM)
    # The scraping component names its PodMonitor resources after the team and the monitor; Pulumi refuses two
    # resources of one type and name (a duplicate URN) only at preview.
    registry.claim("Pulumi PodMonitor resource", monitor_resource_name(team.name), name)
    if team.serves:
        for monitor in team.names.serving_monitors:
            source = Source(name.key, name.value, f"(its PodMonitor {monitor})")
            registry.claim("Pulumi PodMonitor resource", monitor_resource_name(team.name, monitor), source)


def monitor_resource_name(team: str, monitor: str | None = None) -> str:
    """The Pulumi name (below the scraping component's) of a team's training PodMonitor, or of one of its serving
    PodMonitors."""
    return f"{team}-podmonitor" if monitor is None else f"{team}-{monitor}-podmonitor"
