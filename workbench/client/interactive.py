"""The methods of both clients for interactive executions: input, terminal size, signals.

Described once, as the methods of `workbench.client.methods` are (`Client` runs each plan
blocking, `AsyncClient` awaited). None of them is resent after a broken connection but
`resize` (setting a size twice is setting it once): input or a signal sent twice would be
taken twice.
"""

from __future__ import annotations

import httpx

from workbench.client import backlog
from workbench.client.base import Base
from workbench.client.calls import Call, ExecutionRef, UnknownCodeError, execution_id, expect
from workbench.client.plan import Plan, Sleep, method, send
from workbench.wire.errors import InputBacklog, WorkbenchError
from workbench.wire.models import SIGNAL_NAMES, Execution


@method
def send_input(
    client: Base,
    execution: ExecutionRef,
    data: str | bytes = b"",
    *,
    eof: bool = False,
    record: bool = True,
    timeout: float | None = backlog.DEFAULT_TIMEOUT_S,
) -> Plan[None]:
    """Write `data` to the open stdin (or terminal) of a running execution, then close it if `eof`.

    Text goes as UTF-8 (a lone surrogate is a UnicodeEncodeError), bytes as they are, in pieces
    of at most 1 MiB (text cut between characters), so `data` may be of any size. On a terminal
    `eof` sends its end-of-file character (Ctrl-D). `record=False` keeps the bytes out of the
    journal (the `input` event then has only their count): for a password. A piece refused because
    the execution has not read what was sent before (`input_backlog`: nothing of the piece was
    taken) is sent again, after a pause doubling from 10 ms to 250 ms, for up to `timeout` seconds
    (None: for as long as it takes; 0: not at all), so a slow reader gets every byte once, in order.

    Conflict when it was started without `open_stdin` or `tty`, is not running (yet), or its stdin
    was closed; InputBacklog once a piece waited `timeout`. An error raised once part of `data`
    was taken, or on giving up on the backlog, says in its message, and (a dict) in
    `details["takenBytes"]`, how many bytes of `data` (of its UTF-8, for text) were taken: send
    only the rest again.
    """
    if timeout is not None and timeout < 0:
        raise ValueError(f"timeout must be at least 0 (or None), not {timeout!r}")
    path = f"/v1/executions/{execution_id(execution)}/input"
    parts = backlog.pieces(data)
    taken = 0
    for number, piece in enumerate(parts, 1):
        call = _input(path, piece, eof=eof and number == len(parts), record=record)
        resend = backlog.Resend({InputBacklog.code: timeout})
        while True:
            try:
                yield from send(client, call)
                break
            except WorkbenchError as exc:
                pause = resend.after(exc.code)
                if pause is None:
                    raise _gave_up(exc, taken) from exc
            yield Sleep(pause)
        taken += len(piece)


def _input(path: str, piece: bytes, *, eof: bool, record: bool) -> Call[None]:
    """The request that writes one piece of input (never resent after a broken connection)."""
    params = {"eof": _flag(eof), "record": _flag(record)}
    headers = {"Content-Type": "application/octet-stream"}
    return Call("POST", path, _none, content=piece, params=params, headers=headers, retry=False)


def _gave_up(error: WorkbenchError, taken: int) -> WorkbenchError:
    """`error` (of the same class), saying that `taken` bytes of the input were taken before it."""
    details = error.details
    if details is None or isinstance(details, dict):
        details = {**(details or {}), "takenBytes": taken}
    message = error.message
    if taken or error.code == InputBacklog.code:
        message += "; " + backlog.taken_said(taken, error.code)
    if isinstance(error, UnknownCodeError):  # a newer daemon's code: kept
        return UnknownCodeError(message, details=details, code=error.code)
    return type(error)(message, details=details)


@method
def resize(client: Base, execution: ExecutionRef, rows: int, cols: int) -> Plan[None]:
    """Set the size of a running execution's terminal (its foreground process group gets SIGWINCH).

    Conflict when it does not run on a terminal (`tty`) or is not running.
    """
    path = f"/v1/executions/{execution_id(execution)}/resize"
    yield from send(client, Call("POST", path, _none, json={"rows": rows, "cols": cols}))


@method
def signal(client: Base, execution: ExecutionRef, name: str = "INT") -> Plan[Execution]:
    """Send signal `name` (HUP, INT, QUIT, TERM, USR1, USR2, WINCH, CONT, STOP or TSTP, with or
    without `SIG`) to a running execution: to its terminal's foreground process group on a tty
    (as a key typed there would), else to every process of its tree. Journaled as a `signal`
    event; returns the record. Conflict when it is not running. `cancel` ends a tree."""
    short = name.upper().removeprefix("SIG")
    if short not in SIGNAL_NAMES:
        raise ValueError(f"signal {name!r} is not one of {', '.join(SIGNAL_NAMES)}")
    path = f"/v1/executions/{execution_id(execution)}/signal"

    @expect(202)
    def parse(response: httpx.Response) -> Execution:
        return Execution.model_validate(response.json()["execution"])

    return (yield from send(client, Call("POST", path, parse, json={"signal": short}, retry=False)))


def _flag(value: bool) -> str:
    return "true" if value else "false"


@expect(204, 200)
def _none(response: httpx.Response) -> None:
    return None
