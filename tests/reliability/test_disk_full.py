"""A full disk: the daemon keeps running, answers `507 storage_full` to what would write, keeps the
outcome of every running execution, and recovers by itself once space is back.

The data dir is on a small tmpfs of its own (mounted as root, unmounted at the end), filled with a
file and freed again by the test.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.disks import Disk, small_disk
from tests.procs import SHELL_ME, host_pid
from tests.reliability.conftest import DaemonProcess

Factory = Callable[..., DaemonProcess]


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    """A 16 MiB tmpfs; request it before `daemon_process`, so daemons stop before it is unmounted."""
    with small_disk(tmp_path / "disk") as handle:
        yield handle


def on_disk(daemon_process: Factory, disk: Disk, tmp_path: Path) -> DaemonProcess:
    """A daemon whose data dir is on `disk` (its log is not: it must survive the disk filling up).

    It refuses new work below 1 MiB free (the default, 16 MiB, is all this disk has).
    """
    daemon = daemon_process(disk.mount / "data", WORKBENCH_MIN_FREE_BYTES=str(1024 * 1024))
    daemon.log = tmp_path / "daemon.log"
    return daemon


def health(daemon: DaemonProcess) -> tuple[int, dict[str, Any]]:
    response = httpx.get(daemon.url + "/healthz", timeout=10)
    body: dict[str, Any] = response.json()
    return response.status_code, body


def wait_for(what: str, check: Callable[[], bool], within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not check():
        assert time.monotonic() < deadline, f"not within {within_s} s: {what}"
        time.sleep(0.05)


def up(daemon: DaemonProcess, within_s: float = 30.0) -> None:
    """Wait until the daemon answers /healthz at all (200, or 503 while degraded)."""

    def answers() -> bool:
        assert daemon.proc is not None and daemon.proc.poll() is None, daemon.log_text()
        try:
            return health(daemon)[0] in (200, 503)
        except httpx.HTTPError:
            return False

    wait_for("the daemon to answer /healthz", answers, within_s)


def degraded(daemon: DaemonProcess) -> bool:
    status, body = health(daemon)
    return status == 503 and body["status"] == "degraded" and "full" in body["reason"]


def healthy(daemon: DaemonProcess) -> bool:
    return health(daemon) == (200, {"status": "ok"})


def start_refused(daemon: DaemonProcess) -> dict[str, Any]:
    response = daemon.client.post(
        "/v1/executions/workbench_bash", json={"command": "echo never", "background": True}
    )
    assert response.status_code == 507, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "storage_full" and "full" in error["message"], error
    return error


def output_bytes(daemon: DaemonProcess, execution_id: str) -> str:
    return "".join(e["outputDelta"] for e in daemon.events(execution_id) if e["eventType"] == "output")


def printing_when_full(
    daemon: DaemonProcess, disk: Disk, tmp_path: Path, first: str = ""
) -> tuple[str, Path, int]:
    """Start a command (`first`, then a line every 10 ms until the file `stop` is made, then exit
    3), let its output be journaled, fill the disk and see the daemon say it is degraded: the
    execution's id, the `stop` file, and the command's pid on the host."""
    stop, pid_file = tmp_path / "stop", tmp_path / "pid"
    command = (
        f"{first}{SHELL_ME}; echo $me > {pid_file}; i=0; "
        f'while [ ! -e {stop} ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done 2>/dev/null; exit 3'
    )
    execution_id = daemon.start_bash(command)["executionId"]
    wait_for("output to be journaled", lambda: "line 5" in output_bytes(daemon, execution_id))
    disk.fill()
    wait_for("the daemon to report itself degraded", lambda: degraded(daemon))
    return execution_id, stop, host_pid(pid_file.read_text())


def assert_journal_whole(daemon: DaemonProcess, execution_id: str) -> None:
    """Promises 1 and 2: gapless sequences, the terminal status last, and the events' output is the
    spool file (kept as the artifact) byte for byte: nothing lost, nothing doubled."""
    events = daemon.events(execution_id)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["eventType"] == "status" and events[-1]["status"] in (
        "completed",
        "failed",
        "cancelled",
    )
    artifact = daemon.client.get(f"/v1/executions/{execution_id}/artifacts/stdout")
    assert artifact.status_code == 200, artifact.text
    assert output_bytes(daemon, execution_id) == artifact.content.decode("utf-8", errors="replace")


@pytest.mark.sqlite_only
def test_a_full_disk_during_capture_keeps_the_daemon_and_the_outcome(
    disk: Disk, daemon_process: Factory, tmp_path: Path
) -> None:
    """Promise 1 on a full disk: capture cannot commit, the daemon keeps running (degraded, new work
    refused with 507), the process exits while the disk is still full, and once space is back its
    output and its real exit code are all recorded; then the daemon is healthy again."""
    daemon = on_disk(daemon_process, disk, tmp_path)
    daemon.start()
    # Invalid UTF-8 first, so the spool file is kept as an artifact to compare the journal with.
    execution_id, stop, pid = printing_when_full(daemon, disk, tmp_path, first="printf '\\377'; ")
    start_refused(daemon)
    stop.touch()
    wait_for("the process to exit", lambda: not psutil.pid_exists(pid))
    time.sleep(1)  # the daemon tries to record the outcome, and cannot
    assert daemon.proc is not None and daemon.proc.poll() is None, daemon.log_text()
    assert daemon.get(execution_id)["status"] == "running"
    assert degraded(daemon)

    disk.free()
    record = daemon.wait(execution_id)
    assert (record["status"], record["exitCode"]) == ("failed", 3), record
    assert_journal_whole(daemon, execution_id)
    wait_for("the daemon to be healthy again", lambda: healthy(daemon))
    assert daemon.wait(daemon.start_bash("echo again")["executionId"])["status"] == "completed"


@pytest.mark.sqlite_only
def test_a_full_disk_at_accept_is_507_and_recovers_by_itself(
    disk: Disk, daemon_process: Factory, tmp_path: Path
) -> None:
    """Promise 7 on a full disk: a start is `507 storage_full` and leaves nothing behind; reads go
    on; once space is freed, starts work again without a restart."""
    daemon = on_disk(daemon_process, disk, tmp_path)
    daemon.start()
    disk.fill()
    error = start_refused(daemon)
    print(f"\n507 at accept: {error['message']}")
    assert degraded(daemon)
    start_refused(daemon)  # refused at once while the disk stays full, not tried again
    listing = daemon.client.get("/v1/executions")
    assert listing.status_code == 200 and listing.json()["executions"] == []

    disk.free()
    wait_for("the daemon to be healthy again", lambda: healthy(daemon))
    record = daemon.wait(daemon.start_bash("echo back")["executionId"])
    assert record["status"] == "completed" and output_bytes(daemon, record["executionId"]) == "back\n"


def test_a_restart_on_a_full_disk_says_so_and_recovers_by_itself(
    disk: Disk, daemon_process: Factory, tmp_path: Path
) -> None:
    """Promise 6 on a full disk: a daemon killed with a run going on, started again on a full disk,
    says so in one line, serves reads, refuses new work; once space is back, the adopted run ends
    with its real exit code and all its output."""
    daemon = on_disk(daemon_process, disk, tmp_path)
    daemon.start()
    stop = tmp_path / "stop"
    command = f"printf '\\377'; echo before; while [ ! -e {stop} ]; do sleep 0.02; done; echo after; exit 4"
    execution_id = daemon.start_bash(command)["executionId"]
    wait_for("output to be journaled", lambda: "before" in output_bytes(daemon, execution_id))
    daemon.kill9()

    disk.fill()
    daemon.start(wait=False)
    up(daemon)
    wait_for("the daemon to report itself degraded", lambda: degraded(daemon))
    log = daemon.log_text()
    assert "Traceback" not in log, log
    said = [line for line in log.splitlines() if line.startswith("workbench:") and " is full " in line]
    assert len(said) == 1, log
    print(f"\nrestart on a full disk: {said[0]}")
    assert daemon.get(execution_id)["status"] == "running"
    start_refused(daemon)

    disk.free()
    stop.touch()
    record = daemon.wait(execution_id)
    assert (record["status"], record["exitCode"]) == ("failed", 4), record
    assert output_bytes(daemon, execution_id) == "\ufffdbefore\nafter\n"
    assert_journal_whole(daemon, execution_id)
    wait_for("the daemon to be healthy again", lambda: healthy(daemon))


@pytest.mark.sqlite_only
def test_a_cancel_on_a_full_disk_kills_now_and_is_recorded_later(
    disk: Disk, daemon_process: Factory, tmp_path: Path
) -> None:
    """Promise 3 on a full disk: a cancel kills the tree at once, but cannot be recorded: `507`
    saying so; once space is back the execution ends `cancelled`, its journal whole."""
    daemon = on_disk(daemon_process, disk, tmp_path)
    daemon.start()
    pid_file = tmp_path / "pid"
    # As the host finds it (`SHELL_ME`): $$ is the pid namespace's where the tree has one.
    command = f"printf '\\377'; {SHELL_ME}; echo $me > {pid_file}; echo up; exec sleep 300"
    execution_id = daemon.start_bash(command)["executionId"]
    wait_for("output to be journaled", lambda: "up" in output_bytes(daemon, execution_id))
    pid = host_pid(pid_file.read_text())

    disk.fill()
    response = daemon.client.post(f"/v1/executions/{execution_id}/cancel", json={"reason": "no room"})
    assert response.status_code == 507, response.text
    assert "cancel is under way" in response.json()["error"]["message"]
    wait_for("the tree to be killed", lambda: not psutil.pid_exists(pid))
    assert daemon.get(execution_id)["status"] == "running"

    disk.free()
    record = daemon.wait(execution_id)
    assert record["status"] == "cancelled" and record["cancelReason"] == "no room", record
    statuses = [e["status"] for e in daemon.events(execution_id) if e["eventType"] == "status"]
    assert statuses[-2:] == ["cancel_requested", "cancelled"], statuses
    assert_journal_whole(daemon, execution_id)
