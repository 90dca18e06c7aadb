"""Promise 6 for what the seeds added: a batch adopted after SIGKILL, and two pinned details of a
restart (the metadata in a lost run's exit, a queued run whose deadline passes while down)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests import procs
from tests.reliability.conftest import DaemonProcess, kill_supervisor
from tests.reliability.test_restart import poll_exits, wait_for

Factory = Any


def test_a_batch_is_adopted_after_a_sigkill(daemon_process: Factory, tmp_path: Path) -> None:
    """Running items are adopted, queued ones run after the restart, the batch's journal goes on
    gapless, and the batch ends with every item's real outcome."""
    d: DaemonProcess = daemon_process()
    d.start()
    gate = tmp_path / "go"
    items: list[dict[str, Any]] = [
        {
            "kind": "workbench_bash",
            "command": f"while [ ! -e {gate} ]; do sleep 0.02; done; echo {i}; exit {i % 2}",
        }
        for i in range(8)
    ]
    response = d.client.post(
        "/v1/executions/batch", json={"items": items, "concurrency": 3, "background": True}
    )
    assert response.status_code == 202, response.text
    batch = response.json()
    ids = [i["executionId"] for i in batch["items"]]
    wait_for(lambda: [d.get(i)["status"] for i in ids].count("running") == 3)
    before = d.events(batch["executionId"])
    d.kill9()
    d.start()
    gate.touch()
    final = d.wait(batch["executionId"])
    assert final["status"] == "partial_failed", final
    assert [(i["status"], i["exitCode"]) for i in final["items"]] == [
        ("completed", 0) if i % 2 == 0 else ("failed", 1) for i in range(8)
    ]
    journal = d.events(batch["executionId"])
    assert [e["sequence"] for e in journal] == list(range(1, len(journal) + 1))
    assert journal[: len(before)] == before, "the journal goes on; nothing is renumbered"
    for item_id in ids:
        statuses = [
            e["item"]["status"]
            for e in journal
            if e["eventType"] == "item" and e["item"]["executionId"] == item_id
        ]
        assert statuses == ["queued", "running", d.get(item_id)["status"]], (item_id, statuses)
        assert d.output(item_id).strip() == str(ids.index(item_id))
    assert all(procs.processes_mentioning(i) == [] for i in ids)


def test_a_batch_cancelled_before_a_crash_ends_cancelled_after_it(daemon_process: Factory) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    items = [{"kind": "workbench_bash", "command": "sleep 300"} for _ in range(4)]
    batch = d.client.post(
        "/v1/executions/batch", json={"items": items, "concurrency": 2, "background": True}
    ).json()
    wait_for(lambda: d.get(batch["executionId"])["status"] == "running")
    d.kill9()
    d.start()
    cancel = d.client.post(f"/v1/executions/{batch['executionId']}/cancel", json={"reason": "after"})
    assert cancel.status_code == 202, cancel.text
    final = d.wait(batch["executionId"])
    assert final["status"] == "cancelled" and {i["status"] for i in final["items"]} == {"cancelled"}
    for item in final["items"]:
        assert procs.processes_mentioning(item["executionId"]) == []


def test_a_lost_detached_run_delivers_its_metadata_in_its_exit(daemon_process: Factory) -> None:
    """Pinned: the exit of a run whose outcome is lost (tree and supervisor gone while the daemon
    was down) still carries the run's metadata."""
    d: DaemonProcess = daemon_process()
    d.start()
    metadata = {"ticket": 42, "who": "pinned"}
    eid = d.start_bash("sleep 300", detached=True, metadata=metadata)["executionId"]
    wait_for(lambda: d.get(eid)["status"] == "running")
    tree = procs.processes_mentioning(eid)
    d.kill9()
    kill_supervisor(d.data_dir)
    procs.kill_and_reap_wait(tree)  # the tree ended while the daemon was down
    d.start()
    final = d.wait(eid)
    assert (final["status"], final["error"]["code"]) == ("failed", "lost")
    exits = poll_exits(d, wait_ms=10_000)
    assert [(e["executionId"], e["status"], e["metadata"]) for e in exits] == [(eid, "failed", metadata)]
    assert exits[0]["error"]["code"] == "lost"


def test_a_queued_run_whose_deadline_passes_while_the_daemon_is_down_times_out(
    daemon_process: Factory,
) -> None:
    """Pinned: the deadline counts from acceptance, queueing and downtime included: a queued run
    found past it at a restart ends `timed_out` (`timeout`) without ever starting."""
    d: DaemonProcess = daemon_process(WORKBENCH_MAX_CONCURRENT_EXECUTIONS="1")
    d.start()
    blocker = d.start_bash("sleep 300")["executionId"]
    queued = d.start_bash("echo never", timeoutMs=1500)["executionId"]
    assert d.get(queued)["status"] == "queued"
    d.kill9()
    time.sleep(2)
    d.start()
    final = d.wait(queued)
    assert final["status"] == "timed_out" and final["error"]["code"] == "timeout"
    assert "while queued" in final["error"]["message"]
    assert final["startedAt"] is None and d.output(queued) == ""
    d.client.post(f"/v1/executions/{blocker}/cancel", json={})
    d.wait(blocker)
