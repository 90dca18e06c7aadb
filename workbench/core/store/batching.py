"""How both engines' writer threads gather a batch: one transaction, one commit for all of it.

A batch is every job waiting when the writer takes the first. While every job of a batch is
lazy (nobody waits for it at once: a `running` status), the writer waits a little longer
(`LINGER_S`) for another job to share the commit: a short command's end comes within a few ms of
its `running`, so both cost one fsync instead of two, back to back, on the way to the answer. A
job somebody awaits ends the wait at once.
"""

from __future__ import annotations

import queue
import time
from typing import Any, Protocol

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
