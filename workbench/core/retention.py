"""Retention: deleting ended executions in bulk, by age (`WORKBENCH_RETENTION`) or on request,
giving their space back, and what the store holds (`GET /v1/stats`).

A delete takes `_CHUNK` executions at a time: it finds them (a read), removes their directories,
then their rows in one short transaction (`deletes`: files first, so that it works on a full
disk); live executions' writes go on between the chunks. Then it gives the freed pages back to the
filesystem a few MiB at a time.

On a shared store an execution's directory is on the disk of the node that ran it, whichever node
deleted it: each node removes its directories of executions the store no longer holds, as it is
told of the deletes, at its start (for those deleted while it was down) and every few minutes
(for any it was not told of).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import trio

from workbench.core.deletes import Deletes
from workbench.core.principals import Principal
from workbench.core.records import now_ms
from workbench.core.settings import SECONDS, MiB, Settings
from workbench.core.store import Store
from workbench.wire.ids import created_ms
from workbench.wire.stats import Stats
from workbench.wire.status import TERMINAL, ExecutionStatus

log = logging.getLogger("workbench.core.retention")

#: Executions deleted per transaction.
_CHUNK = 256
#: Bytes given back per transaction.
_RECLAIM_STEP = 8 * MiB
#: How often the retention sweep runs at most and at least.
_SWEEP_MIN_MS = 1 * SECONDS
_SWEEP_MAX_MS = 60 * SECONDS
#: How often a node looks for directories of executions deleted unheard.
_LEFTOVERS_S = 300
#: A directory is made just before its execution's row commits: one of an execution made this
#: recently is left to a later look.
_SETTLED_MS = 60 * SECONDS


class Retention:
    """Bulk deletes and the store's statistics."""

    def __init__(
        self, settings: Settings, store: Store, deletes: Deletes, live: Callable[[], Iterable[str]] = tuple
    ) -> None:
        self.settings = settings
        self.store = store
        #: Files first, then records (`deletes`).
        self.deletes = deletes
        #: The executions this daemon runs now: their directories are never removed as leftovers.
        self.live = live
        #: Executions other nodes deleted, not yet looked at ("": some, unknown which).
        self._told: set[str] = set()
        self._wake = trio.Event()

    async def delete(
        self, principal: Principal, statuses: Iterable[ExecutionStatus] | None, ended_before: int | None
    ) -> int:
        """Delete the principal's (admin: anyone's) ended executions in `statuses` (None: every
        terminal one) that ended before `ended_before` (ms; None: whenever): how many."""
        owner = None if principal.sees_all else principal.name
        wanted = sorted(TERMINAL if statuses is None else set(statuses) & TERMINAL)
        return await self._delete(owner, wanted, ended_before)

    async def _delete(self, owner: str | None, statuses: list[ExecutionStatus], before: int | None) -> int:
        deleted = 0
        while True:
            ids = await self.store.find_terminal(owner, statuses, before, _CHUNK)
            gone = await self.deletes.delete_many(ids)
            deleted += len(gone)
            if len(ids) < _CHUNK or not gone:
                break
        if deleted:
            while await self.store.reclaim(_RECLAIM_STEP):
                pass
        return deleted

    def _remove_directories(self, ids: list[str]) -> None:
        layout = self.settings.layout
        for execution_id in ids:
            layout.execution(execution_id).remove(set())

    async def sweep(self) -> int:
        """Delete every execution that ended longer than `WORKBENCH_RETENTION` ago: how many."""
        if self.settings.retention_ms is None:
            return 0
        return await self._delete(None, sorted(TERMINAL), now_ms() - self.settings.retention_ms)

    async def run(self) -> None:
        """Sweep now and then for ever (nothing when everything is kept); a failed sweep (a full
        disk, say) is logged and tried again at the next turn."""
        retention = self.settings.retention_ms
        if retention is None:
            return
        period = min(max(retention // 4, _SWEEP_MIN_MS), _SWEEP_MAX_MS)
        while True:
            try:
                removed = await self.sweep()
                if removed:
                    log.info("retention: deleted %d executions that ended over %d ms ago", removed, retention)
            except Exception as exc:  # the daemon goes on; the next sweep tries again
                log.warning("retention: sweep failed: %s", exc)
            await trio.sleep(period / 1000)

    def deleted_elsewhere(self, execution_id: str) -> None:
        """The store's word (on the trio thread) that another node deleted `execution_id` ("":
        some may have been, unheard): `remove_leftovers` removes their directories here."""
        self._told.add(execution_id)
        self._wake.set()

    async def sweep_leftovers(self, settled_ms: int = 0) -> int:
        """Remove the directories of executions the store no longer holds (deleted through
        another node, or while this daemon was down): how many. Never the directory of one the
        store holds or this daemon runs, nor of one made in the last `settled_ms`."""
        names = await trio.to_thread.run_sync(self._directories)
        bound = now_ms() - settled_ms
        live = set(self.live())
        candidates = [n for n in names if n not in live and (created_ms(n) or bound + 1) <= bound]
        gone: list[str] = []
        for start in range(0, len(candidates), 1000):
            chunk = candidates[start : start + 1000]
            held = await self.store.existing(chunk)
            gone.extend(n for n in chunk if n not in held)
        if gone:
            await trio.to_thread.run_sync(self._remove_directories, gone)
            log.info("retention: removed the directories of %d executions deleted elsewhere", len(gone))
        return len(gone)

    def _directories(self) -> list[str]:
        try:
            return sorted(e.name for e in os.scandir(self.settings.layout.executions_dir) if e.is_dir())
        except FileNotFoundError:
            return []

    async def remove_leftovers(self) -> None:
        """For ever, on a shared store: remove the directories of the executions other nodes
        delete, as the store tells of them, and look for any unheard every `_LEFTOVERS_S`."""
        while True:
            with trio.move_on_after(_LEFTOVERS_S):
                await self._wake.wait()
            self._wake = trio.Event()
            told, self._told = self._told, set()
            try:
                if told and "" not in told:
                    gone = sorted(n for n in told - set(self.live()) if created_ms(n) is not None)
                    await trio.to_thread.run_sync(self._remove_directories, gone)
                else:
                    await self.sweep_leftovers(_SETTLED_MS)
            except Exception as exc:  # the daemon goes on; the next look tries again
                log.warning("retention: could not remove the directories of deleted executions: %s", exc)

    async def stats(self, principal: Principal) -> Stats:
        """The principal's (admin: everyone's) executions by status, and the sizes on disk."""
        store = await self.store.stats(None if principal.sees_all else principal.name)
        data_dir = await trio.to_thread.run_sync(disk_usage, self.settings.data_dir)
        counts = {s.value: store.counts.get(s.value, 0) for s in ExecutionStatus}
        return Stats(
            executions=counts,
            store_bytes=store.store_bytes,
            store_free_bytes=store.free_bytes,
            data_dir_bytes=data_dir,
            retention_ms=self.settings.retention_ms,
        )


def disk_usage(path: Path) -> int:
    """The bytes of disk the files under `path` take (blocks, as `du` counts; links not followed)."""
    total = 0
    for root, dirs, files in os.walk(path, onerror=lambda exc: None):
        for name in (*dirs, *files):
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass  # removed while walking
    return total
