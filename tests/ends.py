"""What the daemon's state is when an execution's end has been committed, seen from inside an
in-process daemon: a test that reads it after a wait would race the daemon's own tidying up."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from tests import ceilings

T = TypeVar("T")


@asynccontextmanager
async def noted_at_each_end(
    journal: Any, look: Callable[[str], Awaitable[T]], last: str
) -> AsyncIterator[list[tuple[str, T]]]:
    """(status, `await look(execution_id)`) each time a terminal transition of `journal` has
    committed, until the block ends and a `last` one was noted (a wait may return before its
    commit has). `look` should not wait for anything: the test goes on meanwhile."""
    transition = journal.transition
    seen: list[tuple[str, T]] = []
    noted = trio.Event()

    async def noting(execution_id: str, target: Any, **kw: Any) -> int | None:
        sequence: int | None = await transition(execution_id, target, **kw)
        if target.terminal:
            seen.append((target.value, await look(execution_id)))
            if target.value == last:
                noted.set()
        return sequence

    journal.transition = noting
    try:
        yield seen
        with ceilings.within(10, f"the {last} end's commit to return"):
            await noted.wait()
    finally:
        journal.transition = transition
