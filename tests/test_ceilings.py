"""Every test has a ceiling: a hung test fails with a traceback instead of hanging CI."""

from __future__ import annotations

import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_gives_every_test_a_default_timeout() -> None:
    """pytest-timeout is a dev dependency and [tool.pytest.ini_options] sets its default ceiling."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    dev = project["project"]["optional-dependencies"]["dev"]
    assert any(d.replace("_", "-").startswith("pytest-timeout") for d in dev), dev
    options = project["tool"]["pytest"]["ini_options"]
    assert "timeout" in options, "[tool.pytest.ini_options] lost its default per-test timeout"
    # Some ceiling, and one far below CI's 90 minutes: a test needing more says so with a marker.
    assert 0 < float(options["timeout"]) <= 600, options["timeout"]
    assert options.get("timeout_method") == "signal", "tests/ceilings.py expects the alarm as its backstop"


HUNG = """
import trio


async def test_waits_forever() -> None:
    await trio.Event().wait()


async def test_ignores_cancellation() -> None:
    with trio.CancelScope(shield=True):
        await trio.sleep(3600)


async def test_after_them() -> None:
    await trio.sleep(0)
"""


async def _inner_pytest(tmp_path: Path, source: str, within_s: float) -> tuple[int, str]:
    """Run `source` as a test file under tests/conftest.py with a ceiling of 3 s: (status, stdout).

    One that has not ended within `within_s` is made to dump every thread's stack (faulthandler, on
    SIGABRT) and the test fails with what it printed: where it hung, not just that it did."""
    (tmp_path / "test_inner.py").write_text(source)
    (tmp_path / "pytest.ini").write_text("[pytest]\ntrio_mode = true\ntimeout = 3\ntimeout_method = signal\n")
    argv = [sys.executable, "-X", "faulthandler", "-m", "pytest", "-p", "tests.conftest"]
    argv += ["-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path)]
    argv.append(str(tmp_path / "test_inner.py"))
    out = bytearray()
    async with trio.open_nursery() as nursery:
        pipe, both = subprocess.PIPE, subprocess.STDOUT
        process = await trio.lowlevel.open_process(argv, cwd=ROOT, stdout=pipe, stderr=both)
        assert process.stdout is not None
        nursery.start_soon(_read_all, process.stdout, out)
        try:
            with trio.move_on_after(within_s):
                await process.wait()
            if process.returncode is None:
                process.send_signal(signal.SIGABRT)
                with trio.move_on_after(10):
                    await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
    text = out.decode(errors="replace")
    status = await process.wait()
    if status == -signal.SIGABRT:
        raise AssertionError(f"the inner pytest had not ended within {within_s:g} s:\n{text[-9000:]}")
    return status, text


async def _read_all(stream: trio.abc.ReceiveStream, into: bytearray) -> None:
    async with stream:
        while chunk := await stream.receive_some():
            into += chunk


async def test_a_hung_trio_test_fails_with_where_it_waited_and_the_next_one_runs(tmp_path: Path) -> None:
    """Under tests/conftest.py, with a ceiling of 3 s: the test waiting forever is cancelled from inside
    trio and fails with its stack; the one ignoring cancellation meets the alarm; the next one passes."""
    status, out = await _inner_pytest(tmp_path, HUNG, 90)
    assert status == 1, out[-3000:]
    assert "2 failed, 1 passed" in out, out[-3000:]
    assert "Timeout: the test came within 0.75 s of its ceiling of 3 s" in out, out[-3000:]
    assert "in test_waits_forever\n    await trio.Event().wait()" in out, out[-3000:]
    assert "in test_ignores_cancellation\n    await trio.sleep(3600)" in out, out[-3000:]
    assert "Timeout (>3.0s) from pytest-timeout" in out, "the alarm ended the shielded one"
    assert "run() from inside a run()" not in out, out[-3000:]


SLOW_WATCH = """
import time

from tests import ceilings

_stacks = ceilings._stacks


def _slow_stacks() -> str:
    # The watch wakes 0.75 s before the ceiling of 3 s; this keeps it busy past the alarm, as a
    # loaded machine can when it leaves the process without a core at that moment.
    until = time.monotonic() + 1.5
    while time.monotonic() < until:
        pass
    return _stacks()


ceilings._stacks = _slow_stacks
"""


async def test_the_alarm_during_the_watch_waits_for_it_and_still_ends_the_test(tmp_path: Path) -> None:
    """The alarm comes while the watch itself runs (its exception there would crash trio's run and
    leave the test that ignores cancellation waiting forever): it comes again once the watch is done."""
    status, out = await _inner_pytest(tmp_path, SLOW_WATCH + HUNG, 40)
    assert status == 1, out[-3000:]
    assert "2 failed, 1 passed" in out, out[-3000:]
    assert "Timeout (>3.0s) from pytest-timeout" in out, out[-3000:]
    assert "in test_ignores_cancellation\n    await trio.sleep(3600)" in out, out[-3000:]
    assert "TrioInternalError" not in out, out[-3000:]


SYSTEM_TASK_AT_THE_ALARM = """
import time

import trio


async def _busy_across_the_ceiling() -> None:
    # A system task (trio's own, at the end of a run; or one a library spawns) that has the
    # process when the alarm of 3 s comes: the alarm's exception there would crash trio's run.
    await trio.sleep(2.7)
    until = time.monotonic() + 0.6
    while time.monotonic() < until:
        pass


async def test_ignores_cancellation_past_the_alarm() -> None:
    trio.lowlevel.spawn_system_task(_busy_across_the_ceiling)
    with trio.CancelScope(shield=True):
        await trio.sleep(3600)


async def test_after_it() -> None:
    await trio.sleep(0)
"""


async def test_an_alarm_in_a_system_task_comes_again_in_the_test(tmp_path: Path) -> None:
    """The alarm comes while a system task runs (in CI: trio finalizing the run of a test the
    watch had cancelled): it comes again a moment later, where it ends the test, not trio."""
    status, out = await _inner_pytest(tmp_path, SYSTEM_TASK_AT_THE_ALARM, 40)
    assert status == 1, out[-3000:]
    assert "1 failed, 1 passed" in out, out[-3000:]
    assert "Timeout (>3.0s) from pytest-timeout" in out, out[-3000:]
    assert "TrioInternalError" not in out, out[-3000:]


SYSTEM_TASK_BLOCKING = """
import time

import trio


async def _blocks_the_loop() -> None:
    await trio.sleep(1)
    time.sleep(600)  # a system task that blocks trio's loop with synchronous code, watch included


async def test_waits_while_a_system_task_blocks() -> None:
    trio.lowlevel.spawn_system_task(_blocks_the_loop)
    await trio.Event().wait()


async def test_after_it() -> None:
    await trio.sleep(0)
"""


async def test_a_system_task_that_blocks_the_loop_meets_the_alarm_in_the_end(tmp_path: Path) -> None:
    """The alarm put off while a system task has the process is put off for a few seconds only:
    one that blocks trio's loop for good still meets it, and the next test runs."""
    status, out = await _inner_pytest(tmp_path, SYSTEM_TASK_BLOCKING, 40)
    assert status == 1, out[-3000:]
    assert "1 failed, 1 passed" in out, out[-3000:]
    assert "Timeout (>3.0s) from pytest-timeout" in out, out[-3000:]
    assert "in _blocks_the_loop" in out, "the alarm's traceback shows where it blocked"


SLOW_REPORT = """
import time


def pytest_runtest_logreport(report):
    if report.when == "call":
        time.sleep(0.5)  # a loaded machine's pause after the run, before pytest-timeout lets go
"""


async def test_an_alarm_deferred_past_the_watch_does_not_land_in_pytests_reporting(tmp_path: Path) -> None:
    """The watch ended the test's run, but the alarm it deferred is still to come: it must not
    land in pytest's own reporting of a test already ended (an INTERNALERROR)."""
    (tmp_path / "conftest.py").write_text(SLOW_REPORT)
    status, out = await _inner_pytest(tmp_path, SLOW_WATCH + HUNG, 40)
    assert status == 1, out[-3000:]
    assert "INTERNALERROR" not in out, out[-3000:]
    assert "2 failed, 1 passed" in out, out[-3000:]
    assert "in test_waits_forever\n    await trio.Event().wait()" in out, out[-3000:]
    assert "in test_ignores_cancellation\n    await trio.sleep(3600)" in out, out[-3000:]
