"""`workbench wait ID...`: wait for executions to end, and exit like the first that did not complete."""

from __future__ import annotations

import argparse
import json
import sys
import time

from workbench.cli import exitcodes, render
from workbench.cli.exitcodes import BadId
from workbench.cli.follow import MAX_WAIT_MS
from workbench.cli.http import RECONNECT_FOR_S, ApiError, Http, daemon_away
from workbench.cli.ids import resolve
from workbench.cli.output import Progress
from workbench.client.config import Target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_wait(http: Http, args: argparse.Namespace) -> int:
    deadline = None if args.timeout is None else time.monotonic() + args.timeout / 1000
    several = len(args.ids) > 1
    statuses: list[int] = []
    records: list[dict[str, Any]] = []
    for text in args.ids:
        try:
            execution_id = resolve(http, text)
            record, timed_out = wait_one(
                http, execution_id, deadline, "waiting" if not several else execution_id
            )
        except (ApiError, BadId) as exc:
            if not several:
                raise
            statuses.append(exitcodes.failure(exc))
            continue
        records.append(record)
        if timed_out:
            print(f"workbench: wait timed out: {execution_id} is still {record['status']}", file=sys.stderr)
            statuses.append(exitcodes.WAIT_GAVE_UP)
            continue
        if several and not args.json:
            print(f"{execution_id} {record['status']} (exit {render.outcome(record)})")
        if not args.json:
            exitcodes.report(execution_id, record)
        statuses.append(exitcodes.of_record(record))
    if args.json:
        print(json.dumps(records if several else records[0], indent=2, ensure_ascii=False))
    return next((s for s in statuses if s != exitcodes.OK), exitcodes.OK)


def wait_one(
    http: Http, execution_id: str, deadline: float | None, label: str
) -> tuple[dict[str, Any], bool]:
    """Wait until the end or `deadline` (monotonic): (record, whether the wait gave up)."""
    progress = Progress(label)
    if progress.enabled:
        import threading

        threading.Thread(
            target=_feed_progress, args=(http.target, execution_id, progress), daemon=True
        ).start()
    try:
        away = _Away()
        while True:
            left_ms = MAX_WAIT_MS if deadline is None else max(0, round((deadline - time.monotonic()) * 1000))
            left_ms = min(left_ms, MAX_WAIT_MS)
            try:
                result = http.json(
                    "POST",
                    f"/v1/executions/{execution_id}/wait",
                    {"waitTimeoutMs": left_ms},
                    wait_s=left_ms / 1000,
                )
            except ApiError as exc:
                away.pause(exc, deadline)  # the daemon stops or restarts: ask again once it is back
                continue
            away.answered()
            if not result["waitTimedOut"] or (deadline is not None and time.monotonic() >= deadline):
                return result["execution"], bool(result["waitTimedOut"])
    finally:
        progress.stop()


class _Away:
    """A wait's retries while its daemon is away (stopping, restarting): after a first answer, for
    up to `RECONNECT_FOR_S` of failures in a row, as a follower reconnects."""

    def __init__(self) -> None:
        self.seen = False  # a daemon that never answered is not waited for
        self.since: float | None = None
        self.delay = 0.05

    def answered(self) -> None:
        self.seen, self.since, self.delay = True, None, 0.05

    def pause(self, error: ApiError, deadline: float | None) -> None:
        """Sleep before the next try; raises `error` when it is not worth another."""
        now = time.monotonic()
        self.since = self.since if self.since is not None else now
        gone_for = now - self.since
        if not (self.seen and daemon_away(error)) or gone_for > RECONNECT_FOR_S:
            raise error
        if deadline is not None and now >= deadline:
            raise error
        time.sleep(self.delay)
        self.delay = min(self.delay * 2, 2.0)


def _feed_progress(target: Target, execution_id: str, progress: Progress) -> None:
    """Follow the events in a thread, for the `progress` events of the progress line."""
    try:
        for kind, data in Http(target).stream(execution_id, 0):
            if kind == "event" and data["eventType"] == "progress":
                progress.update(data.get("progress"), data.get("total"), data.get("message"))
    except Exception:  # the line is a nicety: never let it break the wait
        return
