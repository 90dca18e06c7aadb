"""Batches: many executions accepted as one, and the task that follows them to one outcome.

A batch is a record of kind `batch` whose items are ordinary executions (each with its
`batchId`), accepted with it in one transaction. Its journal gets an `item` event in the same
transaction as each status change of an item (see `Store.begin_transition`), so the batch's
supervisor (`BatchRun`) learns everything by reading its own journal: after a restart it reads
it again from the start. It moves the batch to `running`, cancels the items that are left when
the batch is cancelled (or, with `failFast`, when an item ends without completing), and once
every item has ended, commits the batch's terminal status: `completed`, `failed`,
`partial_failed`, `cancelled` or `timed_out`. No item runs past the batch's deadline: each
item's deadline is capped by it at acceptance. At most `concurrency` items run at once (a cap
of `live.Slots`). Stopping its items closes that cap first, so that none starts any more; with
`failFast`, an item's supervisor does it as the item ends (`item_ended`), before its slot goes
back, and the batch's supervisor learns it from `Live.fail_fast`. After a restart, a `failFast`
batch's cap stays closed until its supervisor has read its journal.
"""

from __future__ import annotations

import collections
import json
import logging
from collections.abc import Mapping
from functools import partial
from typing import Any

import trio

from workbench.core import accept
from workbench.core.images import Image
from workbench.core.journal import Journal
from workbench.core.live import Live, Slots, Stop
from workbench.core.principals import Principal
from workbench.core.records import format_time, now_ms, usage_fields, usage_of
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow
from workbench.core.waiting import first_of
from workbench.wire.errors import InvalidRequest
from workbench.wire.ids import new_execution_id
from workbench.wire.starts import BatchRequest
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.batches")

#: Journal events read per page while catching up.
_PAGE = 1000
#: After a wake-up, how long to let more item events gather before reading them: a batch's
#: items change status in bursts, and one read of many costs far less than many reads of one.
_COALESCE_S = 0.005


def batch_key(batch_id: str) -> str:
    """The key of a batch's concurrency cap (`live.Slots`)."""
    return f"batch:{batch_id}"


def batch_rows(
    settings: Settings,
    images: dict[str, Image],
    principal: Principal,
    req: BatchRequest,
    idempotency_key: str | None,
    request_hash: str,
) -> list[tuple[ExecutionRow, dict[str, str]]]:
    """The batch's row and its items' (each with its `secretEnv` values), checked.

    Raises:
        InvalidRequest: (or a subclass) naming the item, `items.N.field`, that cannot be run.
    """
    now = now_ms()
    timeout_ms = accept.timeout_of(settings, req.timeout_ms)
    batch = ExecutionRow(
        id=new_execution_id(),  # before its items': ids sort by creation, and a batch comes first
        kind="batch",
        principal=principal.name,
        session_id=req.session_id,
        status=S.QUEUED,
        cwd="",
        image="",
        created_at=now,
        deadline_at=now + timeout_ms,
        timeout_ms=timeout_ms,
        budget_bytes=0,
        metadata_json=accept.metadata_json(settings, req.metadata),
        idempotency_key=idempotency_key,
        request_hash=request_hash,
        detached=req.detached,
        concurrency=req.concurrency or settings.max_concurrent_executions,
        fail_fast=req.fail_fast,
    )
    # A batch supervises its items in-process: they all run on the node that takes it.
    batch.node_id, batch.node_pin = accept.placement(settings, None, pinned=True)
    rows: list[tuple[ExecutionRow, dict[str, str]]] = [(batch, {})]
    for index, item in enumerate(req.items):
        try:
            spec = item.as_start()
            row = accept.new_row(
                settings,
                images,
                principal,
                spec,
                None,
                None,
                now=now,
                deadline_at=batch.deadline_at,
                batch_id=batch.id,
            )
        except InvalidRequest as exc:
            raise _in_item(index, exc) from None
        rows.append((row, spec.secret_env))
    return rows


def _in_item(index: int, exc: InvalidRequest) -> InvalidRequest:
    """The same error, saying which item it is about."""
    details: Any = exc.details
    if isinstance(details, list):
        details = [
            {**d, "field": f"items.{index}.{d.get('field', '')}".rstrip(".")} if isinstance(d, dict) else d
            for d in details
        ]
    elif isinstance(details, dict):
        details = {**details, "item": index}
    else:
        details = [{"field": f"items.{index}", "message": exc.message}]
    return type(exc)(f"items.{index}: {exc.message}", details=details)


def item_ended(slots: Slots, lives: Mapping[str, Live], item: Live, status: S) -> None:
    """`item` ends `status`, its slot not given back yet: if it did not complete and its batch is
    `failFast`, the batch stops its other items now, before that slot could go to the next one."""
    batch = lives.get(item.row.batch_id) if item.row.batch_id is not None else None
    if batch is None or not batch.row.fail_fast or status is S.COMPLETED or batch.fail_fast is not None:
        return
    batch.fail_fast = f"failFast: item {item.id} of batch {batch.id} ended {status.value}"
    stop_items(slots, lives, batch, batch.fail_fast)
    batch.kick.set()


def stop_items(slots: Slots, lives: Mapping[str, Live], batch: Live, reason: str, grace_ms: int = 0) -> None:
    """No item of `batch` starts any more (its cap closes), and every one not ended is cancelled:
    one still waiting for a slot ends `cancelled` without starting."""
    slots.set_cap(batch_key(batch.id), 0)
    batch.items_stopped = (reason, grace_ms)
    for live in list(lives.values()):
        if live.row.batch_id == batch.id:
            live.request_stop(Stop.CANCEL, reason, grace_ms)


def stopped_by_batch(lives: Mapping[str, Live], item: Live) -> None:
    """Stop `item` as its batch stopped its items, if it did before the item was submitted: after
    a restart the batch's supervisor may read its journal (and stop its items) before recovery
    submits them."""
    batch = lives.get(item.row.batch_id or "")
    if batch is not None and batch.items_stopped is not None and item.stop is None:
        item.request_stop(Stop.CANCEL, *batch.items_stopped)


class BatchRun:
    """Supervises one batch from acceptance (or a restart) to its terminal status."""

    def __init__(
        self,
        journal: Journal,
        lives: Mapping[str, Live],
        live: Live,
        slots: Slots,
        held_cap: int | None = None,
    ) -> None:
        self.journal = journal
        #: The cap to open once the journal is read, when it starts closed (after a restart).
        self.held_cap = held_cap
        self.lives = lives
        self.live = live
        self.slots = slots
        self.row = live.row
        #: Each item's status as the journal says, in the items' order.
        self.items: dict[str, S] = {}
        self.cursor = 0
        #: Why the batch stopped its items (a cancel, a shutdown, failFast), once it did.
        self.stopped: str | None = None
        self.stop_recorded = False

    async def supervise(self) -> None:
        """The batch's whole life; never raises (a bug ends it `failed`, its items cancelled)."""
        try:
            await self._run()
        except trio.Cancelled:
            raise  # daemon stopping with executions kept: the next start picks it up again
        except Exception as exc:
            log.exception("batch %s: supervisor failed", self.live.id)
            with trio.CancelScope(shield=True):
                self._stop_items("its batch's supervisor failed")
                message = f"the daemon failed supervising this batch: {exc}"
                error = {"code": "internal", "message": message}
                fields = {"finished_at": now_ms(), "error_code": "internal", "error_message": message}
                await self.journal.transition(
                    self.live.id, S.FAILED, fields=fields, message=message, error=error
                )
        finally:
            self.live.cancel_handled.set()
            self.live.done.set()

    async def _run(self) -> None:
        live = self.live
        if live.status is S.QUEUED:
            await self.journal.transition(live.id, S.RUNNING, fields={"started_at": now_ms()})
            live.status = S.RUNNING
        if live.status is S.CANCEL_REQUESTED and live.stop is None:
            live.request_stop(Stop.CANCEL, self.row.cancel_reason, 0)  # recorded before a restart
        with self.journal.watch(live.id, follower=False) as watch:
            while True:
                seen = watch.version
                live.kick = trio.Event()
                await self._catch_up()
                if self.row.fail_fast and self.stopped is None and live.stop is None:
                    self._fail_fast()
                if self.held_cap is not None and self.stopped is None and live.stop is None:
                    self.slots.set_cap(batch_key(live.id), self.held_cap)
                self.held_cap = None
                if self.items and all(status.terminal for status in self.items.values()):
                    with trio.CancelScope(shield=True):
                        await self._finish()
                    return
                if live.stop is not None and not self.stop_recorded:
                    await self._record_stop()
                await first_of(partial(watch.wait_changed, seen), live.kick.wait)
                if live.stop is None:
                    with trio.move_on_after(_COALESCE_S):
                        await live.kick.wait()

    async def _catch_up(self) -> None:
        """Read the journal's new `item` events into `items`."""
        while True:
            read = await self.journal.read(self.live.id, self.cursor, _PAGE)
            for event in read.events:
                if event.event_type == "item":
                    item = json.loads(event.body)["item"]
                    self.items[item["executionId"]] = S(item["status"])
            if read.events:
                self.cursor = read.events[-1].sequence
            if len(read.events) < _PAGE:
                return

    async def _record_stop(self) -> None:
        live = self.live
        if live.status is S.RUNNING:
            await self.journal.transition(
                live.id, S.CANCEL_REQUESTED, fields={"cancel_reason": live.reason}, message=live.reason
            )
            live.status = S.CANCEL_REQUESTED
        live.cancel_handled.set()
        self.stop_recorded = True
        if self.stopped is None:
            why = "cancelled" if live.stop is Stop.CANCEL else "stopped by a daemon shutdown"
            reason = f"its batch {live.id} was {why}" + (f": {live.reason}" if live.reason else "")
            # A cancel's grace is its items' too (SIGTERM first); a shutdown's stop is at once.
            self._stop_items(reason, live.grace_ms if live.stop is Stop.CANCEL else 0)

    def _fail_fast(self) -> None:
        """Stop the items once one ended without completing: as it ended (`item_ended`), or as its
        journal says (one that ended while queued, or before a restart)."""
        if self.live.fail_fast is None:
            ended = ((i, s) for i, s in self.items.items() if s.terminal and s is not S.COMPLETED)
            first = next(ended, None)
            if first is not None:
                item_id, status = first
                self.live.fail_fast = f"failFast: item {item_id} of batch {self.live.id} ended {status.value}"
        if self.live.fail_fast is not None:
            self._stop_items(self.live.fail_fast)

    def _stop_items(self, reason: str, grace_ms: int = 0) -> None:
        self.stopped = reason
        stop_items(self.slots, self.lives, self.live, reason, grace_ms)

    def _outcome(self) -> tuple[S, dict[str, str] | None]:
        statuses = list(self.items.values())
        done = sum(1 for status in statuses if status is S.COMPLETED)
        unfinished = [(i, s) for i, s in self.items.items() if s is not S.COMPLETED]
        listed = ", ".join(f"{i} {s.value}" for i, s in unfinished[:5]) + (
            ", ..." if len(unfinished) > 5 else ""
        )
        failed = {
            "code": "items_failed",
            "message": f"{len(unfinished)} of {len(statuses)} items did not complete: {listed}",
        }
        if self.live.status is S.CANCEL_REQUESTED:
            return S.CANCELLED, None
        if self.live.fail_fast is not None:
            counts = collections.Counter(status.value for status in statuses)
            ended = ", ".join(f"{n} {status}" for status, n in counts.items())
            message = f"{self.live.fail_fast}; the items that had not ended were cancelled ({ended})"
            return S.FAILED, {"code": "fail_fast", "message": message}
        if done == len(statuses):
            return S.COMPLETED, None
        if now_ms() >= self.row.deadline_at:
            timeout = {
                "code": "timeout",
                "message": f"the deadline of {self.row.timeout_ms} ms passed before every item ended",
            }
            return S.TIMED_OUT, timeout
        return (S.FAILED if done == 0 else S.PARTIAL_FAILED), failed

    async def _finish(self) -> None:
        """The terminal status, with the items' usage summed (and the exit, when detached)."""
        found = await self.journal.found(self.live.id)
        items = found.items if found is not None and found.items is not None else []
        status, error = self._outcome()
        fields: dict[str, Any] = {"finished_at": now_ms(), **usage_fields(items)}
        if error is not None:
            fields |= {"error_code": error["code"], "error_message": error["message"]}

        def exit_body(row: ExecutionRow) -> dict[str, Any]:
            usage = usage_of(row)
            return {
                "executionId": row.id,
                "executionKind": row.kind,
                "status": row.status.value,
                "exitCode": None,
                "signal": None,
                "error": error,
                "metadata": json.loads(row.metadata_json) if row.metadata_json else None,
                "stdoutTail": "",
                "stderrTail": "",
                "usage": usage.wire() if usage is not None else None,
                "finishedAt": format_time(row.finished_at),
            }

        message = error["message"] if error else None
        await self.journal.transition(
            self.live.id, status, fields=fields, message=message, error=error, exit_body=exit_body
        )
        self.live.status = status
