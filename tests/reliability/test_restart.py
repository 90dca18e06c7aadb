"""Promise 6, a restart is not a failure: SIGKILL the daemon, start it again, check every promise."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import procs
from tests.conftest import TOKEN
from tests.reliability.conftest import DaemonProcess, kill_supervisor

Factory = Any


def wait_for(predicate: Any, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def numbered(record_lines: str) -> list[int]:
    return [int(line) for line in record_lines.split()]


def test_a_running_command_is_adopted_and_its_output_continues(
    daemon_process: Factory, tmp_path: Path
) -> None:
    """Promise 6 (adopted): every line once, in order, and the real exit code. The command
    writes on while the daemon is down, and runs until the test lets it end once the daemon is
    back (a restart took 6 s once on a loaded machine: a command of fixed length had ended)."""
    d: DaemonProcess = daemon_process()
    d.start()
    go = tmp_path / "go"
    started = d.start_bash(
        f"for i in $(seq 1 40); do echo $i; sleep 0.02; done; "
        f"until [ -e {go} ]; do sleep 0.02; done; for i in $(seq 41 50); do echo $i; done"
    )
    eid = started["executionId"]
    wait_for(lambda: len(d.output(eid).split()) >= 5)
    d.kill9()
    time.sleep(0.5)  # it goes on writing while the daemon is down
    d.start()
    go.touch()
    final = d.wait(eid)
    assert final["status"] == "completed" and final["exitCode"] == 0
    assert numbered(d.output(eid)) == list(range(1, 51))
    events = d.events(eid)
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    said = [(e["eventType"], e["status"], e["message"]) for e in events if e["eventType"] != "output"]
    assert any("adopted after a daemon restart" in (e["message"] or "") for e in events), (
        f"events but output: {said}; the daemon's log: {d.log_text()[-3000:]}"
    )
    assert events[-1]["status"] == "completed"


def test_a_command_that_ends_while_the_daemon_is_down_gets_its_real_exit_code(
    daemon_process: Factory,
) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    started = d.start_bash("echo before; sleep 1; echo after; exit 7")
    eid = started["executionId"]
    wait_for(lambda: "before" in d.output(eid))
    d.kill9()
    time.sleep(1.5)
    d.start()
    final = d.wait(eid)
    assert final["status"] == "failed" and final["exitCode"] == 7
    assert d.output(eid) == "before\nafter\n"


def test_one_past_its_deadline_while_the_daemon_is_down_is_killed(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    started = d.start_bash("sleep 300", timeoutMs=1500)
    eid = started["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    pids = procs.processes_mentioning(eid)
    assert pids
    d.kill9()
    time.sleep(2)
    d.start()
    final = d.wait(eid)
    assert final["status"] == "timed_out"
    assert [p for p in pids if procs.alive(p)] == []


def test_queued_executions_stay_queued_and_run_in_order(daemon_process: Factory, tmp_path: Path) -> None:
    d: DaemonProcess = daemon_process(WORKBENCH_MAX_CONCURRENT_EXECUTIONS="1")
    d.start()
    order = tmp_path / "order"
    ids = [d.start_bash(f"sleep 0.3; echo {i} >> {order}")["executionId"] for i in range(4)]
    assert [d.get(i)["status"] for i in ids[1:]] == ["queued"] * 3
    d.kill9()
    d.start()
    finals = [d.wait(i) for i in ids]
    assert [f["status"] for f in finals] == ["completed"] * 4
    assert order.read_text().split() == ["0", "1", "2", "3"]


def test_heavy_output_across_a_crash_loses_nothing_and_duplicates_nothing(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    count = 150_000
    started = d.start_bash(f"for i in $(seq 1 {count}); do echo $i; done; sleep 0.5")
    eid = started["executionId"]
    wait_for(lambda: d.get(eid)["output"]["stdoutBytes"] > 100_000)
    d.kill9()
    d.start()
    final = d.wait(eid)
    assert final["status"] == "completed"
    assert numbered(d.output(eid)) == list(range(1, count + 1))


def test_two_crashes_in_a_row(daemon_process: Factory, tmp_path: Path) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    # It counts on until told to end (and has counted to 60): it still runs at the second crash
    # however slowly the daemon comes back.
    command = "i=0; while :; do i=$((i+1)); echo $i; [ $i -ge 60 ] && [ -e go ] && break; sleep 0.08; done"
    eid = d.start_bash(command, cwd=str(tmp_path))["executionId"]
    for _ in range(2):
        seen = len(d.output(eid).split())
        wait_for(lambda seen=seen: len(d.output(eid).split()) >= seen + 3)
        d.kill9()
        time.sleep(0.3)
        d.start()
    (tmp_path / "go").touch()
    final = d.wait(eid)
    assert final["status"] == "completed"
    lines = numbered(d.output(eid))
    assert len(lines) >= 60 and lines == list(range(1, len(lines) + 1))
    adopted = [e for e in d.events(eid) if "adopted" in (e["message"] or "")]
    assert len(adopted) == 2


@pytest.mark.sqlite_only
def test_a_reused_pid_is_not_adopted(daemon_process: Factory, tmp_path: Path) -> None:
    """An unrelated process with the recorded pid is neither adopted nor killed: the run is lost."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 300")["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    tree = procs.processes_mentioning(eid)
    d.kill9()
    kill_supervisor(d.data_dir)
    procs.kill_and_reap_wait(tree)  # the tree ended while the daemon was down
    stranger = subprocess.Popen(["sleep", "300"])
    try:
        # Make the record point at the stranger's pid, as if the pid had been reused.
        db = sqlite3.connect(d.data_dir / "workbench.db")
        (child_json,) = db.execute("SELECT child_json FROM executions WHERE id = ?", (eid,)).fetchone()
        child = json.loads(child_json)
        child["pid"] = stranger.pid
        with db:
            db.execute("UPDATE executions SET child_json = ? WHERE id = ?", (json.dumps(child), eid))
        db.close()
        d.start()
        final = d.wait(eid)
        assert final["status"] == "failed"
        assert final["error"]["code"] == "lost"
        assert stranger.poll() is None, "the unrelated process must not be touched"
    finally:
        stranger.kill()
        stranger.wait()


def test_idempotency_keys_and_detached_state_survive_a_restart(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    body = {"command": "sleep 0.5", "background": True, "detached": True}
    first = d.client.post("/v1/executions/workbench_bash", json=body, headers={"Idempotency-Key": "k"})
    d.kill9()
    d.start()
    again = d.client.post("/v1/executions/workbench_bash", json=body, headers={"Idempotency-Key": "k"})
    assert again.status_code == 200 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["executionId"] == first.json()["executionId"]
    final = d.wait(first.json()["executionId"])
    assert final["status"] == "completed" and final["detached"] is True


def test_a_second_daemon_on_the_same_data_dir_is_refused(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    second = DaemonProcess(d.data_dir)
    proc = second.start(wait=False)
    assert proc.wait(timeout=30) == 2
    assert "another Workbench daemon" in second.log_text()
    second.client.close()
    assert d.client.get("/healthz").status_code == 200


def test_graceful_stop_kill_mode_cancels_running_executions(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 300")["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    assert d.stop() == 0
    assert procs.processes_mentioning(eid) == []
    d.start()
    final = d.get(eid)
    assert final["status"] == "cancelled" and final["cancelReason"] == "daemon shutdown"


def test_graceful_stop_keep_mode_leaves_them_running_for_the_next_start(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process(WORKBENCH_SHUTDOWN_MODE="keep")
    d.start()
    eid = d.start_bash("for i in $(seq 1 30); do echo $i; sleep 0.1; done")["executionId"]
    wait_for(lambda: len(d.output(eid).split()) >= 2)
    assert d.stop() == 0
    assert procs.processes_mentioning(eid), "keep mode leaves the tree running"
    d.env["WORKBENCH_SHUTDOWN_MODE"] = "kill"
    d.start()
    final = d.wait(eid)
    assert final["status"] == "completed"
    assert numbered(d.output(eid)) == list(range(1, 31))


@pytest.mark.sqlite_only
def test_a_damaged_store_is_a_clear_error(daemon_process: Factory, tmp_path: Path) -> None:
    data = tmp_path / "data"
    d: DaemonProcess = daemon_process(data)
    d.start()
    d.wait(d.start_bash("true")["executionId"])
    d.stop()
    with open(data / "workbench.db", "r+b") as db:
        db.seek(0)
        db.write(b"this is not a database" * 10)
    for extra in ("workbench.db-wal", "workbench.db-shm"):
        (data / extra).unlink(missing_ok=True)
    proc = d.start(wait=False)
    assert proc.wait(timeout=30) == 2
    assert "damaged" in d.log_text() or "cannot be opened" in d.log_text()


@pytest.mark.parametrize("how", ["SIGINT", "SIGTERM"])
def test_signals_stop_the_daemon_cleanly(daemon_process: Factory, how: str) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    assert d.proc is not None
    d.proc.send_signal(getattr(signal, how))
    assert d.proc.wait(timeout=30) == 0


def test_serve_rejects_a_bad_setting_naming_it(tmp_path: Path) -> None:
    env = {
        "WORKBENCH_DATA_DIR": str(tmp_path / "d"),
        "WORKBENCH_TOKEN": TOKEN,
        "WORKBENCH_MAX_CONCURENT": "3",
    }
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "serve"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert "WORKBENCH_MAX_CONCURENT" in result.stderr


def test_when_the_supervisor_dies_too_the_tree_is_adopted_by_identity(
    daemon_process: Factory, tmp_path: Path
) -> None:
    """The tree outlives both daemon and supervisor: it is held again, its output captured, and
    it ends `lost` (its exit status cannot be known), never `running` forever."""
    d: DaemonProcess = daemon_process()
    d.start()
    # The tree counts until the test says stop, so it outlasts the restart however loaded the
    # machine is (a tree that ends while nobody holds it is rightly `lost` at once instead).
    stop = tmp_path / "stop"
    eid = d.start_bash(f"i=0; until [ -e {stop} ]; do i=$((i+1)); echo $i; sleep 0.1; done")["executionId"]
    wait_for(lambda: len(d.output(eid).split()) >= 2)
    d.kill9()
    kill_supervisor(d.data_dir)
    d.start()
    assert d.get(eid)["status"] == "running"
    seen = len(d.output(eid).split())
    wait_for(lambda: len(d.output(eid).split()) >= seen + 3)  # still captured once adopted
    stop.touch()
    final = d.wait(eid)
    assert final["status"] == "failed"
    assert final["error"]["code"] == "lost"
    assert "exit status" in final["error"]["message"]
    lines = numbered(d.output(eid))
    assert lines == list(range(1, len(lines) + 1))
    assert procs.processes_mentioning(eid) == []


def test_the_output_of_a_tree_that_ended_while_daemon_and_supervisor_were_down_is_kept(
    daemon_process: Factory, tmp_path: Path
) -> None:
    """Nothing is lost: what the tree wrote after the daemon and its supervisor died, up to its
    end, is in the journal once the daemon is back, though its exit status is not (`lost`)."""
    d: DaemonProcess = daemon_process()
    d.start()
    go, done = tmp_path / "go", tmp_path / "done"
    script = f"echo 1; until [ -e {go} ]; do sleep 0.02; done; for i in $(seq 2 30); do echo $i; done"
    eid = d.start_bash(f"{script}; touch {done}")["executionId"]
    wait_for(lambda: d.output(eid) == "1\n")
    d.kill9()
    kill_supervisor(d.data_dir)
    go.touch()
    wait_for(lambda: done.exists())
    wait_for(lambda: procs.processes_mentioning(eid) == [])  # the tree has ended
    d.start()
    final = d.wait(eid)
    assert (final["status"], final["error"]["code"]) == ("failed", "lost")
    assert numbered(d.output(eid)) == list(range(1, 31))


def poll_exits(d: DaemonProcess, wait_ms: int = 0, lease_ms: int = 1000) -> list[dict[str, Any]]:
    response = d.client.get("/v1/exits", params={"waitTimeoutMs": wait_ms, "leaseMs": lease_ms})
    assert response.status_code == 200, response.text
    exits: list[dict[str, Any]] = response.json()["exits"]
    return exits


def test_an_exit_handed_out_but_not_acked_is_delivered_again_after_a_crash(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("echo done", detached=True)["executionId"]
    first = poll_exits(d, wait_ms=10_000)
    assert [(e["executionId"], e["attempt"]) for e in first] == [(eid, 1)]
    d.kill9()
    d.start()
    again = poll_exits(d, wait_ms=10_000)
    assert [(e["deliveryId"], e["attempt"]) for e in again] == [(first[0]["deliveryId"], 2)]
    assert d.client.post(f"/v1/exits/{again[0]['deliveryId']}/ack").status_code == 204
    assert poll_exits(d, wait_ms=1500) == []


def test_an_exit_that_happens_while_the_daemon_is_down_is_delivered(daemon_process: Factory) -> None:
    """The daemon dies between the process's exit and the terminal commit: recovery saves the exit."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 0.5; exit 5", detached=True)["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    d.kill9()
    time.sleep(1)
    d.start()
    exits = poll_exits(d, wait_ms=10_000)
    assert [(e["executionId"], e["status"], e["exitCode"]) for e in exits] == [(eid, "failed", 5)]


def test_a_second_signal_during_the_stop_does_not_abandon_the_executions(daemon_process: Factory) -> None:
    """Ctrl-C, then SIGTERM while it stops: every execution is still killed, and the exit is clean."""
    d: DaemonProcess = daemon_process(WORKBENCH_MAX_CONCURRENT_EXECUTIONS="200")
    d.start()
    ids = [d.start_bash("sleep 300")["executionId"] for _ in range(120)]
    wait_for(lambda: all(d.get(i)["status"] == "running" for i in ids))
    assert d.proc is not None
    d.proc.send_signal(signal.SIGINT)
    time.sleep(0.01)
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(timeout=60) == 0
    alive = [i for i in ids if procs.processes_mentioning(i)]
    assert alive == []


@pytest.mark.sqlite_only
def test_a_tree_without_a_live_record_is_killed_at_restart(daemon_process: Factory) -> None:
    """Nothing runs without a record: a tree the supervisor holds for no live execution dies."""
    d: DaemonProcess = daemon_process()
    d.start()
    eid = d.start_bash("sleep 300")["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    d.kill9()
    db = sqlite3.connect(d.data_dir / "workbench.db")
    with db:
        db.execute("UPDATE executions SET status = 'failed' WHERE id = ?", (eid,))
    db.close()
    d.start()
    wait_for(lambda: procs.processes_mentioning(eid) == [])
