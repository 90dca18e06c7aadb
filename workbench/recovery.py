"""Recovery: at start, before accepting work, pick up every execution a previous daemon left.

For each execution that is not terminal in the store:
- queued and never spawned: it stays queued and runs (in its original order);
- known to the sandbox supervisor (it outlived the daemon): adopted: capture resumes at the
  journal's offsets; if it exited meanwhile, its real exit status is used;
- unknown to the supervisor (the supervisor died too): finished from the status file its
  supervisor wrote, else adopted by identity (pid + start time, or its cgroup) with an exit status
  that cannot be known, else ended `failed` with `error.code = "lost"` saying why.
Deadlines are enforced as usual, so one past its deadline is killed and ends `timed_out`.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import sandbox
from workbench import store
from workbench.executor import Executor
from workbench.runner import Live
from workbench.status import ExecutionStatus as S

log = logging.getLogger("workbench.recovery")


def _child_info(row: dict[str, Any], directory: Path) -> sandbox.ChildInfo | None:
    """How the tree was recorded: in the store once running, else in the proc file the supervisor wrote."""
    if row["child_json"]:
        return sandbox.ChildInfo.from_dict(json.loads(row["child_json"]))
    return sandbox.read_proc_file(str(directory))


async def recover(executor: Executor, db: store.Store, supervisor: sandbox.Supervisor) -> None:
    """Submit every non-terminal execution of the store to the executor, adopted or queued."""
    rows = await db.read(store.live_executions)
    known = supervisor.known()
    adopted = queued = lost = 0
    for row in rows:
        directory = executor.settings.executions_dir / row["id"]
        status = S(row["status"])
        info = _child_info(row, directory)
        if status is S.QUEUED and info is None:
            executor.submit(row)
            queued += 1
            continue
        live = Live(row["id"], row, status)
        child = known.get(row["id"])
        if child is not None:
            live.adopted, live.adopted_exit = child.info, child.status
        elif info is not None:
            exit_status = sandbox.read_status_file(str(directory), info)
            if exit_status is not None:
                live.adopted, live.adopted_exit = info, exit_status
            elif await supervisor.adopt(info):
                live.adopted, live.adopted_known = info, False
            else:
                live.reason = (
                    "lost: the process tree was gone after a daemon restart and no exit status was "
                    "recorded (the process supervisor had died too)"
                )
        else:
            live.reason = "lost: the execution was being started when the daemon died"
        if live.adopted is None:
            lost += 1
        else:
            adopted += 1
        executor.submit(row, live)
    if rows:
        log.info("recovery: %d adopted, %d queued, %d lost", adopted, queued, lost)
