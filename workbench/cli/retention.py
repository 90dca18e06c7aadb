"""`workbench prune` and `workbench stats`: delete ended executions in bulk on the daemon, and
what its store holds."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from workbench.cli import render
from workbench.cli.argtypes import ENDED, parse_when
from workbench.cli.commands import print_json
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http


def cmd_prune(http: Http, args: argparse.Namespace) -> int:
    if not (args.status or args.before):
        raise UsageError("prune: say what to delete: --before WHEN and/or --status STATUS")
    statuses = [s for group in args.status or [] for s in group]
    for status in statuses:
        if status not in ENDED:
            raise UsageError(f"--status {status}: only ended executions are deleted ({', '.join(ENDED)})")
    query: dict[str, str] = {}
    if statuses:
        query["status"] = ",".join(dict.fromkeys(statuses))
    if args.before:
        from workbench.client.config import parse_duration_ms

        try:  # a duration goes as one: back from the daemon's now, not from this machine's
            query["before"] = f"{parse_duration_ms(args.before)}ms"
        except ValueError:  # a time, or no duration (parse_when says why: one too long, too)
            when = datetime.fromtimestamp(parse_when(args.before, "--before") / 1000, UTC)
            query["before"] = when.isoformat(timespec="milliseconds")
    deleted = http.json("DELETE", "/v1/executions", query=query)["deleted"]
    try:
        stats = http.json("GET", "/v1/stats")
    except ApiError as exc:
        if exc.code != "forbidden":
            raise
        stats = None  # a token that may delete (tools:execute) need not read (logs:read)
    if args.json:
        print_json({"deleted": deleted, "stats": stats})
        return 0
    said = f"deleted {deleted} execution{'s' * (deleted != 1)}"
    print(f"{said}; {_sizes(stats)}" if stats is not None else f"{said} (the store's sizes need logs:read)")
    return 0


def cmd_stats(http: Http, args: argparse.Namespace) -> int:
    stats = http.json("GET", "/v1/stats")
    if args.json:
        print_json(stats)
        return 0
    counts = stats["executions"]
    print("  ".join(f"{status} {n}" for status, n in counts.items() if n) or "no executions")
    print(_sizes(stats))
    retention = stats.get("retentionMs")
    print(f"retention: {retention} ms" if retention is not None else "retention: keep everything")
    return 0


def _sizes(stats: dict[str, int]) -> str:
    return (
        f"store {render.size(stats['storeBytes'])} ({render.size(stats['storeFreeBytes'])} free inside), "
        f"data dir {render.size(stats['dataDirBytes'])}"
    )
