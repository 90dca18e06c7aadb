"""The daemon's metrics for `GET /metrics`, in the Prometheus text format (prometheus-client).

Each daemon has its own registry (several daemons may share a process, in tests). Latencies are
observed where they happen (the journal's commits, the runner's spawns); counts and sizes are
read from the store when scraped, so they are never stale and cost nothing between scrapes.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from workbench.core.retention import Retention
from workbench.core.store import Store
from workbench.wire.status import ExecutionStatus

#: The text format `generate_latest` writes (0.0.4), which every Prometheus version scrapes.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Buckets (seconds) from a fraction of a millisecond to seconds: commits and spawns take ms.
_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The daemon's registry and its instruments."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.commit_seconds = Histogram(
            "workbench_commit_seconds",
            "From a write being queued to the journal until the store committed it (durably)",
            buckets=_BUCKETS,
            registry=r,
        )
        self.spawn_seconds = Histogram(
            "workbench_spawn_seconds",
            "From a slot being granted until the process tree runs (directory, shim, containment)",
            buckets=_BUCKETS,
            registry=r,
        )
        self.executions = Gauge(
            "workbench_executions", "Executions in the store, by status", ["status"], registry=r
        )
        self.queue_depth = Gauge("workbench_queue_depth", "Executions waiting for a slot", registry=r)
        self.running = Gauge("workbench_running", "Executions holding a slot", registry=r)
        self.store_bytes = Gauge("workbench_store_bytes", "The store's size on disk", registry=r)
        self.store_free_bytes = Gauge(
            "workbench_store_free_bytes", "Space inside the store left free by deletes", registry=r
        )
        self.followers = Gauge(
            "workbench_followers", "Waits and streams following an execution now", registry=r
        )
        self.deleted = Counter(
            "workbench_executions_deleted", "Executions deleted (by request or retention)", registry=r
        )
        self._deleted_seen = 0

    async def render(self, store: Store, retention: Retention, queued: int, running: int) -> bytes:
        """The text exposition, with counts and sizes read now."""
        stats = await store.stats(None)
        for status in ExecutionStatus:
            self.executions.labels(status=status.value).set(stats.counts.get(status.value, 0))
        self.queue_depth.set(queued)
        self.running.set(running)
        self.store_bytes.set(stats.store_bytes)
        self.store_free_bytes.set(stats.free_bytes)
        self.followers.set(store.watches.followers)
        self.deleted.inc(retention.deleted_total - self._deleted_seen)
        self._deleted_seen = retention.deleted_total
        return generate_latest(self.registry)
