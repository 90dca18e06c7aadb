"""`workbench batch FILE`: many executions accepted as one, followed until every item has ended."""

from __future__ import annotations

import argparse
import json
import sys

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import Http
from workbench.cli.run import TERMINAL, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: `batch` exits like this for a batch that ended so (and 0 once every item completed).
EXIT_STATUSES = {
    "completed": exitcodes.OK,
    "failed": exitcodes.ITEMS_FAILED,
    "partial_failed": exitcodes.ITEMS_FAILED,
    "cancelled": exitcodes.CANCELLED,
    "timed_out": exitcodes.TIMED_OUT,
}


def items_of(text: str, bash: bool, source: str = "FILE") -> list[dict[str, Any]]:
    """The items of a batch file: one JSON start body per line (its `kind` guessed from `command`
    or `code` when missing), or with `bash`, one command per line. Blank lines and lines starting
    with `#` are skipped. `source` names the input in errors (the file's name, or `stdin`)."""
    items: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if bash:
            items.append({"kind": "workbench_bash", "command": line})
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise UsageError(
                f"{source} line {number}: not JSON ({exc}); use --bash for one command per line"
            ) from None
        if not isinstance(item, dict):
            raise UsageError(f"{source} line {number}: a start body must be a JSON object")
        if "kind" not in item:
            item["kind"] = "workbench_code" if "code" in item else "workbench_bash"
        items.append(item)
    if not items:
        raise UsageError(f"{source} holds no item")
    return items


def cmd_batch(http: Http, args: argparse.Namespace) -> int:
    source = "stdin" if args.file == "-" else args.file
    items = items_of(read_text(args.file, "FILE"), args.bash, source)
    body: dict[str, Any] = {"items": items, "background": True}
    if args.concurrency is not None:
        body["concurrency"] = args.concurrency
    if args.fail_fast:
        body["failFast"] = True
    if args.timeout is not None:
        body["timeoutMs"] = args.timeout
    if args.detach:
        body["detached"] = True
    headers = {"Idempotency-Key": args.idempotency_key} if args.idempotency_key else None
    record = http.json(
        "POST",
        "/v1/executions/batch",
        body,
        headers=headers,
        ok=(200, 201, 202),
        resend=bool(args.idempotency_key),
    )
    batch_id = record["executionId"]
    if args.background or args.detach:
        print(batch_id)
        return 0
    try:
        status = _follow(http, batch_id, quiet=args.json)
    except KeyboardInterrupt:
        print(f"\nworkbench: cancelling batch {batch_id}", file=sys.stderr)
        http.request(
            "POST", f"/v1/executions/{batch_id}/cancel", {"reason": "interrupted (Ctrl-C)"}, ok=(200, 202)
        )
        status = _follow(http, batch_id, quiet=True)
    final = http.json("GET", f"/v1/executions/{batch_id}")
    if args.json:
        print(json.dumps(final, indent=2, ensure_ascii=False))
    else:
        done = sum(1 for item in final["items"] if item["status"] == "completed")
        print(
            f"workbench: {batch_id} {status}: {done} of {len(final['items'])} items completed",
            file=sys.stderr,
        )
    return EXIT_STATUSES.get(status, 1)


def _follow(http: Http, batch_id: str, *, quiet: bool) -> str:
    """Print a line per item as it ends (unless `quiet`); the batch's terminal status."""
    for kind, event in http.stream(batch_id, 0):
        if kind != "event":
            continue
        item = event.get("item")
        if event["eventType"] == "item" and item and item["status"] in TERMINAL and not quiet:
            code = f" (exit {item['exitCode']})" if item.get("exitCode") is not None else ""
            print(f"{item['executionId']} {item['status']}{code}", flush=True)
        if event["eventType"] == "status" and event["status"] in TERMINAL:
            return str(event["status"])
    return "failed"
