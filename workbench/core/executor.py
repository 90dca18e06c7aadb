"""The executor: owns the live executions, their supervisor tasks, the concurrency slots and the end.

It holds the daemon's nursery for executions (never the app's, which would block shutdown), the
sandbox supervisor client, and `finish()`: the one place an execution becomes terminal (artifacts
first, then the terminal transition with its exit record, then the directory clean-up).
"""

from __future__ import annotations

import collections
import json
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

import sandbox
from workbench.core import launch
from workbench.core.display import Displays
from workbench.core.follow import Inotify
from workbench.core.images import Image
from workbench.core.journal import Journal
from workbench.core.records import event_builder, format_time, now_ms
from workbench.core.runner import Live, Outcome, Run, Stop
from workbench.core.settings import Settings
from workbench.core.store import sqlite as store
from workbench.wire.ids import new_delivery_id
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.executor")

#: The last bytes of each stream kept in an exit record.
EXIT_TAIL_BYTES = 16 * 1024


class Slots:
    """A FIFO of executions waiting to run, and the number of free concurrency slots."""

    def __init__(self, capacity: int) -> None:
        self.free = capacity
        self.waiting: collections.deque[Live] = collections.deque()

    def request(self, live: Live) -> None:
        self.waiting.append(live)
        self._grant()

    def withdraw(self, live: Live) -> None:
        """Give up a request (cancelled or timed out while queued), or the slot it was granted."""
        try:
            self.waiting.remove(live)
        except ValueError:
            if live.granted.is_set():
                self.release()

    def take(self) -> None:
        """Take a slot without queueing (an adopted execution is already running)."""
        self.free -= 1

    def release(self) -> None:
        self.free += 1
        self._grant()

    def _grant(self) -> None:
        while self.free > 0 and self.waiting:
            live = self.waiting.popleft()
            self.free -= 1
            live.granted.set()
            live.kick.set()

    @property
    def queued(self) -> int:
        return len(self.waiting)


class Executor:
    """Runs executions: `submit` a committed row, `cancel`, and `shutdown` at the end."""

    def __init__(
        self,
        *,
        settings: Settings,
        journal: Journal,
        db: store.Store,
        supervisor: sandbox.Supervisor,
        inotify: Inotify,
        images: dict[str, Image],
        containment: sandbox.Containment,
        nursery: trio.Nursery,
    ) -> None:
        self.settings = settings
        self.journal = journal
        self.db = db
        self.supervisor = supervisor
        self.inotify = inotify
        self.images = images
        self.containment = containment
        self._nursery = nursery
        self.slots = Slots(settings.max_concurrent_executions)
        self.live: dict[str, Live] = {}
        self.displays = Displays()
        self._tidying = 0
        self._tidied = trio.Event()
        self.accepting = True

    # -- lifecycle of one execution -----------------------------------------------------------

    def submit(self, row: dict[str, Any], live: Live | None = None) -> Live:
        """Start supervising an execution whose row is committed."""
        if live is None:
            live = Live(row["id"], row, S(row["status"]))
        self.live[live.id] = live
        if live.adopted is not None:
            # Already running: it holds a slot from now on (released when it ends).
            self.slots.take()
        elif live.status is S.QUEUED and live.reason is None:
            # Queue now, in submission order: tasks start in no guaranteed order.
            self.slots.request(live)
        self._nursery.start_soon(self._supervise, live, name=f"execution {live.id}")
        return live

    async def _supervise(self, live: Live) -> None:
        try:
            await Run(self, live).supervise()
        finally:
            self.live.pop(live.id, None)

    @property
    def backlog(self) -> int:
        """How many accepted executions wait for a slot (each queues when it is submitted)."""
        return self.slots.queued

    async def cancel(self, execution_id: str, reason: str | None, grace_ms: int) -> None:
        """Ask the supervisor to cancel; returns once the cancel is recorded or the outcome final."""
        live = self.live.get(execution_id)
        if live is None:
            return
        live.request_stop(Stop.CANCEL, reason, grace_ms)
        await live.cancel_handled.wait()

    async def finish(
        self, run: Run, status: S, fields: dict[str, Any], outcome: Outcome, *, force: bool = False
    ) -> None:
        """Publish artifacts, then commit the terminal status (with the exit record if detached)."""
        execution_id = run.live.id
        kept: set[str] = set()
        capture = run.capture
        if capture is not None:
            fields = {**capture.fields(), **fields}
            kept = set(capture.result.kept)
            if kept:
                await self._publish_artifacts(execution_id, run.directory, capture.result.kept)
        exit_builder = self._exit_record_builder(run, status, outcome, fields)

        def also(conn: sqlite3.Connection, sequence: int) -> None:
            exit_builder(conn)

        sequence = await self.journal.transition(
            execution_id,
            status,
            fields=fields,
            message=outcome.error["message"] if outcome.error else None,
            exit_code=outcome.exit_code,
            signal=outcome.signal,
            error=outcome.error,
            also=also,
        )
        if sequence is None and not force:
            log.warning("execution %s: terminal transition to %s refused", execution_id, status)
        run.live.status = status
        self.displays.forget(execution_id)
        held = run.child.name if run.child is not None and run.live.held else None
        # Tidying up (the supervisor's cgroups, the spool files) waits for the waiters: the
        # answer to whoever waits on this execution goes out first.
        self._tidying += 1
        self._nursery.start_soon(self._tidy, execution_id, held, run.directory, kept)

    async def _tidy(self, execution_id: str, held: str | None, directory: Path, kept: set[str]) -> None:
        try:
            await trio.lowlevel.cancel_shielded_checkpoint()
            with trio.CancelScope(shield=True):
                if held is not None:
                    try:
                        await self.supervisor.release(held)
                    except sandbox.SandboxError as exc:
                        log.warning("execution %s: release failed: %s", execution_id, exc)
                await trio.to_thread.run_sync(launch.remove_directory, directory, kept)
        finally:
            self._tidying -= 1
            if not self._tidying:
                self._tidied.set()
                self._tidied = trio.Event()

    async def _publish_artifacts(self, execution_id: str, directory: Path, kept: dict[str, str]) -> None:
        now = now_ms()
        sizes = {name: (directory / name).stat().st_size for name in kept}
        events = [
            (
                "artifact",
                event_builder(
                    "artifact", message=name, stream=name if name in ("stdout", "stderr") else None
                ),
            )
            for name in sorted(kept)
        ]

        def insert(conn: sqlite3.Connection) -> None:
            for name, digest in kept.items():
                store.insert_artifact(
                    conn, execution_id, name, sizes[name], digest, "application/octet-stream", now
                )

        await self.journal.append(execution_id, events, also=insert)

    def _exit_record_builder(
        self, run: Run, status: S, outcome: Outcome, fields: dict[str, Any]
    ) -> Callable[[sqlite3.Connection], None]:
        """The exit saved with the terminal status when the execution is detached (checked in-tx)."""
        row = run.row
        directory = run.directory
        execution_id = run.live.id

        def save(conn: sqlite3.Connection) -> None:
            found = store.detached_metadata(conn, execution_id)
            if found is None:
                return
            # Read only for a detached execution, inside the transaction that decides it.
            tails = {name: _tail(directory / name) for name in ("stdout", "stderr")}
            body = {
                "executionId": execution_id,
                "executionKind": row["kind"],
                "status": status.value,
                "exitCode": outcome.exit_code,
                "signal": outcome.signal,
                "error": outcome.error,
                "metadata": json.loads(found) if found else None,
                "stdoutTail": tails["stdout"],
                "stderrTail": tails["stderr"],
                "finishedAt": format_time(fields.get("finished_at")),
            }
            store.insert_exit(conn, new_delivery_id(), execution_id, row["principal"], body, now_ms())

        return save

    # -- live display past the budget (SSE followers) -------------------------------------------

    def display_sink(self, execution_id: str) -> Callable[[str, bytes | memoryview], None]:
        displays = self.displays

        def publish(stream: str, data: bytes | memoryview) -> None:
            displays.publish(execution_id, stream, data)

        return publish

    # -- shutdown -----------------------------------------------------------------------------

    async def kill_all(self, reason: str) -> None:
        """Stop every live execution (`cancelled`, with `reason`) and wait for them to finish."""
        lives = list(self.live.values())
        for live in lives:
            live.request_stop(Stop.SHUTDOWN, reason, 0)
        for live in lives:
            await live.done.wait()
        while self._tidying:
            await self._tidied.wait()


def _tail(path: Path) -> str:
    """The last EXIT_TAIL_BYTES of a file as text, starting on a UTF-8 character boundary."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - EXIT_TAIL_BYTES))
            data = f.read(EXIT_TAIL_BYTES)
    except OSError:
        return ""
    start = 0
    if size > EXIT_TAIL_BYTES:
        # Skip continuation bytes so the tail does not begin inside a character.
        while start < min(4, len(data)) and (data[start] & 0xC0) == 0x80:
            start += 1
    return data[start:].decode("utf-8", errors="replace")
