"""Waiting until an execution is ready: a service once its readiness holds, any execution once it ends.

A tail of the journal like `Service.wait`: each commit of the execution wakes the waiter, which
reads the record again; never a timer.
"""

from __future__ import annotations

from functools import partial

import trio

from workbench.core.records import execution_from
from workbench.core.service import Principal, Service
from workbench.core.store.rows import Found
from workbench.core.waiting import first_of
from workbench.wire.models import Execution


async def wait_ready(
    service: Service, principal: Principal, execution_id: str, kind: str | None, wait_ms: int
) -> tuple[Execution, bool]:
    """Wait up to `wait_ms` until the execution is ready or terminal: (record, wait timed out)."""
    execution = await service.get(principal, execution_id, kind)  # existence and visibility first
    last: Found | None = None
    with trio.move_on_after(wait_ms / 1000), service.journal.watch(execution_id) as watch:
        while not (execution.ready or execution.terminal) and not service.stopping.is_set():
            seen = watch.version
            last = await service.store.get_execution(execution_id)
            if last is None:
                break
            execution = execution_from(last)  # without its preview, to check it
            if execution.ready or execution.terminal:
                break
            await first_of(partial(watch.wait_changed, seen), service.stopping.wait)
    # The answer is a record like any other, with its preview.
    if not (execution.ready or execution.terminal):  # the wait passed: the record as it is now
        execution = await service.get(principal, execution_id, kind)
    elif last is not None:  # read above without its preview
        execution = await service.record(last)
    return execution, not (execution.ready or execution.terminal)
