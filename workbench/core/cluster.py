"""One node among many on a shared store: heartbeats, claims, cancels across nodes, lost nodes.

With a shared store (PostgreSQL) a start is accepted by any node into the shared queue, and a
node runs it once it claims it: when the node has a free slot, oldest first (`NodeStore.claim`).
From the claim on, the execution is this node's like any other (`Executor.submit`). The rest:

- a cancel asked on a node that does not run the execution is recorded there: a running one
  moves to `cancel_requested` at once (with the cancel's reason and grace on its row), whether
  its node lives or not (a batch has the cancel noted on its row, and its node records it);
  the node that runs it is told by the store's notification, reads the row, kills the tree and
  records the end, `cancelled` even when it was killing the tree for its deadline (its guarded
  transitions are the fence). A queued one
  that nobody claimed yet is claimed by the asking node, which cancels it at once; one that
  another node claimed has the cancel noted on its row, and that node cancels it;
- every node beats its heart each quarter lease; every node also looks for lost nodes as often:
  their claims that never started go back to the queue, their running executions end `failed`
  with `error.code = "node_lost"` (the guarded transition: only one node's wins; one whose
  cancel was recorded ends `cancelled`, with that code all the same), and queued
  executions past their deadline that no living node will run end `timed_out`. A node judges
  others only once its own heartbeats have come without a gap for a lease (the store says which
  nodes it may take for lost): after the database was away, every living node beats again first;
- when another node ended an execution this node still runs (this node was taken for lost), its
  tree is killed instead of being recorded again: terminal is final.
"""

from __future__ import annotations

import json
import logging
import os
import signal as signals
from functools import partial
from typing import TYPE_CHECKING, Any

import trio

import sandbox
from workbench.core.finish import exit_body
from workbench.core.journaled import journaled_output, journaled_preview, journaled_tails
from workbench.core.live import Live, Outcome, Stop
from workbench.core.nodecalls import NodeCalls
from workbench.core.principals import Principal, principal_key
from workbench.core.records import now_ms
from workbench.core.waiting import first_of
from workbench.wire.errors import Unavailable
from workbench.wire.status import ExecutionStatus as S

if TYPE_CHECKING:
    from workbench.core.executor import Executor
    from workbench.core.store import ExecutionRow
    from workbench.core.store.base import SharedStore

log = logging.getLogger("workbench.core.cluster")

#: How long a claim waits after the store failed before it tries again.
_RETRY_S = 0.5
#: How far back a restarted node looks for its trees that other nodes ended `node_lost`.
_LOST_TREES_MS = 7 * 24 * 3600 * 1000


class Cluster:
    """This node's part in a shared store; `run` it in the executions' nursery."""

    def __init__(self, store: SharedStore, executor: Executor) -> None:
        self.store = store
        self.executor = executor
        self.settings = executor.settings
        self.node_id = self.settings.node_id
        self._every_s = self.settings.node_lease_ms / 4000
        self._nursery: trio.Nursery | None = None
        self._workspaces = str(self.settings.layout.workspaces_dir)
        #: Held while this node claims and takes in what it claimed, and while a start counts the
        #: queue (`queue_depth`), so that the shared queue's count and this node's are of one
        #: moment: a claim between them would be counted twice and refuse a start for nothing.
        self.claiming = trio.Lock()
        #: Calls to the other nodes (an artifact on another node's disk).
        self.calls = NodeCalls(self.settings, store)

    async def join(self) -> None:
        """The first heartbeat: this node is among the living before it recovers or claims."""
        await self._heartbeat(joining=True)

    async def _heartbeat(self, *, joining: bool = False) -> None:
        lease_ms = self.settings.node_lease_ms
        await self.store.heartbeat(self.node_id, self.settings.node_url, lease_ms, joining=joining)

    async def kill_lost_trees(self, supervisor: sandbox.Supervisor) -> None:
        """At start: kill the trees of executions other nodes ended `node_lost` while this node
        was taken for lost (and its sandbox supervisor died with it): never adopted again."""
        for row in await self.store.taken_for_lost(self.node_id, now_ms() - _LOST_TREES_MS):
            assert row.child_json is not None
            info = sandbox.ChildInfo.from_dict(json.loads(row.child_json))
            try:
                if not await supervisor.adopt(info):
                    continue  # gone already (or its supervisor lives and recovery releases it)
                log.warning("cluster: killing the tree of %s, which another node ended node_lost", row.id)
                await supervisor.signal(info.name, signals.SIGKILL)
                with trio.move_on_after(10):
                    await supervisor.wait_empty(info.name)
                await supervisor.release(info.name)
            except sandbox.SandboxError as exc:
                log.warning("cluster: could not kill the tree of %s: %s", row.id, exc)

    async def queue_depth(self, principal: Principal) -> tuple[int, int]:
        """How many executions wait for a slot, in all and of `principal`: in the shared queue,
        and claimed by this node, less what this node has room for (that is about to run)."""
        slots = self.executor.slots
        async with self.claiming:
            total, mine = await self.store.queue_depth(principal.name, self.node_id)
            room = slots.room((principal.key,))
            total, mine = total + slots.queued, mine + slots.queued_by[principal.key]
            # Those held back (their session is being removed) wait whatever room there is.
            held, held_mine = slots.held_waiting(), slots.held_waiting(principal.key)
        return max(0, total - held - room) + held, max(0, mine - held_mine - room) + held_mine

    async def waiting(self) -> int:
        """How many executions wait for a slot: in the shared queue, and claimed by this node."""
        async with self.claiming:
            total, _ = await self.store.queue_depth("", self.node_id)
            return total + self.executor.slots.queued

    async def run(self) -> None:
        """Beat, claim, look for lost nodes and answer other nodes' changes, until cancelled."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            self.store.on_remote = self._remote_change
            try:
                nursery.start_soon(self._beat)
                nursery.start_soon(self._claims)
                nursery.start_soon(self._reap)
                await trio.sleep_forever()
            finally:
                self.store.on_remote = None

    # -- claiming -------------------------------------------------------------------------------

    def _room(self) -> int:
        # Free slots are left only when every execution waiting here is held back by a cap of
        # its own (a principal's or a batch's quota): others' work may still run. What this node
        # claims beyond its slots waits here, so no more than a slot's worth is claimed that way.
        slots = self.executor.slots
        if slots.queued_for_daemon >= self.settings.max_concurrent_executions:
            return 0
        return slots.free

    def take_here(self, row: ExecutionRow) -> bool:
        """Before a new execution is committed: make it this node's at once when this node has a
        free slot for it (saved claimed, with no claim of its own to commit); False when it goes
        to the shared queue for whichever node claims it."""
        if row.kind == "batch" or row.batch_id is not None or not self.executor.accepting:
            return False
        if row.node_pin not in (None, self.node_id):
            return False
        if row.context_id is not None:
            # A cell runs in its context, which is this node's: it waits here for its turn and
            # its principal's slot, never in the shared queue.
            row.node_id = self.node_id
            return True
        if self._room() == 0:
            return False
        if self.executor.slots.room((principal_key(row.principal),)) == 0:
            return False
        row.node_id = self.node_id
        if row.cwd == "":
            row.cwd = f"{self._workspaces}/{row.principal}/{row.session_id}"
        return True

    def submit_taken(self, row: ExecutionRow) -> None:
        """Run an execution `take_here` made this node's, once it is committed."""
        self._submit(row)

    async def _claims(self) -> None:
        queue, freed = self.store.watches.queue, self.executor.slots.freed
        while True:
            seen_queue, seen_freed = queue.version, freed.version
            room = self._room() if self.executor.accepting else 0
            if room > 0:
                try:
                    async with self.claiming:
                        rows = await self.store.claim(self.node_id, room, self._workspaces)
                        lives = [self._submit(row) for row in rows]
                except Unavailable as exc:
                    log.warning("cluster: cannot claim: %s", exc)
                    await trio.sleep(_RETRY_S)
                    continue
                heads = [live for live in lives if live.row.batch_id is None]
                if len(heads) == room and all(live.granted.is_set() for live in heads):
                    continue  # there may be more, and room for them
            await first_of(partial(queue.wait_changed, seen_queue), partial(freed.wait_changed, seen_freed))

    def _submit(self, row: ExecutionRow) -> Live:
        image = self.executor.images.get(row.image)
        if image is not None and image.sandboxed and row.cwd.startswith(self._workspaces + "/"):
            # As `launch.resolve_cwd` gives it on a sandboxed image: the real path.
            row.cwd = os.path.realpath(row.cwd)
        live = self.executor.submit(row)
        if row.cancel_grace_ms is not None:
            live.request_stop(Stop.CANCEL, row.cancel_reason, row.cancel_grace_ms)
        return live

    # -- cancels and ends from other nodes ------------------------------------------------------

    async def cancel(self, row: ExecutionRow, reason: str | None, grace_ms: int) -> None:
        """Cancel an execution this node does not run; returns once the cancel is recorded (a
        running one: at once, `cancel_requested`), it ended, or a lease passed."""
        if row.status is S.RUNNING and row.kind != "batch":
            fields = {"cancel_reason": reason, "cancel_grace_ms": grace_ms}
            # Its node reads the row when told (or, lost, the execution ends `cancelled`).
            journal = self.executor.journal
            recorded = await journal.transition(row.id, S.CANCEL_REQUESTED, fields=fields, message=reason)
            if recorded is not None:
                return
        await self.store.ask_cancel(row.id, reason, grace_ms)
        if row.status is S.QUEUED and row.node_id is None:
            async with self.claiming:
                claimed = await self.store.claim_one(self.node_id, row.id, self._workspaces)
                live = self._submit(claimed) if claimed is not None else None
            if live is not None:
                await live.cancel_handled.wait()
                return
        watching = self.store.watches.watch(row.id, follower=False)
        with watching as watch, trio.move_on_after(self._every_s * 4 + 5):
            while True:
                seen = watch.version
                found = await self.store.get_execution(row.id)
                if found is None or found.row.status is S.CANCEL_REQUESTED or found.row.status.terminal:
                    return
                await watch.wait_changed(seen)

    def _remote_change(self, execution_id: str) -> None:
        """On the trio thread: another node changed an execution (or, "", maybe any)."""
        assert self._nursery is not None
        ids = list(self.executor.live) if execution_id == "" else [execution_id]
        for eid in ids:
            if eid in self.executor.live:
                self._nursery.start_soon(self._check, eid)

    async def _check(self, execution_id: str) -> None:
        live = self.executor.live.get(execution_id)
        if live is None:
            return
        try:
            found = await self.store.get_execution(execution_id)
        except Unavailable as exc:
            log.warning("cluster: cannot read %s after another node changed it: %s", execution_id, exc)
            return
        if found is None or live.done.is_set():
            return
        row = found.row
        if row.status.terminal:
            why = row.error_code or row.status.value
            log.warning("cluster: %s was ended by another node (%s): killing its tree", execution_id, why)
            live.request_stop(Stop.SHUTDOWN, f"ended by another node ({why})", 0)
        elif row.cancel_grace_ms is not None and live.stop is None:
            live.request_stop(Stop.CANCEL, row.cancel_reason, row.cancel_grace_ms)

    # -- heartbeats and lost nodes --------------------------------------------------------------

    async def _beat(self) -> None:
        while True:
            await trio.sleep(self._every_s)
            try:
                await self._heartbeat()
            except Unavailable as exc:
                log.warning("cluster: heartbeat failed: %s", exc)

    async def _reap(self) -> None:
        while True:
            await trio.sleep(self._every_s)
            try:
                await self._reap_once()
            except Unavailable as exc:
                log.warning("cluster: cannot look for lost nodes: %s", exc)

    async def _reap_once(self) -> None:
        released = await self.store.release_lost_claims(self.node_id)
        if released:
            log.warning("cluster: %d queued executions of lost nodes are back in the queue", released)
        for row in await self.store.lost_executions(self.node_id):
            if row.node_id == self.node_id:
                continue  # this node is alive, whatever its last heartbeat says
            message = f"its node {row.node_id!r} stopped beating (lease {self.settings.node_lease_ms} ms)"
            # A cancel that was recorded (the user asked for the end) ends it `cancelled`.
            asked = row.status is S.CANCEL_REQUESTED or (
                row.status is S.QUEUED and row.cancel_grace_ms is not None
            )
            if asked:
                message += " before it carried out the cancel"
            await self._end(
                row, S.CANCELLED if asked else S.FAILED, {"code": "node_lost", "message": message}
            )
        for row in await self.store.overdue_unclaimed(self.node_id, now_ms()):
            message = f"the deadline of {row.timeout_ms} ms passed while queued"
            await self._end(row, S.TIMED_OUT, {"code": "timeout", "message": message})

    async def _end(self, row: ExecutionRow, status: S, error: dict[str, str]) -> None:
        fields: dict[str, Any] = {
            "finished_at": now_ms(),
            "error_code": error["code"],
            "error_message": error["message"],
        }
        outcome = Outcome(status, error=error)
        directory = self.settings.layout.execution(row.id)
        # Its files are on its node's disk: the preview and the exit's tails come from the journal.
        output = await journaled_output(self.store, row.id)
        fields["preview_json"] = journaled_preview(row, output).model_dump_json(by_alias=True)
        with trio.CancelScope(shield=True):
            sequence = await self.executor.journal.transition(
                row.id,
                status,
                fields=fields,
                message=error["message"],
                error=error,
                exit_body=exit_body(directory, outcome, journaled_tails(output)),
            )
        if sequence is not None:
            log.warning("cluster: %s ended %s: %s", row.id, status.value, error["message"])
