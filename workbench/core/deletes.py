"""Deleting ended executions so that it works on a full disk: their files go first, then their
records.

A store needs room to commit a delete (SQLite writes it to its WAL first): were the records
deleted first, a full disk would refuse the very delete that could make room. So a delete sets each
execution's directory aside (renamed to `<id>.deleting`, which takes no room), removes the files in
it (spools, artifacts: what takes the room), commits the records, and removes the emptied
directory last.

Between the two (a commit the disk still refuses, or a crash) the record stays readable, events
and all; its artifacts answer 404 saying that a delete removed their files; and the emptied
directory marks the delete as not finished. The next delete, or the next start, finishes it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import trio

from workbench.core.layout import Layout
from workbench.core.store import Store
from workbench.wire.errors import Unavailable

log = logging.getLogger("workbench.core.deletes")

T = TypeVar("T")


class Deletes:
    """Files first, then records; and the deletes not finished yet."""

    def __init__(self, layout: Layout, store: Store) -> None:
        self.layout = layout
        self.store = store
        #: Executions whose files a delete removed and whose records may still be there.
        self.unfinished: set[str] = set()
        #: Executions deleted since the start, one at a time or in bulk (for `/metrics`).
        self.deleted_total = 0

    def removed_files(self, execution_id: str) -> bool:
        """Whether a delete not finished yet removed the execution's files."""
        return execution_id in self.unfinished

    async def delete_one(self, execution_id: str) -> bool:
        """Delete an ended execution, its files then its record (`Store.delete_execution`): False
        when the store holds no ended execution of that id. Then finish the deletes left over."""
        deleted = await self._delete([execution_id], lambda: self.store.delete_execution(execution_id))
        await self.finish()
        return deleted

    async def delete_many(self, execution_ids: Sequence[str]) -> list[str]:
        """Delete ended executions, their files then their records in one transaction, with the
        deletes left over: those of `execution_ids` deleted."""
        wanted = sorted(set(execution_ids) | self.unfinished)
        if not wanted:
            return []
        deleted = await self._delete(wanted, lambda: self.store.delete_terminal(wanted))
        asked = set(execution_ids)
        return [i for i in deleted if i in asked]

    async def _delete(self, execution_ids: list[str], commit: Callable[[], Awaitable[T]]) -> T:
        """Remove the files of `execution_ids`, then `commit` the records' delete, then forget the
        emptied directories. A commit refused (`StorageFull`: the room is given back all the same)
        leaves them to the next delete or start."""
        emptied = await trio.to_thread.run_sync(self._empty, execution_ids)
        self.unfinished.update(emptied)
        done = await commit()
        # Counted at once: a cancel after the commit (the client gone) must not lose them.
        self.deleted_total += len(done) if isinstance(done, list) else int(bool(done))
        await trio.to_thread.run_sync(self._forget, execution_ids)
        self.unfinished.difference_update(execution_ids)
        return done

    def _empty(self, execution_ids: list[str]) -> list[str]:
        return [i for i in execution_ids if self.layout.execution(i).empty()]

    def _forget(self, execution_ids: list[str]) -> None:
        for execution_id in execution_ids:
            self.layout.execution(execution_id).forget()

    async def start(self) -> None:
        """At the start: finish the deletes an earlier daemon left (stopped between files and
        records); on a full disk, those the store cannot commit yet wait for the next delete."""
        self.unfinished.update(await trio.to_thread.run_sync(self.layout.unfinished_deletes))
        if self.unfinished:
            log.info("deletes: finishing %d deletes an earlier run left", len(self.unfinished))
        await self.finish()

    async def finish(self) -> None:
        """Commit the deletes left over, if any; what the store refuses now waits for the next."""
        if not self.unfinished:
            return
        left = sorted(self.unfinished)
        try:
            await self._delete(left, lambda: self.store.delete_terminal(left))
        except Unavailable as exc:
            log.warning("deletes: %d deletes wait to be finished: %s", len(left), exc)
