"""The server's Prometheus metrics, in a registry of its own (one per app).

Labels are bounded by the policy, never by a request: the verdict (allow, ask, deny, error),
and the list or layer that decided (names written in the policy file), so a client cannot
grow the series count by sending new tool names.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .state import ReloadEvent

CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.decisions = Counter(
            "policyctl_decisions",
            "Decisions answered, by verdict and by the layer or list that decided",
            ["verdict", "layer"],
            registry=r,
        )
        self.latency = Histogram(
            "policyctl_decision_seconds",
            "Time to decide one request (body read to answer), by route",
            ["route"],
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0),
            registry=r,
        )
        self.revision = Gauge(
            "policyctl_policy_revision_info",
            "The policy revision in service (value 1 on its label)",
            ["revision"],
            registry=r,
        )
        self.reloads = Counter(
            "policyctl_policy_reloads", "Policy versions put into service", registry=r
        )
        self.reload_failures = Counter(
            "policyctl_policy_reload_failures",
            "Policy loads that failed (the last good version stayed in service)",
            registry=r,
        )
        self.errors = Counter(
            "policyctl_request_errors",
            "Requests refused with a 4xx or 5xx, by code",
            ["code"],
            registry=r,
        )
        self._shown: str | None = None

    def reloaded(self, event: ReloadEvent) -> None:
        if not event.ok:
            self.reload_failures.inc()
            return
        self.reloads.inc()
        if self._shown is not None and self._shown != event.revision:
            self.revision.remove(self._shown)
        if event.revision is not None:
            self.revision.labels(event.revision).set(1)
            self._shown = event.revision

    def decided(self, verdict: str, layer: str | None) -> None:
        self.decisions.labels(verdict, layer or "").inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
