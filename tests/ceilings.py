"""A trio test that hangs fails with where every task waits, instead of hanging the suite.

pytest-timeout (pyproject.toml) bounds every test with SIGALRM. That serves a synchronous test,
but a trio test that hangs is almost always waiting in trio's event loop, so the alarm's exception
is raised inside epoll: the test fails with a traceback of trio's internals, and the broken run
stays installed, so that every later trio test fails too ("Attempted to call run() from inside a
run()"). So conftest.py runs each trio test under `run` below, which watches from inside trio:
`grace()` before pytest-timeout's ceiling it notes where every task waits and cancels the test
function (its fixtures then tear down as usual), half the grace later it cancels everything that
is left, and the test fails with those stacks. The alarm stays as the backstop, for a test that
ignores cancellation or blocks trio's loop with synchronous code (its traceback then shows where);
`run` then closes the broken run so that the next test starts cleanly. The alarm must not land in
a system task: not in the watch itself (a loaded machine can delay the watch until the ceiling),
nor in trio's own (finalizing the run of a test the watch just cancelled): its exception would
crash trio's run there and leave a test that ignores cancellation waiting forever. `guard_alarm`
wraps pytest-timeout's handler so that an alarm there comes again a moment later (or, once the
run has ended, late enough to miss pytest's reporting of the failed test), for a few seconds at
most: a system task that blocks trio's loop for good meets it then, and the broken run is closed.

A wait inside a test has a bound of its own, closer to what it waits for: `within` fails it with
what was awaited.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import signal
import threading
import time
import traceback
import types
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import trio

# The ceiling pytest-timeout set for the item (conftest.py's pytest_timeout_set_timer puts it here).
CEILING = pytest.StashKey[float]()
GRACE_S = 15.0
# How soon an alarm that came during a system task comes again, and for how long at most: a
# system task that blocks trio's loop for good then meets it there (and the run ends, broken).
ALARM_AGAIN_S = 0.05
ALARM_PUT_OFF_S = 5.0
# How late an alarm still to come again comes once the test's run has ended: pytest-timeout lets
# go of a failed test just after reporting it, and its alarm must not land in pytest's reporting
# (an INTERNALERROR); a synchronous teardown that hangs still gets it.
ALARM_AFTER_RUN_S = 10.0
# Whether an alarm that came during a system task is still to come again.
_deferred = [False]
# When the alarm was first put off (time.monotonic()), while it is.
_put_off_since: list[float | None] = [None]
# The task `run` runs the test under: the alarm may land in it, its descendants or trio's loop.
_main: list[trio.lowlevel.Task | None] = [None]

# Frames of these are left out of the stacks: they tell how trio and pytest wait, not what for.
_PLUMBING = (
    *(
        os.path.dirname(spec.origin) + os.sep
        for name in ("trio", "outcome", "_pytest", "pytest_trio")
        if (spec := importlib.util.find_spec(name)) is not None and spec.origin
    ),
    __file__,
)


@contextmanager
def within(seconds: float, what: str) -> Iterator[None]:
    """`trio.fail_after(seconds)` whose TooSlowError says what did not happen in time."""
    try:
        with trio.fail_after(seconds):
            yield
    except trio.TooSlowError as exc:
        raise trio.TooSlowError(f"{what}: not within {seconds:g} s") from exc


def grace(ceiling: float) -> float:
    """How long before the ceiling the test is cancelled (a quarter of a short ceiling)."""
    return min(GRACE_S, ceiling / 4)


def run(
    item: pytest.Item, runner: Callable[..., Any], async_fn: Callable[[], Awaitable[Any]], **kw: Any
) -> Any:
    """`runner(async_fn, **kw)`, pytest-trio's call of trio.run, under the item's ceiling."""
    __tracebackhide__ = True
    ceiling = item.stash.get(CEILING, None)
    if not ceiling:
        return runner(async_fn, **kw)
    report: list[str] = []

    async def watched() -> Any:
        _main[0] = trio.lowlevel.current_task()
        everything = trio.CancelScope()
        trio.lowlevel.spawn_system_task(_watch, ceiling, everything, report, name="tests.ceilings")
        with everything:
            return await async_fn()

    _deferred[0], _put_off_since[0] = False, None
    try:
        result = runner(watched, **kw)
    except BaseException as exc:
        _main[0] = None
        _defer_past_the_run()
        _close_broken_run(exc)
        if not report:
            raise
        then = "".join(traceback.format_exception(exc))
        raise pytest.fail.Exception(f"{report[0]}\nThen the run ended with:\n{then}", pytrace=False) from None
    _main[0] = None
    _defer_past_the_run()
    if report:
        pytest.fail(report[0], pytrace=False)
    return result


def _defer_past_the_run() -> None:
    if _deferred[0]:
        _deferred[0] = False
        signal.setitimer(signal.ITIMER_REAL, ALARM_AFTER_RUN_S)


async def _watch(ceiling: float, everything: trio.CancelScope, report: list[str]) -> None:
    first = grace(ceiling)
    start = trio.current_time()
    await trio.sleep_until(start + ceiling - first)
    if trio.current_time() > start + ceiling - first / 2:
        return  # synchronous code blocked trio's loop until now: the alarm's traceback shows where
    report.append(
        f"Timeout: the test came within {first:g} s of its ceiling of {ceiling:g} s (pytest-timeout; "
        f"a test that legitimately needs more says so with @pytest.mark.timeout(N)).\n"
        f"Where each task was waiting then:\n{_stacks()}"
    )
    test = _test_scope()
    if test is not None:
        test.cancel()
        await trio.sleep(first / 2)
    everything.cancel()


def guard_alarm() -> None:
    """Wrap the SIGALRM handler pytest-timeout just set: an alarm in a system task comes again later."""
    if threading.current_thread() is not threading.main_thread():
        return
    handler = signal.getsignal(signal.SIGALRM)
    if not callable(handler):
        return  # pytest-timeout's thread method, or no ceiling

    def guarded(signum: int, frame: types.FrameType | None) -> None:
        __tracebackhide__ = True
        since = _put_off_since[0]
        if _in_system_task() and (since is None or time.monotonic() - since < ALARM_PUT_OFF_S):
            _deferred[0] = True
            _put_off_since[0] = time.monotonic() if since is None else since
            signal.setitimer(signal.ITIMER_REAL, ALARM_AGAIN_S)
            return
        _deferred[0], _put_off_since[0] = False, None
        handler(signum, frame)

    signal.signal(signal.SIGALRM, guarded)


def _in_system_task() -> bool:
    """Whether a task outside the test's own (the watch, trio's) has the process under `run`."""
    if _main[0] is None:
        return False
    try:
        task: trio.lowlevel.Task | None = trio.lowlevel.current_task()
    except RuntimeError:
        return False  # trio's loop between tasks: the exception ends the run, which `run` closes
    while task is not None:
        if task is _main[0]:
            return False
        task = task.parent_nursery.parent_task if task.parent_nursery is not None else None
    return True


def _test_scope() -> trio.CancelScope | None:
    """The cancel scope around the test function alone (pytest-trio's task "<test 'name'>")."""
    for task in _tasks(trio.lowlevel.current_root_task()):
        if task.name.startswith("<test ") and task.child_nurseries:
            return task.child_nurseries[0].cancel_scope
    return None


def _tasks(task: trio.lowlevel.Task | None) -> list[trio.lowlevel.Task]:
    if task is None:
        return []
    found = [task]
    for nursery in task.child_nurseries:
        for child in nursery.child_tasks:
            found.extend(_tasks(child))
    return found


def _stacks() -> str:
    """Each task's await stack, without the frames of trio, pytest and this module."""
    me = trio.lowlevel.current_task()
    parts = []
    for task in _tasks(trio.lowlevel.current_root_task()):
        frames = traceback.StackSummary.extract(task.iter_await_frames())
        shown = [f for f in frames if not f.filename.startswith(_PLUMBING)]
        if shown and task is not me:
            parts.append(f"  task {task.name}:\n{''.join(traceback.StackSummary.from_list(shown).format())}")
    return "".join(parts) or "  (no task outside trio and pytest)\n"


def _close_broken_run(exc: BaseException) -> None:
    """If the alarm's exception broke out of trio's loop, finish that run (else no trio test can start)."""
    if not trio.lowlevel.in_trio_run():
        return
    tb: types.TracebackType | None = exc.__traceback__
    while tb is not None:
        loop = tb.tb_frame.f_locals.get("gen") if tb.tb_frame.f_code is trio.run.__code__ else None
        if isinstance(loop, types.GeneratorType):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # "Trio guest run got abandoned"
                loop.close()
            gc.collect()  # the run's abandoned tasks complain now, in this test, not in a later one
            return
        tb = tb.tb_next
