"""How both engines' writer threads gather a batch: one transaction, one commit for all of it;
and the end of an execution with its held output, which both engines write alike.

A batch is every job waiting when the writer takes the first. While every job of a batch is
lazy (nobody waits for it at once: a `running` status), the writer waits a little longer
(`LINGER_S`) for another job to share the commit: a short command's end comes within a few ms of
its `running`, so both cost one fsync instead of two, back to back, on the way to the answer. A
job somebody awaits ends the wait at once.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from workbench.core.store.rows import EventBuilder, ExecutionRow
from workbench.wire.status import ExecutionStatus

#: Most jobs one transaction takes; keeps a commit's latency bounded under a flood.
MAX_BATCH = 512
#: How long a batch of lazy jobs only waits for another job to share its commit.
LINGER_S = 0.010


class Lingering(Protocol):
    @property
    def lazy(self) -> bool: ...


def gather(
    writes: queue.SimpleQueue[Any], first: Lingering, stop: object, linger_s: float
) -> tuple[list[Any], bool]:
    """The batch `first` begins, from the jobs in `writes`; (batch, whether `stop` came)."""
    batch: list[Any] = [first]
    linger_until = time.monotonic() + linger_s
    while len(batch) < MAX_BATCH:
        try:
            nxt = writes.get_nowait()
        except queue.Empty:
            left = linger_until - time.monotonic()
            if left <= 0 or not all(job.lazy for job in batch):
                break
            try:
                nxt = writes.get(timeout=left)
            except queue.Empty:
                break
        if nxt is stop:
            return batch, True
        batch.append(nxt)
    return batch, False


class Executes(Protocol):
    """Either engine's connection."""

    def execute(self, query: str, /) -> object: ...


class Queries(Protocol):
    """What `transition_after` needs of an engine's queries module (their signatures agree)."""

    transition: Callable[..., ExecutionRow | None]
    append_events: Callable[..., int | None]


def transition_after(
    q: Queries,
    conn: Executes,
    execution_id: str,
    target: ExecutionStatus,
    allowed: tuple[ExecutionStatus, ...],
    fields: Mapping[str, Any],
    event: EventBuilder,
    owner: str | None,
    before: Sequence[tuple[str, EventBuilder]],
) -> ExecutionRow | None:
    """`q.transition`, after `before`'s events (the output held until the end), in the job's own
    transaction: a refused transition takes them back (a savepoint, in either engine's SQL)."""
    if not before:
        return q.transition(conn, execution_id, target, allowed, fields, event, owner)
    conn.execute("SAVEPOINT before_end")
    row = None
    if q.append_events(conn, execution_id, before, {}) is not None:
        row = q.transition(conn, execution_id, target, allowed, fields, event, owner)
    if row is None:
        conn.execute("ROLLBACK TO SAVEPOINT before_end")
    conn.execute("RELEASE SAVEPOINT before_end")
    return row
