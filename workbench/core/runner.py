"""One execution's supervisor task: wait for a slot, spawn, capture, stop, finish.

Exactly one task supervises a live execution, and only it moves the execution out of `queued`
or `running` (a cancel is a request to it, answered once recorded). So an exit racing a cancel
ends in one terminal status, written after every output event, under a cancel shield.
"""

from __future__ import annotations

import json
import logging
import signal as signals
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import trio

import sandbox
from workbench.core import launch, services, warm
from workbench.core.capture import Capture
from workbench.core.finish import Ending, finish
from workbench.core.live import ADOPTED, Live, Outcome, RunContext, Stop
from workbench.core.output import OutputCapture
from workbench.core.records import now_ms
from workbench.core.store.base import Pending
from workbench.core.waiting import first_of
from workbench.wire.errors import Unavailable
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.runner")


class Run:
    """Supervises one execution from `queued` (or adoption) to its terminal status."""

    def __init__(self, ctx: RunContext, live: Live) -> None:
        self.ex = ctx
        self.live = live
        self.row = live.row
        self.directory = ctx.settings.layout.execution(live.id)
        deadline_in = (self.row.deadline_at - now_ms()) / 1000
        self.deadline = trio.current_time() + deadline_in
        self.child: sandbox.ChildInfo | None = None
        self.exit_status: sandbox.ExitStatus | None = None
        self.empty = False
        self.capture: Capture | None = None
        self.idle_fired = False
        #: The `running` transition of a spawn made here, until it is known to be committed.
        self.claim: Pending[int | None] | None = None
        self.claim_lost = False
        #: Set by the supervisor's callback once the leader's exit is known (`_exit_known`).
        self.exit_known = False
        #: When the tree was seen dead (ms): its `finishedAt`, however long its output and outcome
        #: then take to be committed (a full disk holds them until space is back).
        self.ended_ms: int | None = None

    async def supervise(self) -> None:
        """The whole life; never raises (a bug ends the execution `failed`, tree killed)."""
        try:
            if self.live.adopted is not None or self.live.status is not S.QUEUED:
                await self._adopted()
            elif await self._queued():
                await self._running()
        except trio.Cancelled:
            raise  # daemon stopping with executions kept: the next start adopts them
        except Exception as exc:
            log.exception("execution %s: supervisor failed", self.live.id)
            with trio.CancelScope(shield=True):
                await self._fail_internal(exc)
        finally:
            self.live.cancel_handled.set()
            self.live.done.set()

    async def _finish(
        self, status: S, fields: dict[str, Any], outcome: Outcome, *, force: bool = False
    ) -> None:
        """The terminal status (see `finish`); the caller holds a cancel shield."""
        held = self.child.name if self.child is not None and self.live.held else None
        ending = Ending(self.live, self.directory, self.capture, held)
        await finish(self.ex, ending, status, fields, outcome, force=force, owner=self.row.node_id)

    # -- queued ---------------------------------------------------------------------------

    async def _queued(self) -> bool:
        """Wait for a slot; True once spawned and `running`, False if it ended while queued."""
        live = self.live
        with trio.move_on_at(self.deadline) as timer:
            if not (live.granted.is_set() or live.kick.is_set()):
                await first_of(live.granted.wait, live.kick.wait)
        # A deadline that passed before the wait began (a restart, a late slot) still counts.
        expired = timer.cancelled_caught or trio.current_time() >= self.deadline
        if live.stop is not None or expired:
            self.ex.item_ended(live, S.CANCELLED if live.stop is not None else S.TIMED_OUT)
            self.ex.slots.withdraw(live)
            with trio.CancelScope(shield=True):
                if live.stop is not None:
                    await self._finish_queued(S.CANCELLED, None, live.reason)
                else:
                    timeout = self.row.timeout_ms
                    error = {
                        "code": "timeout",
                        "message": f"the deadline of {timeout} ms passed while queued",
                    }
                    await self._finish_queued(S.TIMED_OUT, error, None)
            return False
        try:
            return await self._spawn()
        except BaseException:
            if self.child is None:
                self.ex.slots.release(self.live)
            raise

    async def _finish_queued(self, status: S, error: dict[str, str] | None, reason: str | None) -> None:
        fields = {"finished_at": now_ms(), "cancel_reason": reason}
        if error is not None:
            fields |= {"error_code": error["code"], "error_message": error["message"]}
        await self._finish(status, fields, Outcome(status, error=error))

    async def _spawn(self) -> bool:
        image = self.ex.images[self.row.image]
        spec = None
        began = time.perf_counter()
        try:
            layout = self.ex.settings.layout
            if launch.only_a_directory(self.row, image, layout):
                # One mkdir (tens of µs): less than the two thread switches that would move it off
                # the event loop, which under load cost milliseconds each.
                launch.prepare_directory(self.row, image, layout)
            else:
                # More file-system work (stdin, a code file, a first workspace): off the event loop.
                await trio.to_thread.run_sync(launch.prepare_directory, self.row, image, layout)
            # A tokens file and a Unix socket kept outside the data dir are hidden from sandboxed
            # executions too (the socket is a way into the API for anyone holding a token).
            settings = self.ex.settings
            hide = [p for p in (settings.tokens_file, settings.unix_socket) if p is not None]
            spec = launch.spawn_spec(self.row, image, self.ex.settings.layout, self.ex.containment, hide=hide)
            can_be_warm = warm.can_be_warm(self.row, image)
            box = launch.warm_box(self.row, image, layout, hide) if can_be_warm and image.sandboxed else None
            self.child = await self.ex.warm.start(
                spec, can_be_warm and (box is not None or not image.sandboxed), box
            )
            self.ex.observe.spawn(time.perf_counter() - began)
            if self.row.secret_env_names_json:
                # In the tree's environment now: not a moment longer on disk than needed.
                self.directory.secret_env.unlink(missing_ok=True)
        except (sandbox.SpawnError, OSError) as exc:
            self.ex.item_ended(self.live, S.FAILED)
            self.ex.slots.release(self.live)
            message = exc.args[0] if isinstance(exc, sandbox.SpawnError) else str(exc)
            error = {"code": "spawn_failed", "message": f"could not start: {message}"}
            with trio.CancelScope(shield=True):
                await self._finish(
                    S.FAILED,
                    {"finished_at": now_ms(), "error_code": error["code"], "error_message": error["message"]},
                    Outcome(S.FAILED, error=error),
                )
            return False
        # Queued, not awaited: it commits before anything this execution writes later (lazily:
        # in the same transaction, one fsync, as the end of a short command), and a crash before
        # it commits is recovered from the supervisor's proc file.
        self.claim = self.ex.journal.begin_transition(
            self.live.id,
            S.RUNNING,
            fields={
                "started_at": now_ms(),
                "containment": self.child.containment.value,
                "child_json": json.dumps(self.child.to_dict()),
                # A persistent shell starts where the last one of its session left off.
                **({"cwd": spec.cwd} if self.row.persist_shell else {}),
            },
            lazy=True,
            # Refused if another node took the claim while this one was cut off (its lease
            # lapsed between the claim and this commit): that node runs it, not this one.
            owner=self.row.node_id,
        )
        self.live.status = S.RUNNING
        self.live.child = self.child.name
        return True

    # -- running --------------------------------------------------------------------------

    def _new_capture(self, offsets: dict[str, int] | None = None) -> Capture:
        row = self.row
        if offsets is None:
            output = OutputCapture(
                delta_max_bytes=self.ex.settings.execution_event_delta_max_bytes,
                budget_bytes=row.budget_bytes,
            )
        else:
            output = OutputCapture.resume(
                delta_max_bytes=self.ex.settings.execution_event_delta_max_bytes,
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
            flush_ms=self.ex.settings.output_flush_ms,
            offsets=offsets,
            progress_offset=row.progress_offset,
            on_display=partial(self.ex.displays.publish, self.live.id),
            hold=not (row.open_stdin or row.tty_json is not None or row.service),
        )

    async def _running(self, offsets: dict[str, int] | None = None) -> None:
        assert self.child is not None
        self.capture = self.live.capture = capture = self._new_capture(offsets)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(capture.run)
                async with trio.open_nursery() as watchers:
                    if self.row.service:
                        services.watch(self, watchers)  # its end is its tree's, not its leader's
                    elif self.live.held:
                        # A callback, not a task awaiting the exit: tasks cost the event loop.
                        self.ex.supervisor.when_exited(self.child.name, self._exit_known)
                    if self.row.idle_timeout_ms:
                        watchers.start_soon(self._watch_idle, self.row.idle_timeout_ms / 1000)
                    if self.claim is not None and self.ex.settings.store_url is not None:
                        # Only a shared store's claim can be lost (to another node).
                        watchers.start_soon(watch_claim, self.claim, self._claim_lost)
                    why = await self._wait_stop()
                    with trio.CancelScope(shield=True):
                        await self._stop_tree(why)
                    self.ended_ms = now_ms()
                    watchers.cancel_scope.cancel()
                # The tree is dead: whatever is in the spool files now is all there will be.
                capture.finish()
        except BaseException:
            self.ex.slots.release(self.live)
            raise
        if why is Stop.CLAIM_LOST:
            self.ex.slots.release(self.live)
            self._disown()
            return
        final = self._final(why)
        # Said before the slot goes back: a `failFast` batch stops its other items first.
        self.ex.item_ended(self.live, final[0])
        self.ex.slots.release(self.live)
        with trio.CancelScope(shield=True):
            await self._finish(*final)

    def _claim_lost(self) -> None:
        self.claim_lost = True
        self.live.kick.set()

    def _disown(self) -> None:
        """The tree is dead and nothing of it was written: the execution is another node's."""
        assert self.child is not None
        log.warning(
            "execution %s: another node took its claim while this one was cut off: "
            "its tree here was killed, and nothing of it recorded",
            self.live.id,
        )
        self.ex.journal.forget(self.live.id)
        self.ex.displays.forget(self.live.id)
        self.ex.tidy(self.live.id, self.child.name, set())

    def _exit_known(self) -> None:
        """The supervisor learnt the leader's exit (or lost the shim): `_wait_stop` reads it."""
        self.exit_known = True
        self.live.kick.set()

    async def _watch_idle(self, idle_s: float) -> None:
        assert self.capture is not None
        while True:
            seen = self.capture.last_output
            await trio.sleep_until(seen + idle_s)
            if self.capture.last_output == seen:
                self.idle_fired = True
                self.live.kick.set()
                return

    async def _wait_stop(self) -> Stop:
        live = self.live
        with trio.move_on_at(self.deadline):
            while True:
                if self.claim_lost:  # not this node's to run, whatever its tree did meanwhile
                    return Stop.CLAIM_LOST
                if self.exit_known and self.exit_status is None and self.child is not None:
                    # Read, not awaited (or SupervisorLost, as the shim was lost first): a
                    # checkpoint here would let the deadline turn an exit learnt before it into
                    # a timeout.
                    self.exit_status = self.ex.supervisor.exit_status(self.child.name)
                # An exit already seen wins over a stop asked for after it: the outcome stands.
                if self.exit_status is not None:
                    return Stop.EXITED
                if live.stop is not None:
                    return live.stop
                if self.idle_fired:
                    return Stop.IDLE
                await live.kick.wait()
                live.kick = trio.Event()
        return Stop.TIMEOUT

    async def _stop_tree(self, why: Stop) -> None:
        """Make sure nothing of the tree is alive; for a requested stop, record it first."""
        assert self.child is not None
        sup, name, live = self.ex.supervisor, self.child.name, self.live
        if why in (Stop.CANCEL, Stop.SHUTDOWN):
            await self.ex.journal.transition(
                live.id,
                S.CANCEL_REQUESTED,
                fields={"cancel_reason": live.reason},
                message=live.reason,
                owner=self.row.node_id,
            )
            live.status = S.CANCEL_REQUESTED
            live.cancel_handled.set()
        if why is Stop.EXITED and (not live.held or self._empty(name)):
            return
        else:
            grace = live.grace_ms / 1000 if why is Stop.CANCEL else 0.0
            if why in (Stop.TIMEOUT, Stop.IDLE, Stop.NOT_READY):
                grace = self.ex.settings.deadline_grace_ms / 1000
            if grace > 0:
                await sup.signal(name, signals.SIGTERM)
                with trio.move_on_after(grace):
                    await sup.wait_empty(name)
        await sup.signal(name, signals.SIGKILL)
        await sup.wait_empty(name)
        if self.exit_status is None:
            self.exit_status = await sup.wait_exited(name)

    def _empty(self, name: str) -> bool:
        """Whether nothing of the tree is alive (known at once when the leader's exit was reported)."""
        known = self.ex.supervisor.known().get(name)
        return known is not None and known.empty

    def _final(self, why: Stop) -> tuple[S, dict[str, Any], Outcome]:
        status = self.exit_status
        code = status.exit_code if status is not None else None
        sig = _signal_name(status.signal) if status is not None and status.signal else None
        ended = self.ended_ms if self.ended_ms is not None else now_ms()
        fields: dict[str, Any] = {"finished_at": ended, "exit_code": code, "signal": sig}
        if status is not None:
            fields |= {
                "cpu_user_ms": status.cpu_user_ms,
                "cpu_system_ms": status.cpu_system_ms,
                "peak_memory_bytes": status.memory_peak_bytes,
            }
        error: dict[str, str] | None = None
        if why is Stop.EXITED:
            if status is None or not status.known:
                target = S.FAILED
                error = {
                    "code": "lost",
                    "message": "the exit status could not be learned: the process supervisor that "
                    "was its parent died while it ran",
                }
            elif status.limit:
                target = S.FAILED
                error = {"code": status.limit, "message": _LIMIT_MESSAGES.get(status.limit, status.limit)}
            elif status.signal:
                target = S.FAILED
                error = {"code": "signal", "message": f"killed by {sig}"}
            else:
                target = S.COMPLETED if code == 0 else S.FAILED
        elif why in (Stop.CANCEL, Stop.SHUTDOWN):
            target = S.CANCELLED
        elif why is Stop.NOT_READY:
            target = S.TIMED_OUT
            error = {"code": "ready_timeout", "message": self.live.reason or "not ready in time"}
        elif why is Stop.IDLE:
            target = S.TIMED_OUT
            error = {
                "code": "idle_timeout",
                "message": f"no output for {self.row.idle_timeout_ms} ms; the tree was killed",
            }
        else:
            target = S.TIMED_OUT
            error = {"code": "timeout", "message": f"the deadline of {self.row.timeout_ms} ms passed"}
        if error is not None:
            fields |= {"error_code": error["code"], "error_message": error["message"]}
        return target, fields, Outcome(target, code, sig, error)

    # -- recovery -------------------------------------------------------------------------

    async def _adopted(self) -> None:
        """Carry on with an execution a previous daemon started (see `recovery`)."""
        live, row = self.live, self.row
        self.child = live.adopted
        self.exit_status = live.adopted_exit
        offsets = {"stdout": row.stdout_offset, "stderr": row.stderr_offset}
        if self.child is None:
            with trio.CancelScope(shield=True):
                await self._finish(S.FAILED, *self._lost(live.reason or "the process tree was gone"))
            return
        if live.status is S.QUEUED:
            # Spawned just before the previous daemon died, never recorded as running.
            await self.ex.journal.transition(
                live.id,
                S.RUNNING,
                message=ADOPTED,
                owner=self.row.node_id,
                fields={
                    "started_at": now_ms(),
                    "containment": self.child.containment.value,
                    "child_json": json.dumps(self.child.to_dict()),
                },
            )
            live.status = S.RUNNING
        live.child = self.child.name
        if live.status is S.CANCEL_REQUESTED and live.stop is None:
            live.request_stop(Stop.CANCEL, row.cancel_reason, 0)
        await self._running(offsets)

    def _lost(self, why: str) -> tuple[dict[str, Any], Outcome]:
        error = {"code": "lost", "message": why}
        fields = {"finished_at": now_ms(), "error_code": "lost", "error_message": why}
        return fields, Outcome(S.FAILED, error=error)

    async def _fail_internal(self, exc: Exception) -> None:
        if self.child is not None:
            try:
                await self.ex.supervisor.signal(self.child.name, signals.SIGKILL)
                with trio.move_on_after(5):
                    await self.ex.supervisor.wait_empty(self.child.name)
            except Exception:
                log.exception("execution %s: could not kill the tree after a failure", self.live.id)
        error = {"code": "internal", "message": f"the daemon failed supervising this execution: {exc}"}
        fields = {"finished_at": now_ms(), "error_code": "internal", "error_message": error["message"]}
        await self._finish(S.FAILED, fields, Outcome(S.FAILED, error=error), force=True)


_LIMIT_MESSAGES = {
    "oom": "killed: the execution ran out of its memory limit",
    "cpu_limit": "killed: the execution used up its CPU seconds limit",
    "file_size_limit": "killed: the execution wrote a file larger than its file size limit",
}


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"SIG{number}"


async def watch_claim(claim: Pending[int | None], lost: Callable[[], None]) -> None:
    """Call `lost` if the `running` transition `claim` is refused (another node holds it)."""
    await claim.wait()  # not shielded: cancelled once the tree is dead, before its end is written
    try:
        committed = await claim.result()
    except Unavailable:
        return  # not committed yet: the terminal status writes it first (`Journal.transition`)
    if committed is None:
        lost()
