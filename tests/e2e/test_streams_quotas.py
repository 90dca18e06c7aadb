"""Stream options (`?sessionId=`, `?types=`, `204` after the end) and per-principal quotas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import trio

from tests.conftest import DaemonHandle
from tests.sse import collect

CI_TOKEN = "ci-token-0123456789abcdef"
OTHER_TOKEN = "other-token-0123456789abc"


async def test_a_stream_of_another_session_is_404_and_of_its_own_200(wb: DaemonHandle) -> None:
    record = await wb.run("echo hi", sessionId="build")
    path = f"/v1/executions/{record['executionId']}/events/stream"
    wrong = await wb.client.get(path, params={"sessionId": "default"})
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "not_found"
    frames = await collect(wb.client, record["executionId"], params={"sessionId": "build"})
    assert frames[-1].json["status"] == "completed"
    assert (await wb.client.get(path, params={"sessionId": "../x"})).status_code == 400


async def test_types_filters_events_and_keeps_their_sequences(wb: DaemonHandle) -> None:
    record = await wb.run("echo one; echo '1/2 half' >> \"$WORKBENCH_PROGRESS\"; echo two")
    every = await wb.events(record["executionId"])
    frames = await collect(wb.client, record["executionId"], params={"types": "status,progress"})
    wanted = [e for e in every if e["eventType"] in {"status", "progress"}]
    assert [f.id for f in frames] == [e["sequence"] for e in wanted]
    assert {f.event for f in frames} == {"status", "progress"}
    for bad in ("nope", "status,", ""):
        response = await wb.client.get(
            f"/v1/executions/{record['executionId']}/events/stream", params={"types": bad}
        )
        assert response.status_code == 400, bad


async def test_a_reconnect_after_the_terminal_event_is_204(wb: DaemonHandle) -> None:
    record = await wb.run("true")
    path = f"/v1/executions/{record['executionId']}/events/stream"
    done = await wb.client.get(path, headers={"Last-Event-ID": str(record["lastSequence"])})
    assert done.status_code == 204 and done.content == b""
    assert (
        await wb.client.get(path, headers={"Last-Event-ID": str(record["lastSequence"] - 1)})
    ).status_code == 200


async def quota_daemon(make_daemon: Any, tmp_path: Path) -> DaemonHandle:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        f'[[tokens]]\ntoken = "{CI_TOKEN}"\nprincipal = "ci"\nscopes = ["tools:execute", "logs:read"]\n'
        "maxConcurrent = 1\nmaxQueued = 2\n"
        f'[[tokens]]\ntoken = "{OTHER_TOKEN}"\nprincipal = "other"\nscopes = ["tools:execute", "logs:read"]\n'
    )
    handle: DaemonHandle = await make_daemon(tokens_file=tokens, max_concurrent_executions=4)
    return handle


async def test_one_principal_cannot_take_every_slot(make_daemon: Any, tmp_path: Path) -> None:
    """maxConcurrent: ci's executions run one at a time while another principal's run beside
    them; maxQueued: past two waiting, ci is refused with a 429 that names the quota."""
    wb = await quota_daemon(make_daemon, tmp_path)
    gate = tmp_path / "go"
    waiting = f"while [ ! -e {gate} ]; do sleep 0.02; done"
    async with (
        httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {CI_TOKEN}"}) as ci,
        httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {OTHER_TOKEN}"}) as other,
    ):

        async def start(client: httpx.AsyncClient) -> httpx.Response:
            return await client.post(
                "/v1/executions/workbench_bash", json={"command": waiting, "background": True}
            )

        started = [await start(ci) for _ in range(3)]
        assert [r.status_code for r in started] == [202] * 3, [r.text for r in started]
        ci_ids = [r.json()["executionId"] for r in started]
        refused = await start(ci)
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "too_many_executions" and "maxQueued" in error["message"]
        assert error["details"]["quota"] == "maxQueued" and error["details"]["limit"] == 2
        batch = await ci.post(
            "/v1/executions/batch", json={"items": [{"kind": "workbench_bash", "command": "true"}]}
        )
        assert batch.status_code == 429 and batch.json()["error"]["details"]["quota"] == "maxQueued"
        others = [(await start(other)).json() for _ in range(2)]
        with trio.fail_after(30):
            while True:
                states = [(await ci.get(f"/v1/executions/{i}")).json()["status"] for i in ci_ids]
                theirs = [
                    (await other.get(f"/v1/executions/{o['executionId']}")).json()["status"] for o in others
                ]
                if theirs == ["running", "running"] and "running" in states:
                    break
                await trio.sleep(0.05)
        assert states.count("running") == 1 and states.count("queued") == 2
        gate.touch()
        for execution_id in ci_ids:
            await wb.wait(execution_id)
    assert len((await wb.client.get("/v1/executions")).json()["executions"]) == 5


async def test_quotas_in_the_tokens_file_are_checked(make_daemon: Any, tmp_path: Path) -> None:
    import pytest

    from workbench.core.auth import load_tokens
    from workbench.wire.errors import ConfigError

    tokens = tmp_path / "tokens.toml"
    entry = f'[[tokens]]\ntoken = "{CI_TOKEN}"\nprincipal = "ci"\nscopes = ["logs:read"]\n'
    for extra, message in (
        ("maxConcurrent = 0\n", "maxConcurrent"),
        ('maxQueued = "3"\n', "maxQueued"),
        ("maxQueued = -1\n", "maxQueued"),
        ("maxContexts = 0\n", "maxContexts"),
        ("maxContexts = true\n", "maxContexts"),
    ):
        tokens.write_text(entry + extra)
        with pytest.raises(ConfigError, match=message):
            load_tokens("admin-token-0123456789", tokens)
    second = f'[[tokens]]\ntoken = "{OTHER_TOKEN}"\nprincipal = "ci"\nscopes = ["logs:read"]\nmaxQueued = 1\n'
    tokens.write_text(entry + "maxQueued = 2\n" + second)
    with pytest.raises(ConfigError, match="other quotas"):
        load_tokens("admin-token-0123456789", tokens)
    tokens.write_text(entry + "maxContexts = 2\n" + second.replace("maxQueued", "maxContexts"))
    with pytest.raises(ConfigError, match="other quotas"):
        load_tokens("admin-token-0123456789", tokens)
    tokens.write_text(entry + "maxConcurrent = 3\nmaxQueued = 0\nmaxContexts = 1\n")
    ci = load_tokens("admin-token-0123456789", tokens)[CI_TOKEN]
    assert (ci.max_concurrent, ci.max_queued, ci.max_contexts) == (3, 0, 1)
