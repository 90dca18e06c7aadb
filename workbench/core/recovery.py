"""Recovery: at start, before accepting work, pick up every execution a previous daemon left.

For each execution that is not terminal in the store:
- a batch: its supervisor starts again and reads its journal from the start;
- queued and never spawned: it stays queued and runs (in its original order);
- known to the sandbox supervisor (it outlived the daemon): adopted: capture resumes at the
  journal's offsets; if it exited meanwhile, its real exit status is used;
- unknown to the supervisor (the supervisor died too): finished from the status file its
  supervisor wrote, else adopted by identity (pid + start time, or its cgroup) with an exit status
  that cannot be known, else (its tree gone) its output kept and ended `failed` with
  `error.code = "lost"` saying why.
Deadlines are enforced as usual, so one past its deadline is killed and ends `timed_out`.
"""

from __future__ import annotations

import json
import logging
import signal
from pathlib import Path

import trio

import sandbox
from workbench.core.executor import Executor
from workbench.core.live import Live, adoption_note, journal_adoption
from workbench.core.store import ExecutionRow, Store
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.recovery")


def _child_info(row: ExecutionRow, directory: Path) -> sandbox.ChildInfo | None:
    """How the tree was recorded: in the store once running, else in the proc file the supervisor wrote."""
    if row.child_json:
        return sandbox.ChildInfo.from_dict(json.loads(row.child_json))
    return sandbox.read_proc_file(str(directory))


async def recover(
    executor: Executor, store: Store, supervisor: sandbox.Supervisor, *, node_id: str | None = None
) -> None:
    """Submit every non-terminal execution of the store to the executor, adopted or queued.

    Adopted executions are journaled (an event saying so) before this returns, and they take
    their concurrency slots before any queued execution is granted one. `node_id`: the store is
    shared, and only what this node claimed is its own (the rest is other nodes', or the queue's).
    """
    rows = await store.live_executions()
    if node_id is not None:
        rows = [row for row in rows if row.node_id == node_id]
    # A code context's executions are its own to take back, once it is (the contexts first).
    in_contexts = [row for row in rows if row.context_id is not None]
    rows = [row for row in rows if row.context_id is None]
    await executor.contexts.recover(in_contexts)
    known = supervisor.known()
    queued: list[ExecutionRow] = []
    found: list[Live] = []
    # A batch runs no tree: its supervisor reads its journal again. Submitted first, so that its
    # items count against its concurrency from the start.
    living_services: set[str] = set()
    for row in rows:
        if row.kind == "batch":
            executor.submit(row)
    for row in rows:
        if row.kind == "batch":
            continue
        directory = executor.settings.layout.execution(row.id).path
        status = row.status
        info = _child_info(row, directory)
        if status is S.QUEUED and info is None:
            queued.append(row)
            continue
        live = Live(row.id, row, status)
        child = known.get(row.id)
        if child is not None:
            # The supervisor outlived the daemon and still holds the tree (or its exit status).
            live.adopted, live.adopted_exit = child.info, child.status
            if row.service and not child.empty:
                living_services.add(row.id)
        elif info is not None and await supervisor.adopt(info):
            # The supervisor died too, but the tree lives on: held again by its identity. Its exit
            # status is the one the old supervisor recorded, if it did, else unknowable.
            live.adopted, live.adopted_known = info, False
        elif info is not None and (exit_status := sandbox.read_status_file(str(directory), info)) is not None:
            # Ended, nothing of it is left, and its status file says how.
            live.adopted, live.adopted_exit, live.held = info, exit_status, False
        elif info is not None:
            # Gone, and its supervisor died before it could say how it ended: its exit status
            # cannot be known (it ends `lost`), but what it wrote to its spool files until then
            # is kept, as for any tree that ended.
            live.adopted, live.adopted_exit, live.held = info, sandbox.UNKNOWN_EXIT, False
            live.adopted_known = False
            log.warning("recovery: execution %s: its tree and its supervisor were gone: lost", row.id)
        else:
            live.reason = "lost: the execution was being started when the daemon died"
        if live.reason is not None:
            log.warning("recovery: execution %s %s", live.id, live.reason)
        found.append(live)
    await _release_strays(supervisor, known, {row.id for row in rows} | executor.contexts.names())
    # Recovery is a record too, committed before the daemon accepts work (one group commit).
    async with trio.open_nursery() as nursery:
        for live in found:
            if live.adopted is not None and live.status is not S.QUEUED:
                nursery.start_soon(_note, executor, live, live.id in living_services)
    for live in found:
        executor.submit(live.row, live)
    for row in queued:
        executor.submit(row)
    if rows:
        adopted = sum(1 for live in found if live.adopted is not None)
        log.info("recovery: %d adopted, %d queued, %d lost", adopted, len(queued), len(found) - adopted)


async def _note(executor: Executor, live: Live, living_service: bool) -> None:
    await journal_adoption(executor.journal, live.id, adoption_note(live, living_service))


async def _release_strays(
    supervisor: sandbox.Supervisor, known: dict[str, sandbox.KnownChild], live_ids: set[str]
) -> None:
    """Trees the supervisor holds for executions that are no longer live: already ended (the
    daemon died before releasing them) or unknown. Nothing runs without a record: kill, release."""
    for name, child in known.items():
        if name in live_ids:
            continue
        try:
            if not child.empty:
                log.warning("recovery: killing %s, which runs without a live record", name)
                await supervisor.signal(name, signal.SIGKILL)
                with trio.move_on_after(10):
                    await supervisor.wait_empty(name)
            await supervisor.release(name)
        except sandbox.SandboxError as exc:
            log.warning("recovery: could not release %s: %s", name, exc)
