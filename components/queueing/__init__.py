"""The queueing domain (`aks-mlops:queueing`): priorities, Kueue and its objects, built from pool facts and teams."""

from components.queueing.component import Queueing, QueueingArgs

__all__ = ["Queueing", "QueueingArgs"]
