"""A full disk, as an operator meets it: the log says so once (not once per failed commit), the
product's own deletes make room, and an execution's end keeps the time it really ended.

Each daemon's data dir is on a small tmpfs of its own (`tests/disks.py`); its log is not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.disks import small_disk
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_disk_full import degraded, healthy, wait_for

Factory = Callable[..., DaemonProcess]
MiB = 1024 * 1024

FULL = "store: the disk holding the data dir"
AGAIN = "store: writable again"


def log_lines(daemon: DaemonProcess, words: str) -> list[str]:
    return [line for line in daemon.log.read_text(errors="replace").splitlines() if words in line]


@pytest.mark.sqlite_only
def test_a_full_disk_is_logged_once_and_its_end_once(daemon_process: Factory, tmp_path: Path) -> None:
    """A disk filled by an execution's output (no WORKBENCH_MIN_FREE_BYTES to warn first): one line
    that it is full, not a flood of full / writable again as commits fail and small probes squeeze
    into pages SQLite already holds; then one line once there is room again."""
    with small_disk(tmp_path / "disk", "4m") as disk:
        disk.take(1 * MiB)
        daemon = daemon_process(disk.mount / "data", WORKBENCH_MIN_FREE_BYTES="0")
        daemon.log = tmp_path / "daemon.log"
        daemon.start()
        started = daemon.start_bash("head -c 2500000 /dev/zero | tr '\\0' a")
        wait_for("the daemon to report itself degraded", lambda: degraded(daemon))
        time.sleep(2)  # the journal goes on trying to commit its output
        assert len(log_lines(daemon, FULL)) == 1, log_lines(daemon, "store:")[:6]
        assert log_lines(daemon, AGAIN) == [], log_lines(daemon, "store:")[:6]
        assert degraded(daemon)

        disk.grow("16m")
        wait_for("the daemon to be healthy again", lambda: healthy(daemon))
        record = daemon.wait(started["executionId"])
        assert record["status"] in ("completed", "failed"), record  # `tr` may have met the full disk
        time.sleep(1)
        assert len(log_lines(daemon, FULL)) == 1, log_lines(daemon, "store:")[:6]
        assert len(log_lines(daemon, AGAIN)) == 1, log_lines(daemon, "store:")[:6]
        daemon.close()
