"""The one component contract: `Component(name, ComponentArgs, opts)` with children parented to it.

Every component subclasses `PlatformComponent`, names its type token once (`TYPE`), takes one frozen
Args dataclass built by keyword, and creates children with `self.child(...)`, so parent, provider and
lifecycle options are spelled the same way everywhere. The component's own `opts` are never merged
into its children's (that would copy its aliases and protection onto them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import pulumi

from components.core.naming import Names


@dataclass(frozen=True)
class NetworkContext:
    """The platform VNet the stack's Azure resources join (components.cluster.network): its id and its subnets' ids
    by subnet name (components.core.naming), and whether the stack reaches its services through private endpoints."""

    vnet_id: pulumi.Input[str]
    subnet_ids: Mapping[str, pulumi.Input[str]]
    private_endpoints: bool
    # The stack's private DNS zones by zone name, linked to the VNet (empty without private endpoints).
    zone_ids: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class AzureContext:
    """Where a component's Azure resources go, and how they are named and tagged (from `AksCluster.azure`)."""

    names: Names
    subscription_id: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    location: str
    # The stack's tags (`core.naming.stack_tags`).
    tags: Mapping[str, str]
    # The platform VNet, once AksCluster has created it (None for a component tested without one).
    network: NetworkContext | None = None


class PlatformComponent(pulumi.ComponentResource):
    """Base of the platform's components; `TYPE` is `aks-mlops:<domain>:<Component>`."""

    TYPE: ClassVar[str]

    def __init__(self, name: str, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(self.TYPE, name, None, opts)

    def child(
        self,
        *,
        provider: pulumi.ProviderResource | None = None,
        depends_on: Sequence[pulumi.Resource] | None = None,
        protect: bool | None = None,
        retain_on_delete: bool | None = None,
        ignore_changes: Sequence[str] | None = None,
        replace_on_changes: Sequence[str] | None = None,
        delete_before_replace: bool | None = None,
        transforms: Sequence[pulumi.ResourceTransform] | None = None,
    ) -> pulumi.ResourceOptions:
        """Options of a child resource: parented to this component, everything else as given."""
        return pulumi.ResourceOptions(
            parent=self,
            provider=provider,
            depends_on=list(depends_on) if depends_on is not None else None,
            protect=protect,
            retain_on_delete=retain_on_delete,
            ignore_changes=list(ignore_changes) if ignore_changes is not None else None,
            replace_on_changes=list(replace_on_changes) if replace_on_changes is not None else None,
            delete_before_replace=delete_before_replace,
            transforms=list(transforms) if transforms is not None else None,
        )

    def invoke_options(self) -> pulumi.InvokeOutputOptions:
        """Options of a data-source call made on behalf of this component."""
        return pulumi.InvokeOutputOptions(parent=self)
