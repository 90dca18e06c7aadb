"""The CLI commands for running interactive executions: `send` (input) and `kill` (a signal)."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.exitcodes import UsageError
from workbench.cli.http import Http
from workbench.cli.ids import resolve

#: The most bytes one input request carries (the daemon's limit).
MAX_INPUT_BYTES = 1 << 20
SIGNALS = ("HUP", "INT", "QUIT", "TERM", "USR1", "USR2", "WINCH", "CONT", "STOP", "TSTP")


def cmd_send(http: Http, args: argparse.Namespace) -> int:
    """Write TEXT (and a newline, as Enter would) or all of stdin (`-`, bytes as they are)."""
    execution_id = resolve(http, args.id)
    path = f"/v1/executions/{execution_id}/input"
    record = "false" if args.no_record else "true"
    if args.text == "-":
        data = sys.stdin.buffer.read()
        chunks = [data[i : i + MAX_INPUT_BYTES] for i in range(0, len(data), MAX_INPUT_BYTES)] or [b""]
        for n, chunk in enumerate(chunks):
            eof = "true" if args.eof and n == len(chunks) - 1 else "false"
            http.request_bytes("POST", path, chunk, query={"eof": eof, "record": record}, ok=(204,))
        return 0
    text = args.text if args.no_newline else args.text + "\n"
    if len(text.encode("utf-8")) > MAX_INPUT_BYTES:
        raise UsageError(f"TEXT is longer than {MAX_INPUT_BYTES} bytes: send it with - from stdin")
    body = {"data": text, "eof": args.eof, "record": not args.no_record}
    http.request("POST", path, body, ok=(204,), resend=False)
    return 0


def cmd_kill(http: Http, args: argparse.Namespace) -> int:
    """Send a signal to a running execution (its terminal's foreground group on a tty)."""
    name = args.signal.upper().removeprefix("SIG")
    if name not in SIGNALS:
        raise UsageError(
            f"-s: {args.signal!r} is not one of {', '.join(SIGNALS)} (`workbench cancel` ends a tree)"
        )
    execution_id = resolve(http, args.id)
    http.request("POST", f"/v1/executions/{execution_id}/signal", {"signal": name}, ok=(202,), resend=False)
    return 0
