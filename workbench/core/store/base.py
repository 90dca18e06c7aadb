"""The store interface: the journal's operations in domain terms, each one transaction.

No caller outside `core/store/` sees a connection, a cursor or SQL. An engine (SQLite, embedded)
implements every operation; what it commits is durable before the call returns, and the readers
of what it touched are woken through `watches` after the commit, never before.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from workbench.core.store.health import StoreHealth
from workbench.core.store.rows import (
    ArtifactRow,
    EventBuilder,
    EventsRead,
    ExecutionRow,
    ExitLease,
    Found,
    ItemEvent,
    ListFilter,
    StoreStats,
)
from workbench.core.store.watch import Watches
from workbench.wire.status import ExecutionStatus

T = TypeVar("T", covariant=True)

#: The body of an exit, made in the terminal transition's transaction from the updated row.
ExitBody = Callable[[ExecutionRow], Mapping[str, Any]]


class Pending(Protocol[T]):
    """A write that is queued: later writes commit after it."""

    async def wait(self) -> None:
        """Wait (cancellably) until it is committed or has failed: a watcher that must not hold
        its nursery open until a lingering commit (`batching.LINGER_S`)."""
        ...

    async def result(self) -> T:
        """Wait (shielded) until it is committed; its result, or what it raised."""
        ...


class Store(abc.ABC):
    """Executions, their events and artifacts, and the exits feed.

    Every write raises `StorageFull` when the disk is full and `Unavailable` when it cannot be
    committed otherwise (nothing of it is then written), and tells `health`; the store itself
    goes on, and a later write may succeed.
    """

    watches: Watches
    health: StoreHealth
    #: Executions whose transition was refused for its owner (see `begin_transition`).
    disowned: set[str]
    #: Told (on the trio thread) of each execution another daemon deleted, "" when some may
    #: have been deleted unheard: each node removes its own directories of them.
    on_deleted: Callable[[str], None] | None = None

    @abc.abstractmethod
    def start(self) -> None:
        """Start serving; call from the trio thread once the schema is ready."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Finish every queued write, then stop."""

    # -- accepting ------------------------------------------------------------------------------

    @abc.abstractmethod
    async def create_execution(
        self, row: ExecutionRow, first_event: EventBuilder
    ) -> tuple[ExecutionRow, bool]:
        """Insert an execution with its first status event (sequence 1): (row, True).

        When the row has an idempotency key the principal already used: (that execution, False),
        and nothing is written. Both decided in one transaction.
        """

    @abc.abstractmethod
    async def create_batch(
        self,
        batch: ExecutionRow,
        items: Sequence[ExecutionRow],
        first_event: EventBuilder,
        item_event: ItemEvent,
    ) -> tuple[ExecutionRow, bool]:
        """Insert a batch and all its items, each with its first status event, and one `item`
        event per item in the batch's journal: all of it or nothing, in one transaction.

        When the batch's idempotency key was already used by its principal: (that execution,
        False), and nothing is written.
        """

    @abc.abstractmethod
    async def find_by_idempotency_key(self, principal: str, key: str) -> ExecutionRow | None:
        """The execution a principal made with this key, if any."""

    # -- the journal ----------------------------------------------------------------------------

    @abc.abstractmethod
    def begin_transition(
        self,
        execution_id: str,
        target: ExecutionStatus,
        sources: Iterable[ExecutionStatus],
        fields: Mapping[str, Any],
        event: EventBuilder,
        *,
        exit_body: ExitBody | None = None,
        item_event: ItemEvent | None = None,
        lazy: bool = False,
        owner: str | None = None,
        before: Sequence[tuple[str, EventBuilder]] = (),
    ) -> Pending[int | None]:
        """Queue the guarded status update with its event; await `.result()` for its sequence.

        Nothing is written (the result is None) unless the execution is in one of `sources`
        and, when `owner` is given, is that node's (its claim was not taken from it meanwhile).
        A transition refused for its owner disowns the execution: from then on this store
        writes none of its events (`append_events` answers None), so that a node whose claim
        was taken while it was cut off writes nothing into the new owner's run.
        When `exit_body` is given and the execution is detached, its exit is saved in the same
        transaction. When the execution is an item of a batch and `item_event` is given, the
        batch's journal gets that event in the same transaction too (unless the batch has
        ended), and the batch's watchers are woken. A terminal transition hands its final
        record to the watchers.

        `lazy`: nobody waits for it at once, so an engine may hold its commit back for a few
        milliseconds to share it with the writes that follow (a short command's `running` and
        its terminal status then cost one commit, one fsync); never past a write submitted
        after it, which commits with it or after it as ever.

        `before`: events appended just before the status event, in the same transaction (a
        short command's last output and its end cost one commit); written only if the
        transition is, so that a refused one writes nothing at all.
        """

    @abc.abstractmethod
    async def append_events(
        self,
        execution_id: str,
        events: Sequence[tuple[str, EventBuilder]],
        fields: Mapping[str, Any],
        *,
        artifacts: Sequence[ArtifactRow] = (),
        created_at: int = 0,
    ) -> int | None:
        """Append events to a live execution, update `fields` and save `artifacts`, together.

        Returns the last sequence, or None when the execution is terminal or disowned (nothing
        is written: the terminal status event stays the last one). With no events, only
        `fields` change.
        """

    @abc.abstractmethod
    async def set_detached(self, execution_id: str) -> bool:
        """Mark a live execution detached; False once it has ended (nothing changes)."""

    @abc.abstractmethod
    async def delete_execution(self, execution_id: str) -> bool:
        """Delete a terminal execution with its events and artifacts; False if not terminal."""

    @abc.abstractmethod
    async def find_terminal(
        self,
        principal: str | None,
        statuses: Iterable[ExecutionStatus],
        ended_before: int | None,
        limit: int,
    ) -> list[str]:
        """Up to `limit` executions in one of `statuses` (all terminal), oldest first: their ids
        (a read: `delete_terminal` deletes them, once their files are gone).

        `principal` None: anyone's. `ended_before` (ms): only those that ended before then (an
        execution without an end time counts from its creation). A live execution is never
        found, whatever `statuses` says.
        """

    @abc.abstractmethod
    async def delete_terminal(self, execution_ids: Sequence[str]) -> list[str]:
        """Delete those of `execution_ids` that have ended, with their events, artifacts and acked
        exits (unacked exits stay, to be delivered), in one transaction: their ids. A live one is
        never deleted."""

    @abc.abstractmethod
    async def existing(self, execution_ids: Sequence[str]) -> set[str]:
        """Those of `execution_ids` the store holds (the others were deleted, or never made)."""

    @abc.abstractmethod
    async def reclaim(self, max_bytes: int) -> bool:
        """Give back to the filesystem up to about `max_bytes` of the space deleted rows left free
        inside the store, in one short transaction; True when there is more to give back.

        An engine that gives space back by itself (or cannot) returns False at once.
        """

    @abc.abstractmethod
    async def stats(self, principal: str | None) -> StoreStats:
        """Counts of `principal`'s executions by status (None: everyone's) and the store's size."""

    # -- reading --------------------------------------------------------------------------------

    @abc.abstractmethod
    async def get_execution(self, execution_id: str) -> Found | None:
        """An execution and its artifacts."""

    @abc.abstractmethod
    async def list_executions(self, where: ListFilter, before: str | None, limit: int) -> list[Found]:
        """Newest first; `before` is the id of the last execution of the previous page."""

    @abc.abstractmethod
    async def live_executions(self) -> list[ExecutionRow]:
        """Every execution that is not terminal, oldest first (recovery's read)."""

    @abc.abstractmethod
    async def read_events(
        self,
        execution_id: str,
        after: int,
        limit: int,
        *,
        max_bytes: int | None = None,
        stop_at: str | None = None,
        find_truncation: bool = False,
    ) -> EventsRead:
        """Events after `after` in order, with the execution as of the same snapshot.

        At most `limit` events; no more once `max_bytes` of bodies are gathered (at least one);
        none after an event of type `stop_at`. `find_truncation`: also the sequence of the
        `output_truncated` event, if the execution has one.
        """

    @abc.abstractmethod
    async def read_changes(self, principal: str | None, after: int, limit: int) -> list[Found]:
        """The executions (of `principal`; None: everyone's) whose latest change is after `after`,
        in the order of those changes, each once, as it is now."""

    @abc.abstractmethod
    async def change_head(self) -> int:
        """The number of the latest change committed (0 before any)."""

    # -- the exits feed -------------------------------------------------------------------------

    @abc.abstractmethod
    async def lease_exits(
        self, principal: str | None, now: int, lease_ms: int, limit: int, *, webhook: bool = False
    ) -> list[ExitLease]:
        """Hand out up to `limit` unacked exits whose lease expired (None: every principal's); to
        the `webhook`, only those whose delivery it does not defer (`defer_exit_webhook`)."""

    @abc.abstractmethod
    async def next_exit_lease_end(self, principal: str | None, *, webhook: bool = False) -> int | None:
        """When the earliest leased-out unacked exit becomes available again (ms), if any; for the
        `webhook`, once its deferral has passed too."""

    @abc.abstractmethod
    async def defer_exit_webhook(self, delivery_id: str, attempt: int, until: int) -> None:
        """A failed webhook delivery of an unacked exit: the webhook tries it again at `until` (ms),
        and gives back its lease (if `attempt` is still the exit's, no one leased it since), so
        readers of the feed see it meanwhile."""

    @abc.abstractmethod
    async def ack_exit(self, delivery_id: str, principal: str | None, now: int) -> bool:
        """Mark an exit delivered; False when no such exit is visible to `principal`."""

    # -- health ---------------------------------------------------------------------------------

    @abc.abstractmethod
    async def probe(self) -> None:
        """Commit a write that changes nothing but needs room: returns once the store commits."""


class NodeStore(abc.ABC):
    """What a store shared by several daemons (nodes) offers besides `Store`'s operations.

    Times of heartbeats are the database's clock, so that nodes' clocks need not agree. A node is
    lost once its heartbeat is older than its own lease, to a node that has itself beaten without
    a gap (none longer than half its own lease) for at least that lease: the operations that act
    on lost nodes take the id of the node that asks.
    """

    #: Told (on the trio thread) of each execution another node changed or ended; "" when
    #: notifications may have been missed (any execution may have changed).
    on_remote: Callable[[str], None] | None

    @abc.abstractmethod
    async def heartbeat(self, node_id: str, url: str | None, lease_ms: int, *, joining: bool = False) -> None:
        """Say this node is alive (joining the nodes if it was not among them). `joining`: this
        node has just started, so its heartbeats begin a new run."""

    @abc.abstractmethod
    async def live_nodes(self) -> dict[str, str | None]:
        """The nodes whose heartbeat is within their lease, with their URLs."""

    @abc.abstractmethod
    async def queue_depth(self, principal: str, node_id: str) -> tuple[int, int]:
        """How many executions are queued and not claimed by this node: in all, and of this
        principal."""

    @abc.abstractmethod
    async def claim(self, node_id: str, limit: int, workspaces: str) -> list[ExecutionRow]:
        """Take up to `limit` queued executions nobody runs, oldest first, for this node (those
        pinned to another node are left); a batch comes with its items, which do not count.
        One without a `cwd` gets its session's workspace under `workspaces` (this node's).

        Rows locked by another node's claim are skipped, never waited for: nodes that claim at
        once get different executions.
        """

    @abc.abstractmethod
    async def claim_one(self, node_id: str, execution_id: str, workspaces: str) -> ExecutionRow | None:
        """Take this execution for this node if it is queued and nobody runs it (else None)."""

    @abc.abstractmethod
    async def ask_cancel(self, execution_id: str, reason: str | None, grace_ms: int) -> bool:
        """Note a cancel for the node that runs it (it reads it when told); False once ended."""

    @abc.abstractmethod
    async def release_lost_claims(self, node_id: str) -> int:
        """Put back in the shared queue what nodes lost to `node_id` claimed and never started."""

    @abc.abstractmethod
    async def lost_executions(self, node_id: str) -> list[ExecutionRow]:
        """The running executions of nodes lost to `node_id` (to be ended `node_lost` under the guard)."""

    @abc.abstractmethod
    async def taken_for_lost(self, node_id: str, since: int) -> list[ExecutionRow]:
        """This node's executions that other nodes ended `node_lost` since `since` (ms)."""

    @abc.abstractmethod
    async def overdue_unclaimed(self, node_id: str, now: int) -> list[ExecutionRow]:
        """Queued executions past their deadline that nobody claimed, or a node lost to `node_id`."""


class SharedStore(Store, NodeStore):
    """A store that several daemons share (PostgreSQL)."""
