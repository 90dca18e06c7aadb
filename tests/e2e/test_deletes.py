"""A delete removes an execution's files first, then its record, so that it works on a full disk
(`workbench.core.deletes`). Between the two (a commit the store refuses, or a daemon that stops)
the record stays readable, its artifacts say a delete removed their files, and the next delete, or
the next start, finishes it.

The refused commit is the store's own `StorageFull`, raised here without filling a disk (the disk
itself: `tests/reliability/test_disk_full_room.py`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.client.restart import restart
from tests.conftest import DaemonHandle
from tests.ports import free_port
from workbench.wire.errors import StorageFull


def refuse(monkeypatch: pytest.MonkeyPatch, wb: DaemonHandle, operation: str) -> None:
    """The store refuses `operation`'s commit, as on a full disk."""

    async def full(*args: Any) -> Any:
        raise StorageFull("the disk holding the data dir is full (0 bytes free): database or disk is full")

    monkeypatch.setattr(wb.daemon.service.store, operation, full)


async def assert_files_removed_record_kept(wb: DaemonHandle, execution_id: str) -> None:
    """The state between: no files, the record and its events readable, the artifact a clear 404."""
    assert not (wb.data_dir / "executions" / execution_id).exists()
    record = await wb.client.get(f"/v1/executions/{execution_id}")
    assert record.status_code == 200 and record.json()["status"] == "failed", record.text
    assert len(await wb.events(execution_id)) >= 2
    artifact = await wb.client.get(f"/v1/executions/{execution_id}/artifacts/stdout")
    assert artifact.status_code == 404, artifact.text
    message = artifact.json()["error"]["message"]
    assert "a delete removed its files and has not finished" in message, message


async def assert_gone(wb: DaemonHandle, execution_id: str) -> None:
    assert (await wb.client.get(f"/v1/executions/{execution_id}")).status_code == 404
    assert sorted(p.name for p in (wb.data_dir / "executions").iterdir() if execution_id in p.name) == []


async def test_a_refused_delete_has_given_the_room_back_and_a_retry_finishes_it(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`DELETE /v1/executions/{id}` whose commit is refused is `507`, its files already gone; the
    same delete again finishes it. A live execution is still `409`, its files untouched."""
    ended = (await wb.run("printf 'not utf-8: \\377'; exit 3"))["executionId"]  # stdout kept
    live = (await wb.start("sleep 30"))["executionId"]
    refuse(monkeypatch, wb, "delete_execution")
    response = await wb.client.delete(f"/v1/executions/{ended}")
    assert response.status_code == 507 and response.json()["error"]["code"] == "storage_full", response.text
    await assert_files_removed_record_kept(wb, ended)
    conflict = await wb.client.delete(f"/v1/executions/{live}")
    assert conflict.status_code == 409, conflict.text
    assert (wb.data_dir / "executions" / live).is_dir()

    monkeypatch.undo()
    assert (await wb.client.delete(f"/v1/executions/{ended}")).status_code == 204
    await assert_gone(wb, ended)
    await wb.client.post(f"/v1/executions/{live}/cancel")
    await wb.wait(live)


async def test_a_refused_bulk_delete_is_finished_by_the_next_one(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk delete whose commit is refused is `507`, the files already gone; the next delete
    (here of other executions) finishes it, and counts only its own."""
    failed = (await wb.run("printf 'not utf-8: \\377'; exit 3"))["executionId"]
    completed = (await wb.run("echo fine"))["executionId"]
    refuse(monkeypatch, wb, "delete_terminal")
    response = await wb.client.delete("/v1/executions", params={"status": "failed"})
    assert response.status_code == 507, response.text
    await assert_files_removed_record_kept(wb, failed)
    assert (await wb.client.get(f"/v1/executions/{completed}")).status_code == 200

    monkeypatch.undo()
    response = await wb.client.delete("/v1/executions", params={"status": "completed"})
    assert response.status_code == 200 and response.json() == {"deleted": 1}, response.text
    await assert_gone(wb, failed)
    await assert_gone(wb, completed)


async def test_the_next_start_finishes_a_delete_an_earlier_run_left(
    make_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon stopped between a delete's files and its record (here: its commit refused, and a
    file left in the set-aside directory, as a crash while removing would) finishes the delete at
    its next start; nothing else is deleted."""
    first: DaemonHandle = await make_daemon(bind=f"127.0.0.1:{free_port()}")
    ended = (await first.run("printf 'not utf-8: \\377'; exit 3"))["executionId"]
    kept = (await first.run("printf 'not utf-8: \\377'; exit 4"))["executionId"]
    refuse(monkeypatch, first, "delete_execution")
    assert (await first.client.delete(f"/v1/executions/{ended}")).status_code == 507
    await assert_files_removed_record_kept(first, ended)
    monkeypatch.undo()
    aside = [p for p in (first.data_dir / "executions").iterdir() if p.name.startswith(ended)]
    assert len(aside) == 1, aside
    (aside[0] / "stdout").write_bytes(b"left by a crash")

    again = await restart(make_daemon, first)
    await assert_gone(again, ended)
    assert (await again.client.get(f"/v1/executions/{kept}/artifacts/stdout")).status_code == 200
