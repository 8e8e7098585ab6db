"""The fleet domain (`aks-mlops:fleet`): what a worker of a MultiKueue fleet grants its manager (docs/fleet.md)."""

from components.fleet.worker import FleetWorkerAccess, FleetWorkerAccessArgs, fleet_worker

__all__ = ["FleetWorkerAccess", "FleetWorkerAccessArgs", "fleet_worker"]
