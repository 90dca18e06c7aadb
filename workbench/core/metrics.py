"""The daemon's metrics for `GET /metrics`, in the Prometheus text format (prometheus-client).

Each daemon has its own registry (several daemons may share a process, in tests). Latencies are
observed where they happen (the journal's commits, the runner's spawns) into plain bucket counts,
which cost a few operations each; counts and sizes are read from the store when scraped, so they
are never stale and cost nothing between scrapes. prometheus-client is imported at the first
scrape, not at the daemon's start (its import costs about 0.1 s).
"""

from __future__ import annotations

import bisect
from typing import Any

from workbench.core.retention import Retention
from workbench.core.store import Store
from workbench.wire.status import ExecutionStatus

#: The text format `generate_latest` writes (0.0.4), which every Prometheus version scrapes.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
#: Buckets (seconds) from a fraction of a millisecond to seconds: commits and spawns take ms.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Latency:
    """A histogram of seconds: how many observations fell at or under each bucket, and their sum."""

    def __init__(self, name: str, documentation: str) -> None:
        self.name, self.documentation = name, documentation
        self.counts = [0] * (len(BUCKETS) + 1)  # the last one: over the largest bucket
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds

    def family(self) -> Any:
        from prometheus_client.core import HistogramMetricFamily

        cumulative, running = [], 0
        for bound, count in zip((*map(str, BUCKETS), "+Inf"), self.counts, strict=True):
            running += count
            cumulative.append((bound, running))
        return HistogramMetricFamily(self.name, self.documentation, buckets=cumulative, sum_value=self.total)


class Metrics:
    """The daemon's instruments; `render` writes them all."""

    def __init__(self) -> None:
        self.commit_seconds = Latency(
            "workbench_commit_seconds",
            "From a write being handed to the journal until the store committed it (durably)",
        )
        self.spawn_seconds = Latency(
            "workbench_spawn_seconds",
            "From a slot being granted until the process tree runs (directory, shim, containment)",
        )
        #: Starts of the executions that may start warm, by how they started ("warm", "cold").
        self.warm_starts: dict[str, int] = {"warm": 0, "cold": 0}

    async def render(self, store: Store, retention: Retention, queued: int, running: int) -> bytes:
        """The text exposition, with counts and sizes read now."""
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        stats = await store.stats(None)
        executions = GaugeMetricFamily(
            "workbench_executions", "Executions in the store, by status", labels=["status"]
        )
        for status in ExecutionStatus:
            executions.add_metric([status.value], stats.counts.get(status.value, 0))
        families = [
            executions,
            GaugeMetricFamily("workbench_queue_depth", "Executions waiting for a slot", value=queued),
            GaugeMetricFamily("workbench_running", "Executions holding a slot", value=running),
            self.spawn_seconds.family(),
            self.commit_seconds.family(),
            GaugeMetricFamily("workbench_store_bytes", "The store's size on disk", value=stats.store_bytes),
            GaugeMetricFamily(
                "workbench_store_free_bytes",
                "Space inside the store left free by deletes",
                value=stats.free_bytes,
            ),
            GaugeMetricFamily(
                "workbench_followers",
                "Waits and streams following an execution now",
                value=store.watches.followers,
            ),
            CounterMetricFamily(
                "workbench_executions_deleted",
                "Executions deleted (by request or retention)",
                value=retention.deletes.deleted_total,
            ),
        ]
        warm = CounterMetricFamily(
            "workbench_warm_starts",
            "Starts of python code that may start warm: with a pre-started interpreter, or cold",
            labels=["start"],
        )
        for start, count in self.warm_starts.items():
            warm.add_metric([start], count)
        families.append(warm)

        class _Now:
            def collect(self) -> Any:
                return families

        registry = CollectorRegistry(auto_describe=False)
        registry.register(_Now())
        return generate_latest(registry)
