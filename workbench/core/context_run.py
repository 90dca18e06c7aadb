"""One execution in a code context: its supervisor task, from `queued` to its terminal status.

Like `runner.Run` for a tree of its own, exactly one task moves the execution, and its end goes
through `finish` under a cancel shield. It waits for its context's turn (one execution of a
context at a time, in order), hands the driver the code with the execution's own stdout and
stderr spool files as the cell's fds 1 and 2 (python; node's driver opens them by path) so that
output, budget, artifacts and resume are those of any execution, and waits for the driver's
reply. A cancel or a deadline interrupts the cell (KeyboardInterrupt); one that does not stop in
2 s has its context killed.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from functools import partial
from typing import Any

import trio

from workbench.core.capture import Capture
from workbench.core.context_link import LinkClosed
from workbench.core.context_state import Context, Holder
from workbench.core.finish import Ending, finish
from workbench.core.live import ADOPTED, ENDED_MEANWHILE, Live, Outcome, Stop, journal_adoption
from workbench.core.output import OutputCapture
from workbench.core.records import escaped, now_ms
from workbench.core.waiting import first_of
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.context_run")

#: How long an interrupted execution has to stop before its context is killed.
INTERRUPT_GRACE_S = 2.0
#: The languages whose driver is given its cell's spool files by path (see `_send`).
PASSED_BY_PATH = frozenset({"node"})
_SPOOL_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC


class ContextRun:
    """Supervises one execution of a context."""

    def __init__(self, contexts: Holder, context: Context | None, live: Live, *, resume: bool) -> None:
        self.contexts = contexts
        self.ex = contexts.ex
        self.context = context
        self.live = live
        self.row = live.row
        self.resume = resume
        self.turn = trio.Event()
        self.directory = self.ex.settings.layout.execution(live.id)
        self.deadline = trio.current_time() + (self.row.deadline_at - now_ms()) / 1000
        self.capture: Capture | None = None
        #: Its place in the slots (`live.Slots`) was given back.
        self.slot_gone = False
        #: What the cell used, as its driver measured it (its usage columns; none without a reply).
        self.usage: dict[str, int | None] = {}

    async def supervise(self) -> None:
        """The whole life; never raises (a bug ends the execution `failed`)."""
        try:
            if self.context is None:
                await self._end_dead("its context is gone")
            elif self.resume:
                await self._resumed(self.context)
            elif await self._wait_turn(self.context) and await self._wait_slot(self.context):
                await self._run(self.context)
        except trio.Cancelled:
            raise  # the daemon stops and keeps what runs: the next start takes it back
        except Exception as exc:
            log.exception("execution %s: supervisor failed", self.live.id)
            with trio.CancelScope(shield=True):
                error = {
                    "code": "internal",
                    "message": f"the daemon failed supervising this execution: {exc}",
                }
                await self._end(S.FAILED, error=error)
        finally:
            self._slot_back()
            if self.context is not None:
                self.context.release(self)
            self.live.cancel_handled.set()
            self.live.done.set()

    # -- queued ----------------------------------------------------------------------------

    async def _wait_turn(self, context: Context) -> bool:
        return await self._wait(context, self.turn)

    async def _wait_slot(self, context: Context) -> bool:
        """Its turn come, a slot of its principal's `maxConcurrent` (none of the daemon's)."""
        self.ex.slots.request(self.live)
        return await self._wait(context, self.live.granted)

    def _slot_back(self) -> None:
        """Give back its slot, its request or its place among the waiting (`Contexts.submit`)."""
        if not self.slot_gone:
            self.slot_gone = True
            self.ex.slots.withdraw(self.live)

    async def _wait(self, context: Context, got: trio.Event) -> bool:
        """Until `got` is set; False once it ended without (cancelled, its deadline, its context dead)."""
        live = self.live
        with trio.move_on_at(self.deadline):
            while not got.is_set() and live.stop is None and not context.info.dead:
                await _first(got.wait, live.kick.wait, context.dead.wait)
                live.kick = trio.Event()
        with trio.CancelScope(shield=True):
            if live.stop is not None:
                await self._end(S.CANCELLED, reason=live.reason)
                return False
            if context.info.dead:
                await self._end_dead(context.info.reason or "its context is dead")
                return False
            if not got.is_set() or trio.current_time() >= self.deadline:
                error = {
                    "code": "timeout",
                    "message": f"the deadline of {self.row.timeout_ms} ms passed while queued",
                }
                await self._end(S.TIMED_OUT, error=error)
                return False
        return True

    # -- running ---------------------------------------------------------------------------

    async def _run(self, context: Context) -> None:
        # On the event loop: a mkdir and two opens cost less than the hop to a worker thread.
        fds = self._open_spools()
        try:
            if context.link is None or context.info.dead:
                with trio.CancelScope(shield=True):
                    await self._end_dead(context.info.reason or "its interpreter is not connected")
                return
            # Queued, not awaited, and lazily: a short cell's `running` shares its end's commit.
            # A crash before it commits leaves it `queued`; its driver then says it has it.
            self.ex.journal.begin_transition(
                self.live.id,
                S.RUNNING,
                fields={"started_at": now_ms(), "containment": self.ex.containment.value},
                lazy=True,
            )
            self.live.status = S.RUNNING
            await self._follow(context, fds)
        finally:
            for fd in fds:
                os.close(fd)

    def _open_spools(self) -> list[int]:
        self.directory.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return [os.open(self.directory.spool(name), _SPOOL_FLAGS, 0o600) for name in ("stdout", "stderr")]

    async def _resumed(self, context: Context) -> None:
        """After a daemon restart: the cell still runs in the driver, or its reply is kept."""
        hello = context.hello or {}
        if context.info.dead:
            await self._end_dead(context.info.reason or "its interpreter ended")
            return
        if hello.get("busy") != self.live.id and self.live.id not in context.replies:
            with trio.CancelScope(shield=True):
                await self._end(
                    S.FAILED,
                    error={
                        "code": "lost",
                        "message": "lost: its context no longer knew it after a daemon restart",
                    },
                )
            return
        if self.live.status is S.QUEUED:
            # Handed over just before the previous daemon died, never recorded as running.
            await self.ex.journal.transition(
                self.live.id,
                S.RUNNING,
                message=ADOPTED,
                fields={"started_at": now_ms(), "containment": self.ex.containment.value},
            )
            self.live.status = S.RUNNING
        else:
            # Its driver still runs it, or kept its reply: it ended while no daemon was there.
            note = ADOPTED if hello.get("busy") == self.live.id else ENDED_MEANWHILE
            await journal_adoption(self.ex.journal, self.live.id, note)
        offsets = {"stdout": self.row.stdout_offset, "stderr": self.row.stderr_offset}
        if self.live.status is S.CANCEL_REQUESTED and self.live.stop is None:
            self.live.request_stop(Stop.CANCEL, self.row.cancel_reason, 0)
        await self._follow(context, None, offsets)

    async def _follow(
        self, context: Context, fds: list[int] | None, offsets: dict[str, int] | None = None
    ) -> None:
        self.capture = capture = self._new_capture(offsets)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(capture.run)
            why: Stop | None = None
            try:
                if fds is not None:
                    await self._send(context, fds)
                why = await self._wait_reply(context)
            except LinkClosed as exc:
                with trio.CancelScope(shield=True):
                    await self.contexts.kill(context, f"its channel broke: {exc}")
            finally:
                self._unlink_spools(context)
            with trio.CancelScope(shield=True):
                if why is not None:
                    await self._stop(context, why)
            capture.finish()
        with trio.CancelScope(shield=True):
            await self._final(context, why)

    async def _send(self, context: Context, fds: list[int]) -> None:
        """Hand the driver the cell: the spool files go with it as fds (python), or as hard links
        in the context's channel directory, which its driver opens and removes (node, which
        cannot receive fds on a socket)."""
        assert context.link is not None
        message = {"op": "run", "id": self.live.id, "code": self.row.code or ""}
        if context.info.language in PASSED_BY_PATH:
            image = self.ex.images.get(context.info.image)
            for name, link in self._spool_links(context).items():
                spool = self.directory.spool(name)
                if image is not None and image.sandboxed:
                    # The driver opens it as the sandbox's user (where it has one).
                    self.ex.settings.layout.give(spool)
                os.link(spool, link)
                message[name] = link
            await context.link.send(message)
        else:
            await context.link.send(message, fds)
        for fd in fds:
            os.close(fd)
        fds.clear()

    def _spool_links(self, context: Context) -> dict[str, str]:
        chan = _real_path(str(context.socket.parent))
        return {name: os.path.join(chan, f"{self.live.id}.{name}") for name in ("stdout", "stderr")}

    def _unlink_spools(self, context: Context) -> None:
        if context.info.language in PASSED_BY_PATH:
            for link in self._spool_links(context).values():
                try:
                    os.unlink(link)
                except FileNotFoundError:
                    pass  # the driver took it, as it should

    async def _wait_reply(self, context: Context) -> Stop | None:
        """None once the driver replied (or the context died); else why it must be stopped."""
        live = self.live
        with trio.move_on_at(self.deadline):
            while True:
                if live.id in context.replies or context.info.dead:
                    return None
                if live.stop is not None:
                    return live.stop
                await _first(context.changed.wait, live.kick.wait)
                live.kick = trio.Event()
        return Stop.TIMEOUT

    async def _stop(self, context: Context, why: Stop) -> None:
        """Interrupt the cell; kill the context if it does not stop in time."""
        live = self.live
        if why in (Stop.CANCEL, Stop.SHUTDOWN):
            await self.ex.journal.transition(
                live.id, S.CANCEL_REQUESTED, fields={"cancel_reason": live.reason}, message=live.reason
            )
            live.status = S.CANCEL_REQUESTED
            live.cancel_handled.set()
        await self.contexts.interrupt(context, live.id)
        with trio.move_on_after(INTERRUPT_GRACE_S):
            while live.id not in context.replies and not context.info.dead:
                await context.changed.wait()
        if live.id not in context.replies and not context.info.dead:
            await self.contexts.kill(
                context, f"execution {live.id} did not stop within {INTERRUPT_GRACE_S:.0f} s of an interrupt"
            )

    # -- the end ---------------------------------------------------------------------------

    async def _final(self, context: Context, why: Stop | None) -> None:
        reply = context.replies.pop(self.live.id, None)
        self.contexts.used(context)
        # Its interpreter is idle (it replied) or dead: the turn goes back before the end is
        # committed, so that whoever learns of the end finds the context `ready`.
        context.release(self)
        self.usage = _usage(reply)
        # A stop applied before its reply came ends it so, however the cell ended: one that
        # caught the KeyboardInterrupt and went on is cancelled all the same (as a tree that took
        # the signal and exited 0), its output kept and its value only in the interpreter's `_`.
        if why is not None:
            if why is Stop.TIMEOUT:
                error = {"code": "timeout", "message": f"the deadline of {self.row.timeout_ms} ms passed"}
                await self._end(S.TIMED_OUT, error=error)
            else:
                await self._end(S.CANCELLED, reason=self.live.reason)
            return
        if reply is None:
            await self._end_dead(context.info.reason or "its interpreter died")
            return
        raised = reply.get("error")
        if isinstance(raised, dict):
            error = {
                "code": "exception",
                "message": escaped(raised.get("message", "")),
                "traceback": escaped(raised.get("traceback", "")),
            }
            await self._end(S.FAILED, error=error, exit_code=1)
            return
        result = reply.get("result")
        shown = escaped(result) if isinstance(result, str) else None
        fields = {"result_json": json.dumps({"text/plain": shown}) if shown is not None else None}
        await self._end(S.COMPLETED, exit_code=0, fields=fields)

    async def _end_dead(self, why: str) -> None:
        with trio.CancelScope(shield=True):
            await self._end(
                S.FAILED, error={"code": "context_dead", "message": f"its context is dead: {why}"}
            )

    async def _end(
        self,
        status: S,
        *,
        error: dict[str, str] | None = None,
        reason: str | None = None,
        exit_code: int | None = None,
        fields: dict[str, Any] | None = None,
    ) -> None:
        self._slot_back()  # before the end is committed, as a command's
        values: dict[str, Any] = {
            "finished_at": now_ms(),
            "exit_code": exit_code,
            **self.usage,
            **(fields or {}),
        }
        if reason is not None:
            values["cancel_reason"] = reason
        if error is not None:
            values |= {
                "error_code": error["code"],
                "error_message": error["message"],
                "error_traceback": error.get("traceback"),
            }
        ending = Ending(self.live, self.directory, self.capture, None)
        await finish(self.ex, ending, status, values, Outcome(status, exit_code, None, error))

    def _new_capture(self, offsets: dict[str, int] | None) -> Capture:
        row, settings = self.row, self.ex.settings
        if offsets is None:
            output = OutputCapture(
                delta_max_bytes=settings.execution_event_delta_max_bytes, budget_bytes=row.budget_bytes
            )
        else:
            output = OutputCapture.resume(
                delta_max_bytes=settings.execution_event_delta_max_bytes,
                budget_bytes=row.budget_bytes,
                offsets={"stdout": offsets["stdout"], "stderr": offsets["stderr"]},
                truncated=row.truncated,
                invalid_utf8={"stdout": row.stdout_invalid, "stderr": row.stderr_invalid},
            )
        return Capture(
            journal=self.ex.journal,
            inotify=self.ex.inotify,
            execution_id=self.live.id,
            directory=self.directory,
            output=output,
            flush_ms=settings.output_flush_ms,
            offsets=offsets,
            progress_offset=row.progress_offset,
            on_display=partial(self.ex.displays.publish, self.live.id),
        )


def _usage(reply: dict[str, Any] | None) -> dict[str, int | None]:
    """The usage columns of a cell from its driver's reply (each null where it could not tell)."""
    said = (reply or {}).get("usage")
    said = said if isinstance(said, dict) else {}

    def number(key: str) -> int | None:
        value = said.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    return {
        "cpu_user_ms": number("cpuUserMs"),
        "cpu_system_ms": number("cpuSystemMs"),
        "peak_memory_bytes": number("peakMemoryBytes"),
    }


@functools.lru_cache(maxsize=1024)
def _real_path(path: str) -> str:
    """A context's channel directory as its interpreter sees it (a sandboxed one has it bound at
    its real path); it does not move in the context's life."""
    return os.path.realpath(path)


async def _first(*waits: Any) -> None:
    await first_of(*waits)
