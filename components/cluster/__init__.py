"""The cluster domain (`aks-mlops:cluster`): `AksCluster`, its pure Azure argument builders and kubeconfig handling."""

from components.cluster.component import AksCluster, AksClusterArgs

__all__ = ["AksCluster", "AksClusterArgs"]
