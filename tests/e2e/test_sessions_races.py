"""A session removed while something starts in it. Its removal checks that nothing runs in it,
then removes its workspace, which takes a while for a large tree: an execution or a code context
that starts meanwhile waits until the workspace is gone, then runs in the session made again,
empty. Before, it ran in the workspace being removed: what it wrote there made the removal fail
half done (a 500), or was removed under it. A file write under way (its body streaming into the
workspace) is waited for by the removal instead."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
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
    assert (await wb.client.put("/v1/sessions/gone/files/old.txt", content=b"old")).status_code == 201
    release = trio.Event()

    async def body() -> Any:
        yield b"one"
        await release.wait()
        yield b"two"

    answers: dict[str, httpx.Response] = {}

    async def ask(name: str, call: Any) -> None:
        answers[name] = await call

    async with trio.open_nursery() as nursery:
        nursery.start_soon(ask, "put", wb.client.put("/v1/sessions/gone/files/new.txt", content=body()))
        await temp_file(wb.settings.layout.workspace("admin", "gone"))
        nursery.start_soon(ask, "delete", wb.client.delete("/v1/sessions/gone"))
        await trio.sleep(0.3)  # the delete is under way (before, it removed the workspace meanwhile)
        assert "delete" not in answers, answers["delete"].text
        release.set()
    assert answers["put"].status_code == 201, answers["put"].text
    assert answers["delete"].status_code == 204, answers["delete"].text
    # The write first, whole, then the removal: nothing is left of the session.
    assert (await wb.client.get("/v1/sessions/gone")).status_code == 404
