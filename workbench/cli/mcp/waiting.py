"""A foreground start's wait, as the agent asked for it, whatever happens to the daemon meanwhile.

A daemon that begins to stop answers the waits it holds at once, with the record as it is: a
restart two seconds into a `bash` call of `waitSeconds: 60` answered "still running after 60 s",
and the run, never handed to the exits feed (the daemon does that when a wait runs out), was
lost to the agent. Here the call waits on, through the restart, for the rest of its wait; a run
that outlives it is handed to the exits feed then, as the daemon would have.
"""

from __future__ import annotations

import trio

from workbench.client.aio import AsyncClient
from workbench.wire.errors import Unavailable
from workbench.wire.models import Execution

#: How often a daemon that cannot be reached (restarting) is tried again.
RETRY_S = 0.25
#: How long the hand-over to the exits feed is tried, once the wait is over.
DETACH_TRIES_S = 30.0


async def waited_on(
    client: AsyncClient, execution: Execution, wait_s: float | None, since: float
) -> Execution:
    """`execution` as a foreground start that began at `since` (trio's clock) and was to wait
    `wait_s` answered it (None: no wait, a background start): waited on for what is left of
    `wait_s` if it is still running and not handed to the exits feed, then handed to it."""
    if wait_s is None or execution.terminal or execution.detached:
        return execution
    deadline = since + wait_s
    while not execution.terminal and (left := deadline - trio.current_time()) > 0:
        try:
            execution = await client.wait(execution, timeout=left)
        except Unavailable:
            await trio.sleep(min(RETRY_S, left))
    with trio.move_on_after(DETACH_TRIES_S):
        while not execution.terminal and not execution.detached:
            try:
                handed = await client.detach(execution)
            except Unavailable:
                await trio.sleep(RETRY_S)
                continue
            execution = handed.execution or await client.get(execution)
    return execution
