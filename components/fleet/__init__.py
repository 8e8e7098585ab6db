"""The fleet domain (`aks-mlops:fleet`): what a worker of a MultiKueue fleet grants its manager, and the manager's copy
of each worker's credential (docs/fleet.md)."""

from components.fleet.worker import FleetWorkerAccess, FleetWorkerAccessArgs, fleet_access

__all__ = ["FleetWorkerAccess", "FleetWorkerAccessArgs", "fleet_access"]
