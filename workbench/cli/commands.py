"""The CLI commands that read and manage executions: `ls`, `show`, `events`, `cancel`, `artifacts`, ..."""

from __future__ import annotations

import argparse
import json
import os
import sys

from workbench.cli import render
from workbench.cli.http import ApiError, Http
from workbench.cli.run import MAX_WAIT_MS, TERMINAL, UsageError, duration_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = {"bash": "workbench_bash", "code": "workbench_code"}


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def cmd_ls(http: Http, args: argparse.Namespace) -> int:
    records: list[dict[str, Any]] = []
    cursor = None
    while len(records) < args.limit:
        page = http.json(
            "GET",
            "/v1/executions",
            query={
                "status": args.status,
                "kind": KINDS.get(args.kind, args.kind) if args.kind else None,
                "sessionId": args.session,
                "limit": min(1000, args.limit - len(records)),
                "cursor": cursor,
            },
        )
        records.extend(page["executions"])
        cursor = page["nextCursor"]
        if cursor is None:
            break
    if args.json:
        print_json({"executions": records, "nextCursor": cursor})
    elif records:
        print(render.executions_table(records))
    return 0


def cmd_show(http: Http, args: argparse.Namespace) -> int:
    record = http.json("GET", f"/v1/executions/{args.id}")
    print_json(record) if args.json else print(render.show(record))
    return 0


def cmd_events(http: Http, args: argparse.Namespace) -> int:
    def emit(event: dict[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False) if args.json else render.event_line(event)
        sys.stdout.write(line + "\n")

    if args.follow:
        # The stream replays the journal too, and resumes by itself after a dropped connection.
        for kind, event in http.stream(args.id, 0):
            if kind == "event":
                emit(event)
                sys.stdout.flush()
        return 0
    after = 0
    while True:
        page = http.json("GET", f"/v1/executions/{args.id}/events", query={"after": after, "limit": 10000})
        for event in page["events"]:
            emit(event)
        if page["terminal"] or page["nextAfter"] == after:
            return 0
        after = page["nextAfter"]


def cmd_cancel(http: Http, args: argparse.Namespace) -> int:
    body: dict[str, Any] = {}
    if args.reason is not None:
        body["reason"] = args.reason
    grace = duration_ms(args.grace, "--grace")
    if grace:
        body["graceMs"] = grace
    reply = http.json(
        "POST", f"/v1/executions/{args.id}/cancel", body, ok=(200, 202), wait_s=(grace or 0) / 1000
    )
    record = reply["execution"]
    while record["status"] not in TERMINAL:
        result = http.json(
            "POST",
            f"/v1/executions/{args.id}/wait",
            {"waitTimeoutMs": MAX_WAIT_MS},
            wait_s=MAX_WAIT_MS / 1000,
        )
        record = result["execution"]
    if args.json:
        print_json({"cancelled": reply["cancelled"], "execution": record})
    elif reply["cancelled"]:
        print(f"{record['executionId']} {record['status']}")
    else:
        print(
            f"{record['executionId']} had already ended: {record['status']} (exit {render.outcome(record)})"
        )
    return 0


def cmd_artifacts(http: Http, args: argparse.Namespace) -> int:
    if args.name is None:
        if args.output is not None:
            raise UsageError("artifacts: -o needs an artifact NAME")
        listing = http.json("GET", f"/v1/executions/{args.id}/artifacts")
        if args.json:
            print_json(listing)
        elif listing["artifacts"]:
            print(render.artifacts_table(listing["artifacts"]))
        return 0
    path = f"/v1/executions/{args.id}/artifacts/{args.name}"
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
    wait = duration_ms(args.wait, "--wait") or 0
    query = {"limit": args.limit, "waitTimeoutMs": min(wait, MAX_WAIT_MS)}
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
        print(render.exits_table(exits))
    if args.ack:
        for item in exits:
            http.request("POST", f"/v1/exits/{item['deliveryId']}/ack", ok=(200, 204))
    return 0


def cmd_rm(http: Http, args: argparse.Namespace) -> int:
    for execution_id in args.ids:
        http.request("DELETE", f"/v1/executions/{execution_id}", ok=(200, 204))
    return 0


def cmd_images(http: Http, args: argparse.Namespace) -> int:
    listing = http.json("GET", "/v1/images")
    print_json(listing) if args.json else print(render.images_table(listing["images"]))
    return 0


def cmd_detach(http: Http, args: argparse.Namespace) -> int:
    reply = http.json("POST", f"/v1/executions/{args.id}/detach")
    if args.json:
        print_json(reply)
    elif reply["detached"]:
        print(f"{args.id} detached: its outcome goes to the exits feed")
    else:
        record = reply["execution"]
        print(f"{args.id} had already ended: {record['status']} (exit {render.outcome(record)})")
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
