"""The methods of both clients for interactive executions: input, terminal size, signals.

Described once, as the methods of `workbench.client.methods` are (`Client` runs each plan
blocking, `AsyncClient` awaited). None of them is resent after a broken connection but
`resize` (setting a size twice is setting it once): input or a signal sent twice would be
taken twice.
"""

from __future__ import annotations

from typing import Any

import httpx

from workbench.client.base import Base
from workbench.client.calls import Call, ExecutionRef, execution_id, expect
from workbench.client.plan import Plan, method, send
from workbench.wire.models import SIGNAL_NAMES, Execution


@method
def send_input(
    client: Base, execution: ExecutionRef, data: str | bytes = b"", *, eof: bool = False, record: bool = True
) -> Plan[None]:
    """Write `data` to the open stdin (or terminal) of a running execution, then close it if `eof`.

    Text goes as UTF-8, bytes as they are. On a terminal `eof` sends its end-of-file character
    (Ctrl-D). `record=False` keeps the bytes out of the journal (the `input` event then has only
    their count): for a password. Conflict when it was started without `open_stdin` or `tty`,
    is not running (yet), or its stdin was closed; InputBacklog (429) while it has not read
    what was sent before (nothing of `data` was taken: send it again later).
    """
    path = f"/v1/executions/{execution_id(execution)}/input"
    call: Call[None]
    if isinstance(data, bytes):
        params = {"eof": _flag(eof), "record": _flag(record)}
        headers = {"Content-Type": "application/octet-stream"}
        call = Call("POST", path, _none, content=data, params=params, headers=headers, retry=False)
    else:
        body: dict[str, Any] = {"data": data, "eof": eof, "record": record}
        call = Call("POST", path, _none, json=body, retry=False)
    yield from send(client, call)


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
