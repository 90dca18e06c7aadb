"""The CLI commands for running interactive executions: `send` (input) and `kill` (a signal)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http
from workbench.cli.ids import resolve
from workbench.cli.inputs import send_piece
from workbench.client.backlog import DEFAULT_TIMEOUT_S, MAX_INPUT_BYTES, taken_said

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

SIGNALS = ("HUP", "INT", "QUIT", "TERM", "USR1", "USR2", "WINCH", "CONT", "STOP", "TSTP")


def cmd_send(http: Http, args: argparse.Namespace) -> int:
    """Write TEXT (and a newline, as Enter would) or all of stdin (`-`, bytes as they are), in
    pieces of at most 1 MiB, each sent again while the execution has not read the ones before
    (for up to `--timeout` a piece, a minute by default)."""
    backlog_for = DEFAULT_TIMEOUT_S if args.timeout is None else args.timeout / 1000
    execution_id = resolve(http, args.id)
    path = f"/v1/executions/{execution_id}/input"
    if args.text == "-":
        pieces = _pieces(sys.stdin.buffer)
    else:
        text = args.text if args.no_newline else args.text + "\n"
        data = text.encode("utf-8", "surrogateescape")  # an argument's bytes, as they were given
        if len(data) > MAX_INPUT_BYTES:
            raise UsageError(f"TEXT is longer than {MAX_INPUT_BYTES} bytes: send it with - from stdin")
        pieces = iter([(data, True)])
    taken = 0
    try:
        for piece, last in pieces:
            send_piece(
                http,
                path,
                piece,
                eof=args.eof and last,
                record=not args.no_record,
                backlog_for=backlog_for,
            )
            taken += len(piece)
    except ApiError as exc:
        if taken == 0 and exc.code != "input_backlog":
            raise  # refused outright: nothing was sent (exit status 125)
        print(
            f"workbench: {exc.code}: {exc.message}; {taken_said(taken, exc.code, tail=True)}", file=sys.stderr
        )
        return exitcodes.INPUT_GAVE_UP
    return exitcodes.OK


def _pieces(stream: BinaryIO) -> Iterator[tuple[bytes, bool]]:
    """`stream` in pieces of at most 1 MiB, each with whether it is the last (one read ahead)."""
    piece = stream.read(MAX_INPUT_BYTES)
    while True:
        after = stream.read(MAX_INPUT_BYTES) if piece else b""
        yield piece, not after
        if not after:
            return
        piece = after


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
