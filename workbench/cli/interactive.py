"""The CLI commands for running interactive executions: `send` (input) and `kill` (a signal)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http
from workbench.cli.ids import resolve
from workbench.cli.inputs import MAX_INPUT_BYTES, send_piece

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

SIGNALS = ("HUP", "INT", "QUIT", "TERM", "USR1", "USR2", "WINCH", "CONT", "STOP", "TSTP")
#: How long `send` waits for the execution to read before it gives up on a piece (`input_backlog`).
SEND_BACKLOG_FOR_S = 60.0


def cmd_send(http: Http, args: argparse.Namespace) -> int:
    """Write TEXT (and a newline, as Enter would) or all of stdin (`-`, bytes as they are), in
    pieces of at most 1 MiB, each sent again while the execution has not read the ones before."""
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
                backlog_for=SEND_BACKLOG_FOR_S,
            )
            taken += len(piece)
    except ApiError as exc:
        if taken == 0 and exc.code != "input_backlog":
            raise  # refused outright: nothing was sent (exit status 125)
        print(f"workbench: {exc.code}: {exc.message}; {_taken(taken, exc.code)}", file=sys.stderr)
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


def _taken(taken: int, code: str) -> str:
    """What a `send` that gave up says of its input, so that a retry sends the rest once."""
    if taken == 0:
        return "none of the input was taken: send it again later"
    said = (
        f"the first {taken} bytes of the input were taken, the rest was not: send only the rest "
        f"again (from byte {taken + 1}, as `tail -c +{taken + 1}` gives it)"
    )
    if code == "unavailable":  # the answer to the piece sent then may be what was lost
        said += "; the piece sent when the daemon went away may have been taken too"
    return said


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
