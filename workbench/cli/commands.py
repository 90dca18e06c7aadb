"""The CLI commands that read and manage executions: `show`, `events`, `cancel`, `artifacts`, `exits`,
`rm`, `images`, `detach`. Those that take several ids go on past one that fails, reporting each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from workbench.cli import exitcodes, render
from workbench.cli.argtypes import ENDED, parse_when, stamp
from workbench.cli.exitcodes import BadId, UsageError
from workbench.cli.follow import MAX_WAIT_MS, TERMINAL, grace_ms
from workbench.cli.http import ApiError, Http
from workbench.cli.ids import below_time, resolve

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

#: How much older than `--before` an id's own time may say a record is (the id and `createdAt`
#: are taken a moment apart): the listing starts this far past it, and `createdAt` decides.
ID_CLOCK_SLACK_MS = 60_000


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def cmd_show(http: Http, args: argparse.Namespace) -> int:
    record = http.json("GET", f"/v1/executions/{resolve(http, args.id)}")
    if args.json:
        print_json(record)
        return 0
    # Its journal is final once it ended: the executions that re-run it are found by listing.
    reruns = http.json("GET", "/v1/executions", query={"rerunOf": record["executionId"], "limit": 20})
    print(render.show(record, [r["executionId"] for r in reruns["executions"]]))
    return 0


def cmd_events(http: Http, args: argparse.Namespace) -> int:
    execution_id = resolve(http, args.id)

    def emit(event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False) if args.json else render.event_line(event)
        sys.stdout.write(line + "\n")

    if args.follow:
        # The stream replays the journal too, and resumes by itself after a dropped connection.
        for kind, event in http.stream(execution_id, 0):
            if kind == "event":
                emit(event)
                sys.stdout.flush()
        return 0
    after = 0
    while True:
        page = http.json(
            "GET", f"/v1/executions/{execution_id}/events", query={"after": after, "limit": 10000}
        )
        for event in page["events"]:
            emit(event)
        if page["terminal"] or page["nextAfter"] == after:
            return 0
        after = page["nextAfter"]


def cmd_cancel(http: Http, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {
        "graceMs": 0 if args.now else args.grace if args.grace is not None else grace_ms()
    }
    if args.reason is not None:
        body["reason"] = args.reason
    statuses: list[int] = []
    asked: list[tuple[str, dict[str, Any]]] = []
    # Every cancel is asked for first, so that the trees end together, then each end is awaited.
    for text in args.ids:
        try:
            execution_id = resolve(http, text)
            asked.append(
                (
                    execution_id,
                    http.json("POST", f"/v1/executions/{execution_id}/cancel", body, ok=(200, 202)),
                )
            )
        except (ApiError, BadId) as exc:
            statuses.append(exitcodes.failure(exc))
    results = []
    for execution_id, reply in asked:
        record = reply["execution"]
        try:
            while record["status"] not in TERMINAL:
                result = http.json(
                    "POST",
                    f"/v1/executions/{execution_id}/wait",
                    {"waitTimeoutMs": MAX_WAIT_MS},
                    wait_s=MAX_WAIT_MS / 1000,
                )
                record = result["execution"]
        except ApiError as exc:
            statuses.append(exitcodes.failure(exc))
            continue
        results.append({"cancelled": reply["cancelled"], "execution": record})
        if args.json:
            continue
        if reply["cancelled"]:
            print(f"{execution_id} {record['status']}")
        else:
            print(f"{execution_id} had already ended: {record['status']} (exit {render.outcome(record)})")
    if args.json and results:
        print_json(results[0] if len(args.ids) == 1 else results)
    return max(statuses, default=exitcodes.OK)


def cmd_artifacts(http: Http, args: argparse.Namespace) -> int:
    execution_id = resolve(http, args.id)
    if args.name is None:
        if args.output is not None:
            raise UsageError("artifacts: -o needs an artifact NAME")
        listing = http.json("GET", f"/v1/executions/{execution_id}/artifacts")
        if args.json:
            print_json(listing)
        elif listing["artifacts"]:
            print(render.artifacts_table(listing["artifacts"]))
        return 0
    path = f"/v1/executions/{execution_id}/artifacts/{args.name}"
    if args.output is None or args.output == "-":
        http.download(path, sys.stdout.buffer)
        sys.stdout.buffer.flush()
        return 0
    partial = f"{args.output}.partial"
    try:
        with open(partial, "wb") as f:
            http.download(path, f)
        os.replace(partial, args.output)
    except OSError as exc:
        raise UsageError(f"-o {args.output}: {exc.strerror}") from None
    finally:
        if os.path.exists(partial):
            os.unlink(partial)
    return 0


def cmd_exits(http: Http, args: argparse.Namespace) -> int:
    wait = args.wait or 0
    # Without --ack, a look that hides nothing (leaseMs 0); with it, a lease while they are printed.
    query = {"limit": args.limit, "waitTimeoutMs": min(wait, MAX_WAIT_MS), "leaseMs": None if args.ack else 0}
    try:
        reply = http.json("GET", "/v1/exits", query=query, wait_s=wait / 1000)
    except ApiError as exc:
        if exc.code == "not_found" and exc.message.startswith("no route"):
            raise ApiError(
                "not_found", "this daemon has no exits feed (GET /v1/exits); it is older than this CLI"
            ) from None
        raise
    exits = reply["exits"]
    if args.json:
        print_json(reply)
    elif exits:
        print(render.exits_table(exits, trunc=not args.no_trunc))
    sys.stdout.flush()  # acked only once printed: a closed stdout stops here
    if args.ack:
        for item in exits:
            http.request("POST", f"/v1/exits/{item['deliveryId']}/ack", ok=(200, 204))
    return 0


def cmd_rm(http: Http, args: argparse.Namespace) -> int:
    if args.ids and (args.status or args.before):
        raise UsageError("rm: give IDs, or --status/--before, not both")
    if not args.ids and not (args.status or args.before):
        raise UsageError("rm: nothing to delete: give IDs, or --status and/or --before")
    statuses: list[int] = []
    for item in args.ids or _selected(http, args):
        try:
            execution_id = item if args.status or args.before else resolve(http, item)
            http.request("DELETE", f"/v1/executions/{execution_id}", ok=(200, 204))
        except (ApiError, BadId) as exc:
            statuses.append(exitcodes.failure(exc))
            continue
        print(execution_id, flush=True)
    return max(statuses, default=exitcodes.OK)


def _selected(http: Http, args: argparse.Namespace) -> Iterator[str]:
    """The ids of the ended executions that `--status` and `--before` select, oldest pages last."""
    wanted = [s for group in args.status or [list(ENDED)] for s in group]
    for status in wanted:
        if status not in ENDED:
            raise UsageError(f"--status {status}: only ended executions can be deleted ({', '.join(ENDED)})")
    before = parse_when(args.before, "--before") if args.before else None
    cutoff = stamp(before) if before is not None else None
    for status in dict.fromkeys(wanted):
        cursor = below_time(before + ID_CLOCK_SLACK_MS) if before is not None else None
        while True:
            query = {"status": status, "limit": 1000, "cursor": cursor}
            page = http.json("GET", "/v1/executions", query=query)
            for record in page["executions"]:
                if cutoff is None or record["createdAt"] < cutoff:
                    yield record["executionId"]
            cursor = page["nextCursor"]
            if cursor is None:
                break


def cmd_images(http: Http, args: argparse.Namespace) -> int:
    listing = http.json("GET", "/v1/images")
    print_json(listing) if args.json else print(render.images_table(listing["images"]))
    return 0


def cmd_detach(http: Http, args: argparse.Namespace) -> int:
    execution_id = resolve(http, args.id)
    reply = http.json("POST", f"/v1/executions/{execution_id}/detach")
    if args.json:
        print_json(reply)
    elif reply["detached"]:
        print(f"{execution_id} detached: its outcome goes to the exits feed")
    else:
        record = reply["execution"]
        print(f"{execution_id} had already ended: {record['status']} (exit {render.outcome(record)})")
    return 0


def cmd_ui(http: Http, args: argparse.Namespace) -> int:
    if http.target.socket_path is not None and args.ui_url is None:
        raise UsageError("a browser cannot reach a Unix socket: pass --ui-url http://HOST:PORT")
    link = http.json("POST", "/v1/login/links", ok=(201,))
    base = (args.ui_url or http.target.base_url).rstrip("/")
    url = f"{base}/#login={link['code']}"
    if args.json:
        print_json({"url": url, "expiresAt": link["expiresAt"]})
    else:
        print(url)
    return 0
