"""The service: every operation of the API, for a principal, with its checks. Handlers call one each.

Accepting an execution is one transaction (the row and its first event, or the existing row of
an idempotency key); everything slow happens later in the execution's supervisor task.
"""

from __future__ import annotations

import signal as signals
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import trio

from workbench.core import accept
from workbench.core.batches import batch_rows
from workbench.core.executor import Executor
from workbench.core.journal import Journal
from workbench.core.layout import STREAMS
from workbench.core.preview import execution_preview
from workbench.core.principals import ADMIN as ADMIN
from workbench.core.principals import Principal as Principal
from workbench.core.records import event_builder, execution_from, execution_from_row, final_record
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow, Found, ListFilter, Store
from workbench.core.waiting import first_of
from workbench.wire.errors import (
    Conflict,
    IdempotencyKeyReused,
    InvalidRequest,
    NotFound,
    TooManyExecutions,
    Unavailable,
)
from workbench.wire.models import (
    EXECUTION_ID,
    EXECUTION_KINDS,
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


@dataclass(frozen=True)
class StreamPage:
    """SSE frames of committed events, where they end, and whether more are already committed."""

    frames: str
    next_after: int
    terminal: bool
    more: bool
    #: The sequence of the `output_truncated` event, once there is one.
    truncated_at: int | None = None


@dataclass(frozen=True)
class EventsPage:
    """A page of events as stored JSON texts (served without re-encoding)."""

    bodies: list[str]
    next_after: int
    terminal: bool


class Service:
    """The operations of the API."""

    def __init__(self, *, settings: Settings, store: Store, journal: Journal, executor: Executor) -> None:
        self.settings = settings
        self.store = store
        self.journal = journal
        self.executor = executor
        #: Set when the daemon begins to stop: long-polls return what they have.
        self.stopping = trio.Event()

    # -- start -------------------------------------------------------------------------------

    async def start(self, principal: Principal, req: StartRequest, idempotency_key: str | None) -> Started:
        """Accept an execution (or find the one this idempotency key already made)."""
        kind: ExecutionKind = "workbench_bash" if isinstance(req, StartBashRequest) else "workbench_code"
        request_hash = accept.request_hash(kind, req.model_dump(mode="json", by_alias=True))
        wait_ms = None if req.background else self._wait_ms(req.wait_timeout_ms)
        assert isinstance(req, StartBashRequest | StartCodeRequest)

        def build() -> list[tuple[ExecutionRow, dict[str, str]]]:
            row = accept.new_row(
                self.settings, self.executor.images, principal, req, idempotency_key, request_hash
            )
            return [(row, req.secret_env)]

        return await self._accept(principal, idempotency_key, request_hash, wait_ms, build)

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
            accept.check_room(self.settings, self.executor.slots, principal, max(1, len(rows) - 1))
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
        self.executor.submit(created_row)
        for row, _ in rows[1:]:
            self.executor.submit(row)
        if head.kind == "batch":
            found = await self.store.get_execution(head.id)
            assert found is not None
            return Started(execution_from(found), replayed=False, wait_ms=wait_ms)
        # Rendered from the row just written: the execution is new, queued, without artifacts or output.
        return Started(
            execution_from_row(created_row, [], preview=Preview()), replayed=False, wait_ms=wait_ms
        )

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

    async def get(self, principal: Principal, execution_id: str, kind: str | None = None) -> Execution:
        """One record; NotFound for an unknown id, a wrong kind, or another principal's execution."""
        return await self.record(await self._found(principal, execution_id, kind))

    async def record(self, found: Found) -> Execution:
        """The wire record with its preview: kept since its end, or made from its spool files now."""
        row = found.row
        if row.status.terminal:
            return final_record(found)
        directory = self.settings.layout.execution(row.id)
        return execution_from(found, await execution_preview(directory, row, final=False))

    async def _found(self, principal: Principal, execution_id: str, kind: str | None) -> Found:
        if not EXECUTION_ID.fullmatch(execution_id):
            raise NotFound(f"no execution {execution_id!r}")
        found = await self.store.get_execution(execution_id)
        if found is None:
            raise NotFound(f"no execution {execution_id}")
        row = found.row
        if not (principal.sees_all or row.principal == principal.name):
            # Exactly what an id that was never made gets: existence does not leak.
            raise NotFound(f"no execution {execution_id}")
        if kind is not None and row.kind != kind:
            raise NotFound(f"no execution {execution_id} of kind {kind}")
        return found

    async def list(
        self,
        principal: Principal,
        *,
        status: str | None,
        kind: str | None,
        session_id: str | None,
        limit: int,
        cursor: str | None,
        rerun_of: str | None = None,
        batch_id: str | None = None,
        service: bool | None = None,
        preview: bool = False,
        text: str | None = None,
    ) -> tuple[list[Execution], str | None]:
        """Newest first, `limit` per page; the cursor is the id to continue after. `rerun_of`:
        only the reruns of that execution; `batch_id`: only the items of that batch. With
        `preview`, each record carries its preview (otherwise null: a listing reads no spool files).
        `service`: only services (true) or only the others (false)."""
        if status is not None and status not in {s.value for s in ExecutionStatus}:
            raise accept.field_error(
                "status", f"must be one of {', '.join(s.value for s in ExecutionStatus)}"
            )
        if kind is not None and kind not in EXECUTION_KINDS:
            raise accept.field_error("kind", f"must be one of {', '.join(EXECUTION_KINDS)}")
        if cursor is not None and not EXECUTION_ID.fullmatch(cursor):
            raise accept.field_error("cursor", "is not a cursor this daemon handed out")
        owner = None if principal.sees_all else principal.name
        where = ListFilter(
            principal=owner,
            status=status,
            kind=kind,
            session_id=session_id,
            rerun_of=rerun_of,
            batch_id=batch_id,
            service=service,
            text=text,
        )
        rows = await self.store.list_executions(where, cursor, limit + 1)
        page = [await self.record(f) if preview else execution_from(f) for f in rows[:limit]]
        next_cursor = page[-1].execution_id if len(rows) > limit else None
        return page, next_cursor

    async def wait(
        self, principal: Principal, execution_id: str, kind: str | None, wait_ms: int
    ) -> tuple[Execution, bool]:
        """Wait up to `wait_ms` for a terminal status: (record, wait timed out)."""
        await self._found(principal, execution_id, kind)  # existence and visibility first
        final = None
        with trio.move_on_after(wait_ms / 1000):
            final = await self.wait_terminal(execution_id)
        execution = final or await self.get(principal, execution_id, kind)
        return execution, not execution.terminal

    async def wait_terminal(self, execution_id: str, *, fresh: bool = False) -> Execution | None:
        """The terminal record, once there is one (woken by commits, never by a timer); None if
        the daemon begins to stop first.

        `fresh`: the execution was accepted by this task without a checkpoint since, so it
        cannot be terminal yet: the first read is skipped.
        """
        with self.journal.watch(execution_id) as watch:
            if not fresh:
                found = await self.store.get_execution(execution_id)
                if found is None:
                    return None
                if found.row.status.terminal:
                    return final_record(found)
            while watch.final is None:
                if self.stopping.is_set():
                    return None
                await first_of(partial(watch.wait_changed, watch.version), self.stopping.wait)
            return final_record(watch.final)

    async def events(
        self, principal: Principal, execution_id: str, kind: str | None, after: int, limit: int
    ) -> EventsPage:
        """A page of committed events after `after`."""
        await self._found(principal, execution_id, kind)
        return await self.events_page(execution_id, after, limit)

    async def events_page(self, execution_id: str, after: int, limit: int) -> EventsPage:
        read = await self.store.read_events(execution_id, after, limit)
        events, row = read.events, read.row
        next_after = events[-1].sequence if events else after
        terminal = row is None or (row.status.terminal and next_after >= row.last_sequence)
        return EventsPage([e.body for e in events], next_after, terminal)

    async def stream_page(
        self,
        execution_id: str,
        after: int,
        limit: int,
        max_bytes: int,
        *,
        find_truncation: bool = True,
        types: frozenset[str] | None = None,
    ) -> StreamPage:
        """Committed events after `after` as SSE frames, for one read of a stream (only those of
        `types`, when given: the page still ends where the journal read ends).

        A page ends with the `output_truncated` event when it holds it, so that a stream can put
        the live display (which follows that event) in its place.
        """
        read = await self.store.read_events(
            execution_id,
            after,
            limit,
            max_bytes=max_bytes,
            stop_at="output_truncated",
            find_truncation=find_truncation,
        )
        events, row = read.events, read.row
        next_after = events[-1].sequence if events else after
        last = row.last_sequence if row is not None else next_after
        terminal = row is None or (row.status.terminal and next_after >= last)
        frames = "".join(
            f"id: {e.sequence}\nevent: {e.event_type}\ndata: {e.body}\n\n"
            for e in events
            if types is None or e.event_type in types
        )
        return StreamPage(
            frames, next_after, terminal, more=next_after < last, truncated_at=read.truncated_at
        )

    # -- acting ------------------------------------------------------------------------------

    async def cancel(
        self, principal: Principal, execution_id: str, kind: str | None, reason: str | None, grace_ms: int
    ) -> tuple[bool, Execution]:
        """Cancel: (True, record) once recorded; (False, record) when it had already ended."""
        found = await self._found(principal, execution_id, kind)
        was_terminal = found.row.status.terminal
        if not was_terminal:
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
        if not await self.executor.signal(execution_id, getattr(signals, full)):
            status = (await self._found(principal, execution_id, kind)).row.status.value
            raise Conflict(f"execution {execution_id} is {status}: only a running execution takes a signal")
        await self.journal.append(execution_id, [("signal", event_builder("signal", signal=full))])
        return await self.get(principal, execution_id, kind)

    async def delete(self, principal: Principal, execution_id: str, kind: str | None) -> None:
        """Dispose of a terminal execution, its events, artifacts and files."""
        row = (await self._found(principal, execution_id, kind)).row
        if not row.status.terminal:
            raise Conflict(
                f"execution {execution_id} is {row.status.value}; cancel it or wait for it to end first"
            )
        if not await self.store.delete_execution(execution_id):
            raise Conflict(f"execution {execution_id} is not terminal")
        directory = self.settings.layout.execution(execution_id)
        await trio.to_thread.run_sync(directory.remove, set())

    async def detach(
        self, principal: Principal, execution_id: str, kind: str | None
    ) -> tuple[bool, Execution]:
        """Hand the outcome to the exits feed: True, or False with the record if it had ended."""
        await self._found(principal, execution_id, kind)
        detached = await self.store.set_detached(execution_id)
        return detached, await self.get(principal, execution_id, kind)

    async def artifact_file(
        self, principal: Principal, execution_id: str, kind: str | None, name: str
    ) -> tuple[Path, int, str]:
        """(path, size, content type) of an artifact; NotFound for any name it does not have."""
        found = await self._found(principal, execution_id, kind)
        for artifact in found.artifacts:
            if artifact.name == name and name in STREAMS:
                path = self.settings.layout.execution(found.row.id).spool(name)
                return path, artifact.size_bytes, artifact.content_type
        raise NotFound(f"execution {execution_id} has no artifact {name!r}")
