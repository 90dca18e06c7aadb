"""The service: every operation of the API, for a principal, with its checks. Handlers call one each.

Accepting an execution is one transaction (the row and its first event, or the existing row of
an idempotency key); everything slow happens later in the execution's supervisor task.
"""

from __future__ import annotations

import signal as signals
from collections.abc import Callable
from dataclasses import dataclass, replace

import trio

from workbench.core import accept, inputs
from workbench.core.batches import batch_rows
from workbench.core.cluster import Cluster
from workbench.core.deletes import Deletes
from workbench.core.executor import Executor
from workbench.core.journal import Journal
from workbench.core.principals import ADMIN as ADMIN
from workbench.core.principals import Principal as Principal
from workbench.core.reading import Change as Change
from workbench.core.reading import EventsPage as EventsPage
from workbench.core.reading import Reads
from workbench.core.reading import StreamPage as StreamPage
from workbench.core.records import event_builder, execution_from, execution_from_row
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow, Found, Store
from workbench.wire.errors import (
    Conflict,
    IdempotencyKeyReused,
    InvalidRequest,
    TooManyExecutions,
    Unavailable,
)
from workbench.wire.models import (
    Execution,
    ExecutionKind,
    Preview,
    StartBashRequest,
    StartCodeRequest,
    StartRequest,
)
from workbench.wire.starts import BatchRequest, RerunRequest
from workbench.wire.status import ExecutionStatus


@dataclass(frozen=True)
class Started:
    execution: Execution
    replayed: bool
    wait_ms: int | None  # how long a foreground start waits; None for background


class Service(Reads):
    """The operations of the API (those that read are `Reads`')."""

    def __init__(self, *, settings: Settings, store: Store, journal: Journal, executor: Executor) -> None:
        self.settings = settings
        self.store = store
        self.journal = journal
        self.executor = executor
        #: Set when the daemon begins to stop: long-polls return what they have.
        self.stopping = trio.Event()
        #: This node's part in a shared store (None: the store is this daemon's alone).
        self.cluster: Cluster | None = None
        #: Deleting ended executions, files first (also the bulk deletes').
        self.deletes = Deletes(settings.layout, store)

    # -- start -------------------------------------------------------------------------------

    async def start(self, principal: Principal, req: StartRequest, idempotency_key: str | None) -> Started:
        """Accept an execution (or find the one this idempotency key already made)."""
        kind: ExecutionKind = "workbench_bash" if isinstance(req, StartBashRequest) else "workbench_code"
        request_hash = accept.request_hash(kind, req.model_dump(mode="json", by_alias=True))
        wait_ms = None if req.background else self._wait_ms(req.wait_timeout_ms)
        assert isinstance(req, StartBashRequest | StartCodeRequest)

        def build() -> list[tuple[ExecutionRow, dict[str, str]]]:
            if isinstance(req, StartCodeRequest) and req.context_id is not None:
                return [(self._in_context(principal, req, idempotency_key, request_hash), {})]
            row = accept.new_row(
                self.settings, self.executor.images, principal, req, idempotency_key, request_hash
            )
            return [(row, req.secret_env)]

        return await self._accept(principal, idempotency_key, request_hash, wait_ms, build)

    def _in_context(
        self, principal: Principal, req: StartCodeRequest, idempotency_key: str | None, request_hash: str
    ) -> ExecutionRow:
        """The row of an execution in a code context: the context's image, session and cwd."""
        context = self.executor.contexts.for_start(principal, req)
        info = context.info
        spec = req.model_copy(update={"image": info.image, "session_id": info.session_id})
        row = accept.new_row(
            self.settings, self.executor.images, principal, spec, idempotency_key, request_hash
        )
        return replace(row, cwd=info.cwd, context_id=info.id)

    async def start_batch(
        self, principal: Principal, req: BatchRequest, idempotency_key: str | None
    ) -> Started:
        """Accept a batch and all its items in one transaction (or find what the key made)."""
        request_hash = accept.request_hash("batch", req.model_dump(mode="json", by_alias=True))
        wait_ms = None if req.background else self._wait_ms(req.wait_timeout_ms)

        def build() -> list[tuple[ExecutionRow, dict[str, str]]]:
            return batch_rows(
                self.settings, self.executor.images, principal, req, idempotency_key, request_hash
            )

        return await self._accept(principal, idempotency_key, request_hash, wait_ms, build)

    async def rerun(
        self,
        principal: Principal,
        execution_id: str,
        kind: str | None,
        req: RerunRequest,
        idempotency_key: str | None,
    ) -> Started:
        """A new execution of the same spec as `execution_id` (its stdin too), with `req`'s
        fields in place of the original's; `rerunOf` names the original."""
        original = (await self._found(principal, execution_id, kind)).row
        spec = accept.rerun_spec(original, req)
        body = req.model_dump(mode="json", by_alias=True, exclude_unset=True)
        request_hash = accept.request_hash(f"rerun {original.id}", body)
        wait_ms = None if req.background else self._wait_ms(req.wait_timeout_ms)

        def build() -> list[tuple[ExecutionRow, dict[str, str]]]:
            row = accept.new_row(
                self.settings,
                self.executor.images,
                principal,
                spec,
                idempotency_key,
                request_hash,
                rerun_of=original.id,
            )
            return [(row, spec.secret_env)]

        message = f"rerun of {original.id}"
        return await self._accept(principal, idempotency_key, request_hash, wait_ms, build, message)

    async def _accept(
        self,
        principal: Principal,
        idempotency_key: str | None,
        request_hash: str,
        wait_ms: int | None,
        build: Callable[[], list[tuple[ExecutionRow, dict[str, str]]]],
        message: str | None = None,
    ) -> Started:
        """Check and commit the rows `build` makes (an execution, or a batch and its items)."""
        try:
            if not self.executor.accepting:
                raise Unavailable("the daemon is shutting down")
            # A full disk (or a store that cannot commit) refuses new work at once, so that
            # what runs can still be recorded; reads and replays go on.
            self.store.health.check_accepting()
            rows = build()
            head = rows[0][0]
            shared = None
            room = self._room(principal, head)
            if self.cluster is not None and room < len(rows):
                shared = await self.cluster.queue_depth(principal)
            count = max(1, len(rows) - 1)
            accept.check_room(self.settings, self.executor.slots, principal, count, shared, room=room)
        except (InvalidRequest, TooManyExecutions, Unavailable):
            # A retry of an accepted request replays it even if it could not be accepted now
            # (its cwd is gone, the queue is full, the daemon is stopping).
            if idempotency_key is not None:
                existing = await self.store.find_by_idempotency_key(principal.name, idempotency_key)
                if existing is not None:
                    return await self._replay(existing, request_hash, wait_ms)
            raise
        layout = self.settings.layout
        secret = [(row, values) for row, values in rows if values]
        try:
            if secret:
                # Off the event loop: a batch may have a thousand of these files to write.
                try:
                    await trio.to_thread.run_sync(accept.write_all_secrets, layout, secret)
                except OSError as exc:
                    raise Unavailable(f"cannot keep the secretEnv values: {exc.strerror}") from None
            # This node takes it at once when it has a free slot: it is live here before the
            # answer goes out, and no claim has to be committed.
            taken = self.cluster is not None and self.cluster.take_here(head)
            if head.kind == "batch":
                created_row, created = await self.journal.create_batch(head, [row for row, _ in rows[1:]])
            else:
                created_row, created = await self.journal.create(head, message=message)
        except BaseException:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(accept.drop_all_secrets, layout, secret)
            raise
        if not created:
            await trio.to_thread.run_sync(accept.drop_all_secrets, layout, secret)
            return await self._replay(created_row, request_hash, wait_ms)
        if self.cluster is None:
            self.executor.submit(created_row)
            for row, _ in rows[1:]:
                self.executor.submit(row)
        elif taken:
            self.cluster.submit_taken(created_row)
        # else: in the shared queue, for whichever node has a free slot to claim it.
        if head.kind == "batch":
            found = await self.store.get_execution(head.id)
            assert found is not None
            return Started(execution_from(found), replayed=False, wait_ms=wait_ms)
        # Rendered from the row just written: the execution is new, queued, without artifacts or output.
        return Started(
            execution_from_row(created_row, [], preview=Preview()), replayed=False, wait_ms=wait_ms
        )

    def _room(self, principal: Principal, head: ExecutionRow) -> int:
        """How many of `principal`'s new executions like `head` could run at once: a cell of a
        code context none while its context is busy, else as many as its principal's quota has
        room for (it takes no slot of the daemon's); none in a session being removed."""
        slots = self.executor.slots
        if head.context_id is None:
            # One of a session being removed waits for that first, whatever slots are free.
            return 0 if self.executor.removals.holds(head) else slots.room((principal.key,))
        context = self.executor.contexts.all.get(head.context_id)
        if context is None or context.running is not None or context.turns:
            return 0
        return slots.room((principal.key,), daemon_slot=False)

    async def run(self, principal: Principal, req: StartRequest, idempotency_key: str | None) -> Started:
        """A start as the route answers it: accepted, then for a foreground start the record after
        up to `waitTimeoutMs`, and what `onWaitTimeout` asks for when the run outlives the wait.

        `detach` is the detach route's one guarded step, so the outcome goes to this answer (the
        run had ended: the record is terminal) or to the exits feed (it was still running), never
        to neither, however the end and the expiry race. `cancel` answers once the tree is dead.
        """
        started = await self.start(principal, req, idempotency_key)
        execution = started.execution
        if started.wait_ms is None or execution.terminal:
            return started
        execution_id = execution.execution_id
        final = None
        with trio.move_on_after(started.wait_ms / 1000):
            final = await self.wait_terminal(execution_id, fresh=not started.replayed)
        if final is None and not self.stopping.is_set():
            final = await self._on_wait_timeout(principal, execution_id, req.on_wait_timeout, started.wait_ms)
        return replace(started, execution=final or await self.get(principal, execution_id))

    async def _on_wait_timeout(
        self, principal: Principal, execution_id: str, action: str, wait_ms: int
    ) -> Execution | None:
        if action == "detach":
            return (await self.detach(principal, execution_id, None))[1]
        if action == "cancel":
            reason = f"the wait of {wait_ms} ms passed (onWaitTimeout: cancel)"
            await self.cancel(principal, execution_id, None, reason, 0)
            return await self.wait_terminal(execution_id)
        return None

    async def _replay(self, row: ExecutionRow, request_hash: str, wait_ms: int | None) -> Started:
        if row.request_hash != request_hash:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was first used with a different request; use a new key for a "
                "new request, or repeat the first request exactly",
                details={"executionId": row.id},
            )
        found = await self.store.get_execution(row.id)
        execution = await self.record(found if found is not None else Found(row, []))
        return Started(execution, replayed=True, wait_ms=wait_ms)

    def _wait_ms(self, requested: int | None) -> int:
        if requested is None:
            return self.settings.default_wait_timeout_ms
        if requested > self.settings.max_wait_timeout_ms:
            raise InvalidRequest(
                f"waitTimeoutMs must be at most {self.settings.max_wait_timeout_ms}",
                details=[
                    {"field": "waitTimeoutMs", "message": f"at most {self.settings.max_wait_timeout_ms}"}
                ],
            )
        return requested

    # -- reading -----------------------------------------------------------------------------

    # -- acting ------------------------------------------------------------------------------

    async def cancel(
        self, principal: Principal, execution_id: str, kind: str | None, reason: str | None, grace_ms: int
    ) -> tuple[bool, Execution]:
        """Cancel: (True, record) once recorded; (False, record) when it had already ended."""
        found = await self._found(principal, execution_id, kind)
        was_terminal = found.row.status.terminal
        if not was_terminal and self.cluster is not None and execution_id not in self.executor.live:
            await self.cluster.cancel(found.row, reason, grace_ms)
        elif not was_terminal:
            await self.executor.cancel(execution_id, reason, grace_ms)
        execution = await self.get(principal, execution_id, kind)
        cancelled = not was_terminal and execution.status in (
            ExecutionStatus.CANCEL_REQUESTED,
            ExecutionStatus.CANCELLED,
        )
        refused = self.store.health.error()
        if not was_terminal and not execution.terminal and not cancelled and refused is not None:
            # The tree is being killed all the same; its outcome is recorded once the store can.
            raise type(refused)(f"the cancel is under way but cannot be recorded yet: {refused.message}")
        return cancelled, execution

    async def signal(self, principal: Principal, execution_id: str, kind: str | None, name: str) -> Execution:
        """Send SIG`name` to every process of a running execution's tree and journal a `signal` event.

        Conflict when it is not running (queued, being cancelled, or ended): nothing is sent then.
        """
        await self._found(principal, execution_id, kind)
        full = f"SIG{name}"
        # Journaled where it meets the output: after what was written before, before what it causes.
        async with inputs.caught_up(self.executor.live.get(execution_id)):
            if not await self.executor.signal(execution_id, getattr(signals, full)):
                row = (await self._found(principal, execution_id, kind)).row
                if row.context_id is not None and not row.status.terminal:
                    raise Conflict(
                        f"execution {execution_id} is a cell of code context {row.context_id}, whose "
                        "interpreter is the context's: a cell takes no signal; cancel it to interrupt "
                        "it (KeyboardInterrupt in the cell; the context lives on)",
                        details={"contextId": row.context_id},
                    )
                inputs.on_another_node(self.executor, row, "signal")
                status = row.status.value
                raise Conflict(
                    f"execution {execution_id} is {status}: only a running execution takes a signal"
                )
            await self.journal.append(execution_id, [("signal", event_builder("signal", signal=full))])
        return await self.get(principal, execution_id, kind)

    async def send_input(
        self,
        principal: Principal,
        execution_id: str,
        kind: str | None,
        data: bytes,
        *,
        eof: bool,
        record: bool,
    ) -> None:
        """Write `data` to a running execution's open stdin or terminal; see `inputs.send_input`."""
        row = (await self._found(principal, execution_id, kind)).row
        await inputs.send_input(self.executor, self.journal, row, data, eof=eof, record=record)

    async def resize(
        self, principal: Principal, execution_id: str, kind: str | None, rows: int, cols: int
    ) -> None:
        """Set a running execution's terminal size; see `inputs.resize`."""
        row = (await self._found(principal, execution_id, kind)).row
        await inputs.resize(self.executor, self.journal, row, rows, cols)

    async def delete(self, principal: Principal, execution_id: str, kind: str | None) -> None:
        """Dispose of a terminal execution, its events, artifacts and files."""
        row = (await self._found(principal, execution_id, kind)).row
        if not row.status.terminal:
            raise Conflict(
                f"execution {execution_id} is {row.status.value}; cancel it or wait for it to end first"
            )
        # Its files first, then its record: on a full disk the record's delete needs their room.
        if not await self.deletes.delete_one(execution_id):
            raise Conflict(f"execution {execution_id} is not terminal")

    async def detach(
        self, principal: Principal, execution_id: str, kind: str | None
    ) -> tuple[bool, Execution]:
        """Hand the outcome to the exits feed: True, or False with the record if it had ended."""
        await self._found(principal, execution_id, kind)
        detached = await self.store.set_detached(execution_id)
        return detached, await self.get(principal, execution_id, kind)
