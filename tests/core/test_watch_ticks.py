"""`Watches.wait` and `run_ticks`: a stream's wait ends on a change or a tick; other waits sleep
through ticks."""

from __future__ import annotations

import trio
import trio.testing

from workbench.core.store.watch import TICK_S, Watches


async def test_a_tick_ends_a_streams_wait_and_not_a_wait_for_a_change(
    autojump_clock: trio.testing.MockClock,
) -> None:
    watches = Watches()
    woken: list[tuple[str, float]] = []
    with watches.watch("ex") as watch:

        async def stream() -> None:
            await watches.wait(watch, watch.version, watches.ticks)
            woken.append(("stream", trio.current_time()))

        async def long_poll() -> None:
            await watch.wait_changed(watch.version)
            woken.append(("wait", trio.current_time()))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watches.run_ticks)
            nursery.start_soon(stream)
            nursery.start_soon(long_poll)
            await trio.sleep(TICK_S * 2.5)
            assert [who for who, _ in woken] == ["stream"]  # the tick; the long poll slept on
            assert woken[0][1] == TICK_S
            watches.notify("ex")
            await trio.testing.wait_all_tasks_blocked()
            assert [who for who, _ in woken] == ["stream", "wait"]
            nursery.cancel_scope.cancel()


async def test_a_change_ends_a_streams_wait_before_any_tick(autojump_clock: trio.testing.MockClock) -> None:
    watches = Watches()
    with watches.watch("ex") as watch:
        seen, tick = watch.version, watches.ticks
        async with trio.open_nursery() as nursery:
            nursery.start_soon(watches.run_ticks)
            nursery.start_soon(watches.wait, watch, seen, tick)
            await trio.sleep(1)
            watches.notify("ex")
            await trio.testing.wait_all_tasks_blocked()
            assert trio.current_time() < TICK_S and watches.ticks == tick
            nursery.cancel_scope.cancel()
        # Asked again with what it saw then: it returns at once.
        with trio.fail_after(0.01):
            await watches.wait(watch, seen, tick)
