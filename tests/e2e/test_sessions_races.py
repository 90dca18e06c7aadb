"""A session removed while something starts in it. Its removal checks that nothing runs in it,
then removes its workspace, which takes a while for a large tree: an execution or a code context
that starts meanwhile waits until the workspace is gone, then runs in the session made again,
empty. Before, it ran in the workspace being removed: what it wrote there made the removal fail
half done (a 500), or was removed under it. A file write under way (its body streaming into the
workspace) is waited for by the removal instead."""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from tests.e2e.test_files_races import temp_file

#: Files enough that removing them takes a good part of a second.
MANY = 30_000
MAKE_MANY = f"import os\nos.mkdir('many')\nfor i in range({MANY}):\n    open(f'many/{{i}}', 'w').close()\n"


async def _filled(wb: DaemonHandle, session: str) -> Path:
    """Session `session` with `MANY` files in it; its workspace's `many` directory."""
    response = await wb.client.post(
        "/v1/executions/workbench_code",
        json={"language": "python", "code": MAKE_MANY, "sessionId": session, "waitTimeoutMs": 60_000},
    )
    assert response.status_code == 201 and response.json()["status"] == "completed", response.text
    workspace: Path = wb.settings.layout.workspace("admin", session)
    return workspace / "many"


async def _removal_begun(many: Path) -> None:
    """Once the removal has taken some of `many` away, and not yet all of it."""
    with ceilings.within(20, "the session's removal to begin"):
        while True:
            try:
                left = len(await trio.to_thread.run_sync(os.listdir, many))
            except FileNotFoundError:
                raise AssertionError("the workspace was gone before anything could start in it") from None
            if left < MANY:
                assert left > MANY // 10, f"the removal was nearly over ({left} files left)"
                return
            await trio.sleep(0.002)


async def _while_removed(wb: DaemonHandle, session: str, start: Any) -> tuple[httpx.Response, Any]:
    """DELETE the filled session, and call `start` once its removal has begun: both answers."""
    many = await _filled(wb, session)
    deleted: list[httpx.Response] = []
    async with trio.open_nursery() as nursery:

        async def delete() -> None:
            deleted.append(await wb.client.delete(f"/v1/sessions/{session}"))

        nursery.start_soon(delete)
        await _removal_begun(many)
        started = await start()
    return deleted[0], started


async def _names(wb: DaemonHandle, session: str) -> list[str]:
    listing = await wb.client.get(f"/v1/sessions/{session}/files/")
    assert listing.status_code == 200, listing.text
    return sorted(entry["name"] for entry in listing.json()["entries"])


async def test_an_execution_started_while_its_session_is_removed_runs_in_it_made_again(
    wb: DaemonHandle,
) -> None:
    deleted, record = await _while_removed(
        wb, "gone", lambda: wb.run("echo kept > kept.txt && ls", sessionId="gone")
    )
    assert deleted.status_code == 204, deleted.text
    assert record["status"] == "completed", record
    assert await _names(wb, "gone") == ["kept.txt"]
    kept = await wb.client.get("/v1/sessions/gone/files/kept.txt")
    assert kept.status_code == 200 and kept.content == b"kept\n", kept.text


async def test_a_context_created_while_its_session_is_removed_lives_in_it_made_again(
    wb: DaemonHandle,
) -> None:
    async def create() -> httpx.Response:
        return await wb.client.post("/v1/contexts", json={"language": "python", "sessionId": "gone"})

    deleted, created = await _while_removed(wb, "gone", create)
    assert deleted.status_code == 204, deleted.text
    assert created.status_code == 201 and created.json()["status"] != "dead", created.text
    context_id = created.json()["contextId"]
    try:
        response = await wb.client.post(
            "/v1/executions/workbench_code",
            json={
                "language": "python",
                "code": "import os\nopen('kept.txt', 'w').write('kept')\nsorted(os.listdir('.'))",
                "contextId": context_id,
                "waitTimeoutMs": 60_000,
            },
        )
        record = response.json()
        assert record["status"] == "completed", record
        assert record["result"]["text/plain"] == "['kept.txt']", record
    finally:
        await wb.client.delete(f"/v1/contexts/{context_id}")
    assert await _names(wb, "gone") == ["kept.txt"]


async def test_a_session_removed_twice_at_once_is_removed_once_and_the_other_is_404(
    wb: DaemonHandle,
) -> None:
    deleted, again = await _while_removed(wb, "gone", lambda: wb.client.delete("/v1/sessions/gone"))
    assert deleted.status_code == 204, deleted.text
    assert again.status_code == 404 and again.json()["error"]["code"] == "not_found", again.text
    assert (await wb.client.get("/v1/sessions/gone")).status_code == 404


async def test_a_file_write_under_way_is_over_before_its_session_is_removed(wb: DaemonHandle) -> None:
    async with _removal_held(wb, "gone") as answers:
        await trio.sleep(0.3)  # before, the delete removed the workspace meanwhile
        assert "delete" not in answers, answers["delete"].text
    assert answers["put"].status_code == 201, answers["put"].text
    # The write first, whole, then the removal: nothing is left of the session.
    assert (await wb.client.get("/v1/sessions/gone")).status_code == 404


@contextlib.asynccontextmanager
async def _removal_held(wb: DaemonHandle, session: str) -> AsyncIterator[dict[str, httpx.Response]]:
    """Session `session` being removed, for as long as the block runs: its DELETE waits for a
    file write whose body the block holds back. The answers (`put`, `delete`) once it is over."""
    assert (await wb.client.put(f"/v1/sessions/{session}/files/old.txt", content=b"old")).status_code == 201
    workspace = wb.settings.layout.workspace("admin", session)
    release = trio.Event()

    async def body() -> Any:
        yield b"one"
        await release.wait()
        yield b"two"

    answers: dict[str, httpx.Response] = {}

    async def ask(name: str, call: Any) -> None:
        answers[name] = await call

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, "put", wb.client.put(f"/v1/sessions/{session}/files/new.txt", content=body()))
        await temp_file(workspace)
        nursery.start_soon(ask, "delete", wb.client.delete(f"/v1/sessions/{session}"))
        removals = wb.daemon.workspace.workspaces.removals
        with ceilings.within(10, "the session's removal to begin"):
            while removals.under_way(workspace) is None:  # noqa: ASYNC110  # no event for it
                await trio.sleep(0.005)
        try:
            yield answers
        finally:
            release.set()
    assert answers["delete"].status_code == 204, answers["delete"].text


async def test_a_start_waiting_for_its_sessions_removal_holds_no_slot_and_can_be_cancelled_or_time_out(
    make_daemon: Any,
) -> None:
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1)
    async with _removal_held(wb, "gone"):
        waiting = await wb.start("echo ran > ran.txt", sessionId="gone")
        expiring = await wb.start("echo ran > ran.txt", sessionId="gone", timeoutMs=500)
        # The daemon's one slot is not held by them: another session's run goes ahead.
        other = await wb.run("echo other", sessionId="other")
        assert other["status"] == "completed", other
        with ceilings.within(10, "a cancel of an execution waiting for its session's removal"):
            cancelled = await wb.client.post(f"/v1/executions/{waiting['executionId']}/cancel", json={})
        assert cancelled.status_code == 202 and cancelled.json()["cancelled"] is True, cancelled.text
        for started, status in ((waiting, "cancelled"), (expiring, "timed_out")):
            record = await wb.wait(started["executionId"], 10_000)
            assert record["status"] == status and record["startedAt"] is None, record
    assert (await wb.client.get("/v1/sessions/gone")).status_code == 404  # nothing ran in it


async def test_starts_waiting_for_their_sessions_removal_keep_their_place_in_the_queue(
    make_daemon: Any,
) -> None:
    """They are queued: counted against the queue's limit, and run in the order they came."""
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1, max_queued_executions=2)
    async with _removal_held(wb, "gone"):
        started = [await wb.start(f"echo {n} >> order.txt", sessionId="gone") for n in (1, 2)]
        full = await wb.client.post(
            "/v1/executions/workbench_bash", json={"command": "true", "sessionId": "gone", "background": True}
        )
        assert full.status_code == 429, full.text
        metrics = (await wb.client.get("/metrics")).text
        assert "workbench_queue_depth 2" in metrics, [m for m in metrics.splitlines() if "queue" in m]
    for execution in started:
        assert (await wb.wait(execution["executionId"]))["status"] == "completed"
    order = await wb.client.get("/v1/sessions/gone/files/order.txt")
    assert order.content == b"1\n2\n", order.text


async def test_a_context_create_given_up_while_its_session_is_removed_leaves_nothing(
    wb: DaemonHandle,
) -> None:
    async with _removal_held(wb, "gone"):
        with trio.move_on_after(0.5) as gave_up:
            await wb.client.post("/v1/contexts", json={"language": "python", "sessionId": "gone"})
        assert gave_up.cancelled_caught
    assert (await wb.client.get("/v1/contexts")).json() == {"contexts": []}


async def test_an_upload_under_way_is_over_before_its_session_is_removed(wb: DaemonHandle) -> None:
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w") as tar:
        info = tarfile.TarInfo("up.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"up"))
    data = archive.getvalue()
    release = trio.Event()

    async def body() -> Any:
        yield data[:512]
        await release.wait()
        yield data[512:]

    assert (await wb.client.put("/v1/sessions/gone/files/old.txt", content=b"old")).status_code == 201
    answers: dict[str, httpx.Response] = {}

    async def ask(name: str, call: Any) -> None:
        answers[name] = await call

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, "upload", wb.client.post("/v1/sessions/gone/files:upload", content=body()))
        await trio.sleep(0.3)  # the upload's body streams in
        nursery.start_soon(ask, "delete", wb.client.delete("/v1/sessions/gone"))
        await trio.sleep(0.3)  # the delete is under way (before, it removed the workspace meanwhile)
        assert "delete" not in answers, answers["delete"].text
        release.set()
    assert answers["upload"].status_code == 200, answers["upload"].text
    assert answers["delete"].status_code == 204, answers["delete"].text
    assert (await wb.client.get("/v1/sessions/gone")).status_code == 404


async def test_deleting_every_session_while_one_is_being_removed_removes_the_others(wb: DaemonHandle) -> None:
    for name in ("a", "b"):
        assert (await wb.client.put(f"/v1/sessions/{name}/files/f", content=b"f")).status_code == 201
    deleted, every = await _while_removed(wb, "gone", lambda: wb.client.delete("/v1/sessions"))
    assert deleted.status_code == 204, deleted.text
    assert every.status_code == 204, every.text
    assert (await wb.client.get("/v1/sessions")).json() == {"sessions": []}


async def test_a_removal_that_failed_is_tried_again_by_the_delete_that_waited_for_it(
    wb: DaemonHandle,
) -> None:
    """The second DELETE says what is true: it does not answer 404 while the session is there."""
    many = await _filled(wb, "gone")
    stuck = many.parent / "stuck"
    stuck.write_bytes(b"")
    made = await trio.run_process(["chattr", "+i", str(stuck)], check=False, capture_stderr=True)
    try:
        if made.returncode != 0:
            pytest.skip(f"no immutable files here: {made.stderr.decode(errors='replace').strip()}")
        second: list[httpx.Response] = []
        async with trio.open_nursery() as nursery:

            async def again() -> None:
                await _removal_begun(many)
                second.append(await wb.client.delete("/v1/sessions/gone"))

            nursery.start_soon(again)
            first = await wb.client.delete("/v1/sessions/gone")
        assert first.status_code == 500, first.text
        assert second[0].status_code == 500, second[0].text  # tried again: it fails the same way
        assert (await wb.client.get("/v1/sessions/gone")).status_code == 200
    finally:
        await trio.run_process(["chattr", "-i", str(stuck)], check=False, capture_stderr=True)
