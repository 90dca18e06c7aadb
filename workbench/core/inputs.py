"""Input and resizes of running interactive executions (see `docs/api.md`, "Interactive executions").

The shim holds each open stdin and terminal (`sandbox.Supervisor.send_input`), so they outlive a
daemon crash; the daemon checks what may be sent, sends it, and journals it as an `input` or
`resize` event.
"""

from __future__ import annotations

import contextlib
import json

import sandbox
from workbench.core.executor import Executor
from workbench.core.journal import Journal
from workbench.core.live import Live
from workbench.core.records import event_builder
from workbench.core.store import ExecutionRow
from workbench.wire.errors import Conflict, InputBacklog
from workbench.wire.status import ExecutionStatus


async def send_input(
    executor: Executor, journal: Journal, row: ExecutionRow, data: bytes, *, eof: bool, record: bool
) -> None:
    """Write `data` to the stdin (or terminal) of a running execution, and journal it.

    Raises:
        Conflict: it was not started with open stdin or a terminal, it is not running, or its
            stdin was closed (by an end of file, or with the shim that held it).
        InputBacklog: it has not read what was sent before; nothing of `data` was taken.
    """
    tty = row.tty_json is not None
    if not row.open_stdin:
        raise Conflict(
            f"execution {row.id} was started without openStdin or tty: its input was fixed at the start"
        )
    live = _running(executor, row, "input")
    if (row.stdin_closed or live.stdin_unread) and not tty:
        raise _closed(row.id, live)
    if not data and not eof:
        return  # nothing to write: nothing is journaled either
    # Journaled where it meets the output: after what was written before, before what it causes.
    async with caught_up(live):
        assert live.child is not None
        try:
            await executor.supervisor.send_input(live.child, data, eof=eof)
        except sandbox.InputFull as exc:
            raise InputBacklog(
                f"execution {row.id} has not read its earlier input yet ({exc.message}); nothing of "
                "this input was taken: send it again later",
                details={"maxPendingBytes": sandbox.MAX_PENDING_INPUT},
            ) from None
        except sandbox.InputClosed:
            live.stdin_unread = True
            await journal.append(row.id, [], fields={"stdin_closed": True})
            raise _closed(row.id, live) from None
        except sandbox.SandboxError as exc:
            raise Conflict(f"execution {row.id} takes no input now: {exc.message}") from None
        delta = data.decode("utf-8", errors="replace") if record else None
        event = event_builder(
            "input", input_bytes=len(data), input_delta=delta, message="end of file" if eof else None
        )
        fields = {"stdin_closed": True} if eof and not tty else {}
        await journal.append(row.id, [("input", event)], fields=fields)


async def resize(executor: Executor, journal: Journal, row: ExecutionRow, rows: int, cols: int) -> None:
    """Set the size of a running execution's terminal, and journal it as a `resize` event.

    Raises:
        Conflict: it does not run on a terminal, or is not running.
    """
    if row.tty_json is None:
        raise Conflict(f"execution {row.id} does not run on a terminal (start it with tty: true)")
    live = _running(executor, row, "a resize")
    async with caught_up(live):  # before what the program redraws for the new size
        assert live.child is not None
        try:
            await executor.supervisor.resize(live.child, rows, cols)
        except sandbox.SandboxError as exc:
            raise Conflict(f"execution {row.id} cannot be resized now: {exc.message}") from None
        size = {"rows": rows, "cols": cols}
        await journal.append(
            row.id,
            [("resize", event_builder("resize", tty_size=size))],
            fields={"tty_json": json.dumps(size)},
        )


def on_another_node(executor: Executor, row: ExecutionRow, what: str) -> None:
    """Raise Conflict naming the node when another node of a shared store runs `row`: only that
    node holds its tree, its stdin and its terminal, so its `what` must be sent there."""
    node = row.node_id
    if node is None or node == executor.settings.node_id or row.id in executor.live or row.status.terminal:
        return
    raise Conflict(
        f"execution {row.id} runs on node {node!r}: send its {what} to that node",
        details={"nodeId": node},
    )


def caught_up(live: Live | None) -> contextlib.AbstractAsyncContextManager[None]:
    """`Capture.caught_up` of a live execution's capture (nothing to catch up with: nothing)."""
    capture = live.capture if live is not None else None
    return capture.caught_up() if capture is not None else contextlib.nullcontext()


def _closed(execution_id: str, live: Live) -> Conflict:
    """The 409 of input to a closed stdin: `details.stdin` `unread` when nothing of the tree reads
    it any more (a client may then drop the rest of its input, as a pipe's writer would)."""
    if live.stdin_unread:
        return Conflict(
            f"the stdin of execution {execution_id} is closed: nothing of its process tree reads it "
            "any more (it closed it, or ended)",
            details={"stdin": "unread"},
        )
    if live.adopted is not None:  # what closed it before the restart is not known here
        return Conflict(
            f"the stdin of execution {execution_id} was closed (by an end of file, or nothing of its "
            "process tree read it any more)"
        )
    return Conflict(f"the stdin of execution {execution_id} was closed by an end of file")


def _running(executor: Executor, row: ExecutionRow, what: str) -> Live:
    on_another_node(executor, row, what.removeprefix("a "))
    live = executor.live.get(row.id)
    if (
        live is None
        or live.status is not ExecutionStatus.RUNNING
        or live.stop is not None
        or live.child is None
    ):
        status = live.status.value if live is not None else row.status.value
        if live is not None and live.stop is not None:
            status = "being stopped"
        raise Conflict(f"execution {row.id} is {status}: only a running execution takes {what}")
    return live
