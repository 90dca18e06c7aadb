"""`workbench context new|ls|rm`: code contexts, interpreters whose names persist between
`workbench code --context ID` runs."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from urllib.parse import quote

from workbench.cli import exitcodes, render
from workbench.cli.http import Http
from workbench.cli.run import variables
from workbench.cli.sessions import delete_each

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def cmd_context(http: Http, args: argparse.Namespace) -> int:
    if args.action == "new":
        body: dict[str, Any] = {"language": args.language}
        if args.image is not None:
            body["image"] = args.image
        if args.session is not None:
            body["sessionId"] = args.session
        if args.idle_timeout is not None:
            body["idleTimeoutMs"] = args.idle_timeout
        if args.env:
            body["env"] = variables(args.env, "--env")
        record = http.json("POST", "/v1/contexts", body, ok=(201,))
        if args.json:
            print(json.dumps(record, indent=2))
        else:
            print(record["contextId"])
        if record["status"] == "dead":
            print(
                f"workbench: context {record['contextId']} could not start: {record['reason']}",
                file=sys.stderr,
            )
            return exitcodes.FAILED
        return exitcodes.OK
    if args.action == "ls":
        listing = http.json("GET", "/v1/contexts")
        if args.json:
            print(json.dumps(listing, indent=2))
        else:
            print(_table(listing["contexts"]))
        return exitcodes.OK
    return delete_each(http, args.ids, lambda context_id: f"/v1/contexts/{quote(context_id, safe='')}")


def _table(contexts: list[dict[str, Any]]) -> str:
    now = datetime.now(UTC)
    rows = [
        [
            c["contextId"],
            c["language"],
            c["image"],
            c["sessionId"],
            c["status"],
            str(c["executions"]),
            render.age(c["lastUsedAt"], now),
            c.get("reason") or "",
        ]
        for c in contexts
    ]
    headers = ["CONTEXT", "LANGUAGE", "IMAGE", "SESSION", "STATUS", "RUNS", "USED", "REASON"]
    return render.table(headers, rows, cut_last_to=render.width())
