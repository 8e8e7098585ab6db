"""Human-readable summaries of an offline program run (what `pulumi up` would create)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from offline.harness.engine import CapturedResource, ProgramRun

# Inputs that name something else than the resource itself.
_OTHER_NAMES = ("resourceGroupName", "clusterName", "dashboardName")


def resource_tree(run: ProgramRun) -> Iterator[str]:
    """One line per resource, indented under its parent component."""
    urns = {resource.urn for resource in run.resources}
    # Registration order depends on RPC timing; sort so two runs print the same plan.
    roots = sorted((r for r in run.resources if r.parent not in urns), key=lambda r: (r.type, r.name))
    for root in roots:
        yield from _subtree(run, root, depth=1)


def _subtree(run: ProgramRun, resource: CapturedResource, depth: int) -> Iterator[str]:
    flags = [flag for flag, on in (("protect", resource.protect), ("retain", resource.retain_on_delete)) if on]
    if resource.ignore_changes:
        flags.append("ignoreChanges=" + ",".join(resource.ignore_changes))
    azure_name = object_name(resource)
    details = "  ".join(part for part in (azure_name and f"({azure_name})", " ".join(f"[{f}]" for f in flags)) if part)
    yield f"{'  ' * depth}{resource.type}  {resource.name}  {details}".rstrip()
    for child in sorted(run.children_of(resource), key=lambda r: (r.type, r.name)):
        yield from _subtree(run, child, depth + 1)


def object_name(resource: CapturedResource) -> str:
    """The Azure name, or the Kubernetes `namespace/name`, a resource is created with."""
    inputs = resource.inputs
    metadata = inputs.get("metadata")
    if isinstance(metadata, dict) and "name" in metadata:
        return "/".join(part for part in (metadata.get("namespace"), metadata["name"]) if part)
    # Azure resources carry their own name in an input such as `registryName` or `agentPoolName`;
    # child resources name their parent in `resourceName` or `accountName`, so their own name comes first.
    parents = ("resourceName", "accountName")
    own = [key for key in inputs if key.endswith("Name") and key not in (*_OTHER_NAMES, *parents)]
    for key in (*own, *parents, "name", "resourceGroupName"):
        value = inputs.get(key)
        if isinstance(value, str):
            return value
    return ""


def node_pool_table(run: ProgramRun) -> list[str]:
    """The exported node-pool summary as an aligned table."""
    header = ("pool", "vm size", "gpu", "per node", "nodes", "at max scale")
    rows: list[tuple[str, ...]] = [header]
    for pool in run.outputs.get("nodePools", []):
        per_node = f"{int(pool['resourcesPerNode'])} x {pool['gpuResource']}"
        rows.append(
            (
                pool["name"],
                pool["vmSize"],
                f"{int(pool['gpusPerNode'])} x {pool['gpuModel']}",
                per_node,
                f"{int(pool['minCount'])}..{int(pool['maxCount'])}",
                f"{int(pool['capacityAtMax'])} {pool['gpuResource']}",
            )
        )
    return _aligned(rows)


def cpu_pool_table(run: ProgramRun) -> list[str]:
    """The exported CPU-pool summary as an aligned table."""
    rows = [("pool", "vm size", "vCPUs per node", "nodes", "at max scale", "spot")]
    for pool in run.outputs.get("cpuPools", []):
        rows.append(
            (
                pool["name"],
                pool["vmSize"],
                str(int(pool["vcpusPerNode"])),
                f"{int(pool['minCount'])}..{int(pool['maxCount'])}",
                f"{int(pool['vcpusAtMax'])} vCPUs",
                "yes" if pool["spot"] else "no",
            )
        )
    return _aligned(rows)


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
