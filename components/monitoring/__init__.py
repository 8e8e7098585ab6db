"""The monitoring domain (`aks-mlops:monitoring`): managed Prometheus, rules, alerts, Grafana, and scraping."""

from components.monitoring.prometheus import ManagedPrometheus, ManagedPrometheusArgs
from components.monitoring.scraping import Scraping, ScrapingArgs

__all__ = ["ManagedPrometheus", "ManagedPrometheusArgs", "Scraping", "ScrapingArgs"]
