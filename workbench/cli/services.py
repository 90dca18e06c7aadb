"""`workbench run --service`: start a service, wait until it is ready, print its id and return.

The service goes on after the command returns (`workbench cancel ID` stops it, tree and all).
Without `--ready-port` or `--ready-log` it is ready once it runs. The exit status is 0 once it
is ready, else that of its end (it ended, or was not ready within `--ready-timeout`), like `run`.
"""

from __future__ import annotations

import argparse
import sys

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.follow import MAX_WAIT_MS
from workbench.cli.http import Http
from workbench.cli.run import TERMINAL, start_options

#: The options of `run` that make it a service's start (see `workbench.cli.main`).
OPTIONS = ("service", "ready_port", "ready_log", "ready_timeout")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def service_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The start-body fields of `--service` and its readiness options."""
    if not args.service:
        if args.ready_port is not None or args.ready_log is not None or args.ready_timeout is not None:
            raise UsageError("run: --ready-port, --ready-log and --ready-timeout need --service")
        return {}
    body: dict[str, Any] = {"service": True}
    if args.ready_port is not None and args.ready_log is not None:
        raise UsageError("run: --ready-port or --ready-log, not both")
    if args.ready_port is not None:
        body["readiness"] = {"port": args.ready_port}
    elif args.ready_log is not None:
        body["readiness"] = {"logPattern": args.ready_log}
    if args.ready_timeout is not None:
        if "readiness" not in body:
            raise UsageError("run: --ready-timeout needs --ready-port or --ready-log")
        body["readyTimeoutMs"] = args.ready_timeout
    return body


def cmd_run(http: Http, args: argparse.Namespace) -> int:
    """`workbench run` with a service option: as `run` builds its command, then `run_service`."""
    words: list[str] = args.cmd
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("run: no command given (workbench run [OPTIONS] -- COMMAND...)")
    import shlex

    command = words[0] if len(words) == 1 else shlex.join(words)
    # In the background: a foreground start would wait for its end, which a service never reaches.
    body = {"command": command, **start_options(http, args), **service_fields(args), "background": True}
    return run_service(http, args, body)


def run_service(http: Http, args: argparse.Namespace, body: dict[str, Any]) -> int:
    """Start the service of `body`; print its id once it is ready (or report its end)."""
    key = getattr(args, "idempotency_key", None)
    headers = {"Idempotency-Key": key} if key else None
    record = http.json(
        "POST", "/v1/executions/workbench_bash", body, headers=headers, ok=(200, 201, 202), resend=bool(key)
    )
    execution_id = record["executionId"]
    while not (record.get("ready") or record["status"] in TERMINAL):
        answer = http.json(
            "POST",
            f"/v1/executions/{execution_id}/wait",
            {"until": "ready", "waitTimeoutMs": MAX_WAIT_MS},
            wait_s=MAX_WAIT_MS / 1000,
        )
        record = answer["execution"]
    if record.get("ready") and record["status"] not in TERMINAL:
        print(execution_id)
        return exitcodes.OK
    print(execution_id)
    print(f"workbench: {never_ready(execution_id, record)}", file=sys.stderr)
    return exitcodes.of_record(record)


def never_ready(execution_id: str, record: dict[str, Any]) -> str:
    """One line on why a service ended without being ready."""
    error = record.get("error")
    if error and error["code"] == "ready_timeout":
        return f"ready_timeout: {execution_id}: {error['message']}"
    if error:
        how = f"{error['code']}: {error['message']}"
    elif record.get("signal"):
        how = f"killed by {record['signal']}"
    elif record.get("exitCode") is not None:
        how = f"exit {record['exitCode']}"
    else:
        how = record.get("cancelReason") or ""
    return f"{execution_id} ended before it was ready: {record['status']}" + (f" ({how})" if how else "")
