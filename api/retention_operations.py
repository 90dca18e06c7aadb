"""The operations of retention and operations routes, for the OpenAPI document (see `api.operations`)."""

from __future__ import annotations

from api.operations import AUTHENTICATED, WRITES, Op
from workbench.wire.stats import DeleteResult, Stats

METRICS_DESCRIPTION = """The Prometheus text exposition (version 0.0.4): `workbench_executions{status}`,
`workbench_queue_depth`, `workbench_running`, `workbench_spawn_seconds` and `workbench_commit_seconds`
(histograms), `workbench_store_bytes`, `workbench_store_free_bytes`, `workbench_followers`,
`workbench_executions_deleted_total`. The whole daemon's figures: needs a token of the principal
`admin` with `logs:read` (403 for another's), unless `WORKBENCH_METRICS_OPEN=1` and the scraper
connects from loopback."""


def retention_operations() -> list[Op]:
    """Bulk delete, the store's statistics and the metrics."""
    return [
        Op(
            "delete",
            "/v1/executions",
            "deleteExecutions",
            "Delete many ended executions at once, with their events, files and acked exits",
            ok={200: (DeleteResult, "how many were deleted (0 when none matched)")},
            errors=(*AUTHENTICATED, *WRITES),
            query=(
                (
                    "status",
                    {"type": "string"},
                    "ended statuses, comma-separated (`completed,failed`); default: every ended one; "
                    "a live status is 400",
                ),
                (
                    "before",
                    {"type": "string"},
                    "only those that ended before this: an RFC 3339 time with its offset, or a "
                    "duration back from now (`7d`, `12h`, `30m`, `45s`, `500ms`)",
                ),
            ),
        ),
        Op(
            "get",
            "/v1/stats",
            "stats",
            "Executions by status (the caller's; admin: everyone's) and the sizes on disk",
            ok={200: (Stats, "counts and sizes, read now")},
        ),
        Op(
            "get",
            "/metrics",
            "metrics",
            "Metrics in the Prometheus text format",
            raw={200: ("text/plain; version=0.0.4; charset=utf-8", METRICS_DESCRIPTION)},
        ),
    ]
