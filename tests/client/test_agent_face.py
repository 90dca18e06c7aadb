"""What an agent needs of the Python client: the preview, the whole output byte for byte, live
output callbacks, `onWaitTimeout`, a clear error from a daemon that is not there, and types a
user's type checker sees (an editable install included)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, ExecutionStatus, Unavailable


def agent_scenario(url: str, tmp: Path) -> None:
    with Client(url, TOKEN) as wb:
        run = wb.run_bash("echo hi; echo oops >&2")
        assert run.preview is not None
        assert (run.preview.stdout, run.preview.stderr) == ("hi\n", "oops\n")
        assert wb.output(run, "stdout") == b"hi\n" and wb.output(run, "stderr") == b"oops\n"

        # Past the event budget: events first, then the artifact holds every byte.
        big = wb.run_bash("seq 1 900000; printf 'tail \\377'", preview_bytes=2048)
        expected = b"".join(b"%d\n" % i for i in range(1, 900_001)) + b"tail \xff"
        assert big.output.truncated and wb.output(big) == expected
        assert big.preview is not None and big.preview.stdout.endswith("900000\ntail \ufffd")
        assert len(big.preview.stdout.encode()) <= 2048 and big.preview.stdout_elided_bytes > 0
        binary = wb.run_bash("printf 'a\\377b\\n' >&2")
        assert wb.output(binary, "stderr") == b"a\xffb\n" and wb.output(binary) == b""

        # Callbacks are fed live: the command waits for a file that the callback itself makes.
        seen: list[tuple[str, str]] = []
        gate = tmp / "go"

        def on_stdout(text: str) -> None:
            seen.append(("stdout", text))
            if "ready" in text:
                gate.touch()

        live = wb.run_bash(
            f"echo ready; while [ ! -e {gate} ]; do sleep 0.02; done; echo after; echo err >&2",
            on_stdout=on_stdout,
            on_stderr=lambda text: seen.append(("stderr", text)),
            wait_timeout=60,
        )
        assert live.status is ExecutionStatus.COMPLETED
        assert "".join(t for s, t in seen if s == "stdout") == "ready\nafter\n"
        assert "".join(t for s, t in seen if s == "stderr") == "err\n"

        # on_wait_timeout with callbacks, and without.
        slow = f"while [ ! -e {tmp}/never ]; do sleep 0.05; done"
        detached = wb.run_bash(slow, wait_timeout=0.3, on_wait_timeout="detach", on_stdout=print)
        assert detached.detached and not detached.terminal
        cancelled = wb.run_bash(slow, wait_timeout=0.3, on_wait_timeout="cancel")
        assert cancelled.status is ExecutionStatus.CANCELLED
        wb.cancel(detached)
        assert wb.wait(detached, timeout=30).status is ExecutionStatus.CANCELLED
        with pytest.raises(ValueError, match="wait_timeout"):
            wb.run_bash("true", on_wait_timeout="cancel")

        listed = wb.list(status="completed", kind="workbench_bash", limit=2, preview=True)
        assert listed and all(e.preview is not None for e in listed)
        assert all(e.preview is None for e in wb.list(limit=2))


async def test_the_agent_face_of_the_client(wb: DaemonHandle, tmp_path: Path) -> None:
    with ceilings.within(90, "the client's agent scenario"):
        await trio.to_thread.run_sync(agent_scenario, wb.url, tmp_path)


async def test_the_async_client_feeds_callbacks_live_too(wb: DaemonHandle) -> None:
    chunks: list[str] = []
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await client.run_bash("echo one; sleep 0.1; echo two", on_stdout=chunks.append)
        assert run.status is ExecutionStatus.COMPLETED and "".join(chunks) == "one\ntwo\n"
        assert await client.output(run) == b"one\ntwo\n"


def test_events_from_a_daemon_that_is_not_there_fail_at_once(tmp_path: Path) -> None:
    """No daemon listens: a clear `Unavailable` within a few seconds, not a minute of retries."""
    for url in ("http://127.0.0.1:9", f"unix://{tmp_path}/no.sock"):
        began = time.monotonic()
        with Client(url, TOKEN, reconnect_for=60) as wb, pytest.raises(Unavailable, match="cannot reach"):
            next(wb.events("ex_01JD0000000000000000000000"))
        assert time.monotonic() - began < 10, url


USER_CODE = """
from workbench import Client, Execution, StatusName

def finished(wb: Client, status: StatusName) -> list[Execution]:
    return wb.list(status=status, kind="workbench_bash")

def main() -> None:
    with Client() as wb:
        run = wb.run_bash("true", cwd="/", preview_format="plain", on_wait_timeout="return")
        if run.status == "completed" and run.preview is not None:
            print(run.preview.stdout, wb.output(run, "stderr").decode())
"""

WRONG_CODE = """
from workbench import Client

with Client() as wb:
    wb.list(status="complete")
    wb.output("ex_01JD0000000000000000000000", "stdin")
"""


@pytest.mark.timeout(300)
def test_a_users_type_checker_finds_the_package_and_its_types(tmp_path: Path) -> None:
    """mypy --strict on a script outside the repository: the package is found (editable install)
    through `py.typed`, and the Literal types catch a misspelt status and a stream name."""
    (tmp_path / "good.py").write_text(USER_CODE)
    (tmp_path / "wrong.py").write_text(WRONG_CODE)
    # One run over both files (the package is checked once): every error is in wrong.py.
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--config-file", "/dev/null"]
    done = subprocess.run(
        [*mypy, "good.py", "wrong.py"], cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if ": error: " in line]
    assert errors and all(line.startswith("wrong.py:") for line in errors), done.stdout
    assert "Literal['complete']" in done.stdout and "Literal['stdin']" in done.stdout
    assert "import-not-found" not in done.stdout
