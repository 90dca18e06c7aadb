"""`sessions`, `delete_session` and `delete_sessions` of the Python client, against a real daemon:
both twins."""

from __future__ import annotations

import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, Conflict, NotFound


async def test_sessions_are_listed_and_removed(wb: DaemonHandle) -> None:
    async with AsyncClient(wb.url, TOKEN) as client:
        assert await client.sessions() == []
        await client.files("build").write("a.txt", b"12345")
        await client.run_bash("true", session_id="web")  # its workspace is made when it starts
        running = await client.run_bash("sleep 30", background=True, session_id="web")
        listed = {s.session_id: s for s in await client.sessions()}
        assert sorted(listed) == ["build", "web"]
        assert listed["build"].size_bytes == 5 and listed["build"].live_executions == 0
        assert listed["web"].live_executions == 1 and listed["web"].quota_bytes > 0
        with pytest.raises(Conflict) as refused:
            await client.delete_session("web")
        assert "cancel the executions" in str(refused.value)
        with pytest.raises(Conflict):
            await client.delete_sessions()  # nothing removed: build is still there
        assert [s.session_id for s in await client.sessions()] == ["build", "web"]
        await client.delete_session("build")
        with pytest.raises(NotFound):
            await client.delete_session("build")
        await client.cancel(running)
        await client.wait(running)
        await client.delete_sessions()
        assert await client.sessions() == []
        with pytest.raises(ValueError):
            await client.delete_session("")


async def test_the_blocking_twin(wb: DaemonHandle) -> None:
    def work() -> list[str]:
        with Client(wb.url, TOKEN) as client:
            client.files("one").write("x", b"x")
            names = [s.session_id for s in client.sessions()]
            client.delete_session("one")
            return names + [s.session_id for s in client.sessions()]

    assert await trio.to_thread.run_sync(work) == ["one"]


async def test_dot_names_are_sessions_that_do_not_exist_not_every_session(wb: DaemonHandle) -> None:
    # Sent as they are, `.` and `..` would be resolved before the request leaves:
    # `/v1/sessions/.` is `DELETE /v1/sessions`, which removes every session.
    async with AsyncClient(wb.url, TOKEN) as client:
        await client.files("kept").write("a.txt", b"a")
        for name in (".", ".."):
            with pytest.raises(NotFound):
                await client.delete_session(name)
            with pytest.raises(NotFound):
                await client.files(name).list()
        assert [s.session_id for s in await client.sessions()] == ["kept"]
