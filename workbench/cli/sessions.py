"""`workbench session ls|rm`: the sessions, whose workspaces executions share."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from urllib.parse import quote

from workbench.cli import exitcodes, render
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def cmd_session(http: Http, args: argparse.Namespace) -> int:
    if args.action == "ls":
        listing = http.json("GET", "/v1/sessions")
        if args.json:
            print(json.dumps(listing, indent=2))
        else:
            print(_table(listing["sessions"]))
        return exitcodes.OK
    if args.all == bool(args.ids):
        raise UsageError("session rm: name the sessions, or --all (not both)")
    if args.all:
        # One request: every session removed, or none while one is held (the message says which).
        http.request("DELETE", "/v1/sessions", ok=(204,))
        return exitcodes.OK
    return delete_each(http, args.ids, lambda session_id: f"/v1/sessions/{quote(session_id, safe='')}")


def delete_each(http: Http, ids: list[str], path_of: Callable[[str], str]) -> int:
    """DELETE each id's path; print each id deleted, going on past one that fails (its line on
    stderr); the exit status of the worst failure, else 0."""
    status = exitcodes.OK
    for item in ids:
        try:
            http.request("DELETE", path_of(item), ok=(204,))
        except ApiError as exc:
            status = max(status, exitcodes.failure(exc))
            continue
        print(item, flush=True)
    return status


def _table(sessions: list[dict[str, Any]]) -> str:
    now = datetime.now(UTC)
    rows = [
        [
            s["sessionId"],
            render.size(s["sizeBytes"]),
            f"{100 * s['sizeBytes'] // max(1, s['quotaBytes'])}%",
            render.age(s["modifiedAt"], now),
            str(s["liveExecutions"]),
            str(s["liveContexts"]),
        ]
        for s in sessions
    ]
    return render.table(["SESSION", "SIZE", "QUOTA", "CHANGED", "RUNNING", "CONTEXTS"], rows)
