"""A full disk, as an operator meets it: the log says so once (not once per failed commit), the
product's own deletes make room, and an execution's end keeps the time it really ended.

Each daemon's data dir is on a small tmpfs of its own (`tests/disks.py`); its log is not.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil
import pytest

from tests.disks import small_disk
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_disk_full import degraded, healthy, on_disk, printing_when_full, wait_for

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


def epoch_s(text: str) -> float:
    """Seconds since the epoch of a record's time (`2026-11-29T12:00:00.123Z`)."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC).timestamp()


@pytest.mark.sqlite_only
def test_an_end_recorded_late_keeps_the_time_it_ended(daemon_process: Factory, tmp_path: Path) -> None:
    """A process that exits while the disk is full is recorded once space is back, with the time
    it ended as `finishedAt`, not the time its record could be committed."""
    with small_disk(tmp_path / "disk") as disk:
        daemon = on_disk(daemon_process, disk, tmp_path)
        daemon.start()
        execution_id, stop, pid = printing_when_full(daemon, disk, tmp_path)
        stop.touch()
        wait_for("the process to exit", lambda: not psutil.pid_exists(pid))
        ended = time.time()
        time.sleep(3)  # its outcome cannot be recorded meanwhile
        assert daemon.get(execution_id)["status"] == "running"

        disk.free()
        record = daemon.wait(execution_id)
        assert (record["status"], record["exitCode"]) == ("failed", 3), record
        assert epoch_s(record["finishedAt"]) < ended + 1.5, (record["finishedAt"], ended)
        daemon.close()


def delete_until_done(daemon: DaemonProcess, path: str, **params: str) -> httpx.Response:
    """A delete on a full disk: it succeeds, or (its commit refused while the store was still full)
    it is `507` having given the room back, and the next try succeeds."""
    response = daemon.client.delete(path, params=params)
    if response.status_code == 507:
        response = daemon.client.delete(path, params=params)
    assert response.status_code in (200, 204), response.text
    return response


@pytest.mark.sqlite_only
def test_rm_and_prune_make_room_on_a_full_disk(daemon_process: Factory, tmp_path: Path) -> None:
    """The operator's way out of a full disk is the product's own deletes: `DELETE
    /v1/executions/{id}` and a bulk delete of ended executions whose output filled the disk take
    their files away first, then their records, so they work on a disk with no byte left; the
    daemon is healthy again by itself, and a running execution is left alone."""
    with small_disk(tmp_path / "disk", "12m") as disk:
        daemon = daemon_process(
            disk.mount / "data",
            WORKBENCH_MIN_FREE_BYTES="0",
            WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES=str(64 * 1024),
        )
        daemon.log = tmp_path / "daemon.log"
        daemon.start()
        # The second is bigger: a disk full again soon after it had room needs more room than then.
        big = "head -c {} /dev/zero | tr '\\0' a; exit 1"
        first = daemon.wait(daemon.start_bash(big.format(3 * MiB))["executionId"])
        second = daemon.wait(daemon.start_bash(big.format(5 * MiB))["executionId"])
        assert first["status"] == second["status"] == "failed", (first, second)
        live = daemon.start_bash("sleep 300")["executionId"]
        wait_for("the live one to run", lambda: daemon.get(live)["status"] == "running")
        executions = disk.mount / "data" / "executions"

        deletes: list[tuple[str, dict[str, str]]] = [
            (f"/v1/executions/{first['executionId']}", {}),  # `workbench rm ID`
            ("/v1/executions", {"status": "failed"}),  # `workbench prune --status failed`
        ]
        for path, params in deletes:
            disk.fill()
            refused = daemon.client.post("/v1/executions/workbench_bash", json={"command": "true"})
            assert refused.status_code == 507, refused.text
            wait_for("the daemon to report itself degraded", lambda: degraded(daemon))
            delete_until_done(daemon, path, **params)
            wait_for("the daemon to be healthy again", lambda: healthy(daemon))
            disk.free()

        for ended in (first, second):
            execution_id = ended["executionId"]
            assert daemon.client.get(f"/v1/executions/{execution_id}").status_code == 404
            assert not (executions / execution_id).exists()
        assert sorted(p.name for p in executions.iterdir()) == [live]
        assert daemon.get(live)["status"] == "running"
        daemon.client.post(f"/v1/executions/{live}/cancel")
        daemon.wait(live)
        daemon.close()
