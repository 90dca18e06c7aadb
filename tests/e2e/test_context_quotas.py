"""Quotas of code contexts: a cell takes a slot of its principal's `maxConcurrent` while it runs
(and waits queued past it, counted toward `maxQueued`), and the live contexts are bounded per
principal (`maxContexts`) and per daemon (`WORKBENCH_MAX_CONTEXTS`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from tests.conftest import DaemonHandle

BOB_TOKEN = "bob-token-0123456789abcdef"
CODE = "/v1/executions/workbench_code"


@asynccontextmanager
async def bob_daemon(make_daemon: Any, tmp_path: Path, quotas: str, **settings: Any) -> AsyncIterator[Any]:
    """A daemon where bob has `quotas`, and a client of bob's."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\ntoken = "{BOB_TOKEN}"\nprincipal = "bob"\nscopes = ["tools:execute", "logs:read"]\n'
        + quotas
    )
    tokens.chmod(0o600)
    wb: DaemonHandle = await make_daemon(tokens_file=tokens, **settings)
    headers = {"Authorization": f"Bearer {BOB_TOKEN}"}
    async with httpx.AsyncClient(base_url=wb.url, headers=headers, timeout=60) as bob:
        yield wb, bob


async def new_context(client: httpx.AsyncClient) -> str:
    response = await client.post("/v1/contexts", json={"language": "python"})
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "ready", response.text
    context_id: str = response.json()["contextId"]
    return context_id


async def start_cell(client: httpx.AsyncClient, context_id: str, code: str) -> httpx.Response:
    body = {"language": "python", "code": code, "contextId": context_id, "background": True}
    return await client.post(CODE, json=body)


async def statuses(client: httpx.AsyncClient, ids: list[str]) -> list[str]:
    return [(await client.get(f"/v1/executions/{i}")).json()["status"] for i in ids]


async def until(client: httpx.AsyncClient, ids: list[str], wanted: list[str]) -> None:
    """Until the executions' statuses, sorted, are `wanted` (sorted)."""
    with trio.fail_after(30):
        for _ in iter(int, 1):
            if sorted(await statuses(client, ids)) == sorted(wanted):
                return
            await trio.sleep(0.02)


async def test_cells_take_their_principals_slots_not_the_daemons(make_daemon: Any, tmp_path: Path) -> None:
    """bob (maxConcurrent 2) starts a long cell in each of 4 contexts: 2 run, 2 wait queued (and
    count toward maxQueued), while the daemon's one slot runs another principal's command; a
    waiting cell is cancelled as any queued execution; the last runs once a slot is free."""
    quotas = "maxConcurrent = 2\nmaxQueued = 2\n"
    async with bob_daemon(make_daemon, tmp_path, quotas, max_concurrent_executions=1) as (wb, bob):
        gate = tmp_path / "go"
        admins = await wb.start(f"while [ ! -e {gate} ]; do sleep 0.02; done")
        contexts = [await new_context(bob) for _ in range(4)]
        code = f"import os, time\nwhile not os.path.exists({str(gate)!r}):\n    time.sleep(0.02)\n"
        started = [await start_cell(bob, cx, code) for cx in contexts]
        assert [r.status_code for r in started] == [202] * 4, [r.text for r in started]
        ids = [r.json()["executionId"] for r in started]
        await until(bob, ids, ["running", "running", "queued", "queued"])
        assert (await wb.client.get(f"/v1/executions/{admins['executionId']}")).json()["status"] == "running"
        await trio.sleep(0.3)  # and it stays so
        assert sorted(await statuses(bob, ids)) == ["queued", "queued", "running", "running"]
        # A third waiting execution of bob's, a cell or a command, is past maxQueued.
        for refused in (
            await start_cell(bob, contexts[0], "1"),
            await bob.post("/v1/executions/workbench_bash", json={"command": "true", "background": True}),
        ):
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["details"] == {
                "quota": "maxQueued",
                "principal": "bob",
                "limit": 2,
                "queued": 2,
            }
        states = await statuses(bob, ids)
        waiting = [i for i, s in zip(ids, states, strict=True) if s == "queued"]
        cancelled = await bob.post(f"/v1/executions/{waiting[0]}/cancel", json={"reason": "not needed"})
        assert cancelled.status_code == 202, cancelled.text
        record = (await bob.post(f"/v1/executions/{waiting[0]}/wait", json={"waitTimeoutMs": 30_000})).json()
        assert record["execution"]["status"] == "cancelled", record
        assert record["execution"]["startedAt"] is None, record
        events = (await bob.get(f"/v1/executions/{waiting[0]}/events")).json()["events"]
        assert [e["status"] for e in events] == ["queued", "cancelled"], events
        gate.touch()
        for execution_id in ids:
            if execution_id != waiting[0]:
                ended = (
                    await bob.post(f"/v1/executions/{execution_id}/wait", json={"waitTimeoutMs": 30_000})
                ).json()
                assert ended["execution"]["status"] == "completed", ended
        await wb.wait(admins["executionId"])
        listed = (await bob.get("/v1/contexts")).json()["contexts"]
        assert [c["status"] for c in listed] == ["ready"] * 4, listed


async def test_max_contexts_bounds_a_principals_live_contexts(make_daemon: Any, tmp_path: Path) -> None:
    """Past bob's maxContexts a new context is 429 and nothing is made; a dead or deleted
    context gives its place back."""
    async with bob_daemon(make_daemon, tmp_path, "maxContexts = 2\n") as (wb, bob):
        first, second = await new_context(bob), await new_context(bob)
        refused = await bob.post("/v1/contexts", json={"language": "python"})
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "too_many_executions" and "maxContexts" in error["message"], error
        assert error["details"] == {"quota": "maxContexts", "principal": "bob", "limit": 2, "contexts": 2}
        assert len((await bob.get("/v1/contexts")).json()["contexts"]) == 2
        # Another principal's contexts are not bob's.
        await new_context(wb.client)
        # A dead context (its interpreter ended) is no longer one of the live ones.
        died = await start_cell(bob, first, "import os\nos._exit(3)")
        await bob.post(f"/v1/executions/{died.json()['executionId']}/wait", json={"waitTimeoutMs": 30_000})
        assert (await bob.get(f"/v1/contexts/{first}")).json()["status"] == "dead"
        third = await new_context(bob)
        assert (await bob.post("/v1/contexts", json={"language": "python"})).status_code == 429
        assert (await bob.delete(f"/v1/contexts/{second}")).status_code == 204
        await new_context(bob)
        assert (await bob.post("/v1/contexts", json={"language": "python"})).status_code == 429
        assert third


async def test_workbench_max_contexts_bounds_the_daemons(make_daemon: Any, tmp_path: Path) -> None:
    """WORKBENCH_MAX_CONTEXTS counts every principal's live contexts."""
    async with bob_daemon(make_daemon, tmp_path, "", max_contexts=2) as (wb, bob):
        mine = await new_context(wb.client)
        await new_context(bob)
        refused = await bob.post("/v1/contexts", json={"language": "python"})
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "too_many_executions" and "WORKBENCH_MAX_CONTEXTS" in error["message"]
        assert error["details"] == {"quota": "WORKBENCH_MAX_CONTEXTS", "limit": 2, "contexts": 2}
        assert len((await bob.get("/v1/contexts")).json()["contexts"]) == 1
        assert (await wb.client.delete(f"/v1/contexts/{mine}")).status_code == 204
        await new_context(bob)
