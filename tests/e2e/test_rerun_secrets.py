"""Reruns (the same spec, stdin included, linked by `rerunOf`) and `secretEnv` (never returned,
logged, journaled or stored)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DaemonHandle
from tests.sse import collect

SECRET = "s3cr3t-Value-9f27c1d0a6"


async def test_a_rerun_feeds_the_same_stdin_and_names_its_original(wb: DaemonHandle, tmp_path: Path) -> None:
    original = await wb.run(
        'cat; echo "[$X]"; pwd', stdin="line one\nline two\n", env={"X": "1"}, cwd=str(tmp_path)
    )
    assert original["status"] == "completed"
    response = await wb.client.post(
        f"/v1/executions/{original['executionId']}/rerun", json={"waitTimeoutMs": 30_000}
    )
    assert response.status_code == 201, response.text
    again = response.json()
    assert again["status"] == "completed" and again["rerunOf"] == original["executionId"]
    assert again["executionId"] != original["executionId"]
    for key in ("command", "cwd", "env", "image", "sessionId", "timeoutMs", "metadata"):
        assert again[key] == original[key], key
    output = "".join(
        e["outputDelta"] for e in await wb.events(again["executionId"]) if e["eventType"] == "output"
    )
    assert output == f"line one\nline two\n[1]\n{tmp_path}\n"
    trace = await wb.events(again["executionId"])
    assert trace[0]["message"] == f"rerun of {original['executionId']}"
    listed = (await wb.client.get("/v1/executions", params={"rerunOf": original["executionId"]})).json()
    assert [r["executionId"] for r in listed["executions"]] == [again["executionId"]]


async def test_a_rerun_takes_overrides_and_an_idempotency_key(wb: DaemonHandle) -> None:
    original = await wb.run("echo first", metadata={"a": 1})
    path = f"/v1/executions/workbench_bash/{original['executionId']}/rerun"
    body = {"command": "echo second", "background": True, "metadata": {"b": 2}, "env": {"Y": "2"}}
    first = await wb.client.post(path, json=body, headers={"Idempotency-Key": "rerun-1"})
    assert first.status_code == 202, first.text
    replay = await wb.client.post(path, json=body, headers={"Idempotency-Key": "rerun-1"})
    assert replay.status_code == 200 and replay.json()["executionId"] == first.json()["executionId"]
    other = await wb.client.post(
        path, json={**body, "command": "echo third"}, headers={"Idempotency-Key": "rerun-1"}
    )
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    record = await wb.wait(first.json()["executionId"])
    assert (record["command"], record["metadata"], record["env"]) == ("echo second", {"b": 2}, {"Y": "2"})
    for bad in ({"code": "print(1)"}, {"timeoutMs": 0}, {"nope": 1}):
        refused = await wb.client.post(path, json=bad)
        assert refused.status_code == 422, (bad, refused.text)
    wrong_kind = await wb.client.post(
        f"/v1/executions/workbench_code/{original['executionId']}/rerun", json={}
    )
    assert wrong_kind.status_code == 404
    assert len((await wb.client.get("/v1/executions")).json()["executions"]) == 2


async def test_a_code_rerun_runs_the_same_code(wb: DaemonHandle) -> None:
    response = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "sh", "code": "echo code", "waitTimeoutMs": 30_000}
    )
    original = response.json()
    again = (
        await wb.client.post(f"/v1/executions/{original['executionId']}/rerun", json={"code": "echo new"})
    ).json()
    assert again["language"] == "sh" and again["code"] == "echo new"
    refused = await wb.client.post(
        f"/v1/executions/{original['executionId']}/rerun", json={"command": "true"}
    )
    assert refused.status_code == 422 and refused.json()["error"]["details"][0]["field"] == "command"


async def every_answer(wb: DaemonHandle, execution_id: str) -> list[bytes]:
    """The bodies of every route that shows an execution."""
    bodies = []
    for path in ("", "/events", "/artifacts"):
        bodies.append((await wb.client.get(f"/v1/executions/{execution_id}{path}")).content)
    bodies.append((await wb.client.get("/v1/executions")).content)
    bodies.append((await wb.client.post(f"/v1/executions/{execution_id}/wait", json={})).content)
    bodies.append((await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})).content)
    bodies.append((await wb.client.post(f"/v1/executions/{execution_id}/detach")).content)
    bodies.append(b"".join(f.data.encode() for f in await collect(wb.client, execution_id)))
    bodies.append((await wb.client.get("/v1/exits", params={"waitTimeoutMs": 1000})).content)
    return bodies


async def test_secret_env_reaches_the_process_and_nothing_else(
    wb: DaemonHandle, caplog: pytest.LogCaptureFixture
) -> None:
    """Absent from every route's answer, the events, the exit, the logs and the store's files;
    the record lists the names; the process gets the value; nothing of it stays on disk."""
    caplog.set_level(logging.DEBUG)
    check = '[ "$API_KEY" = "$EXPECTED_HASH_INPUT" ] && echo same || echo different; test -n "$API_KEY"'
    started = await wb.start(
        check, secretEnv={"API_KEY": SECRET, "OTHER": SECRET}, env={"EXPECTED_HASH_INPUT": "x"}, detached=True
    )
    assert started["secretEnvNames"] == ["API_KEY", "OTHER"]
    final = await wb.wait(started["executionId"])
    assert final["status"] == "completed", final
    output = "".join(e["outputDelta"] or "" for e in await wb.events(final["executionId"]))
    assert output == "different\n"
    known = await wb.run(
        '[ "$API_KEY" = "' + SECRET[:4] + '"* ] || true; [ "${API_KEY:0:6}" = "s3cr3t" ] && echo got',
        secretEnv={"API_KEY": SECRET},
    )
    assert "got" in "".join(e["outputDelta"] or "" for e in await wb.events(known["executionId"]))
    rerun = await wb.client.post(f"/v1/executions/{final['executionId']}/rerun", json={"background": True})
    assert rerun.status_code == 422 and rerun.json()["error"]["details"][0]["field"] == "secretEnv"
    assert SECRET not in rerun.text
    again = await wb.client.post(
        f"/v1/executions/{final['executionId']}/rerun",
        json={"background": True, "secretEnv": {"API_KEY": SECRET, "OTHER": SECRET}},
    )
    assert again.status_code == 202, again.text
    await wb.wait(again.json()["executionId"])
    batch = await wb.client.post(
        "/v1/executions/batch",
        json={
            "items": [{"kind": "workbench_bash", "command": "true", "secretEnv": {"K": SECRET}}],
            "waitTimeoutMs": 30_000,
        },
    )
    assert batch.status_code == 201, batch.text
    bodies = [again.content, batch.content]
    for execution_id in (
        final["executionId"],
        again.json()["executionId"],
        known["executionId"],
        batch.json()["executionId"],
    ):
        bodies += await every_answer(wb, execution_id)
    for body in bodies:
        assert SECRET.encode() not in body
    assert all(SECRET not in record.getMessage() for record in caplog.records)
    assert any(r.name == "workbench.access" for r in caplog.records), "the access log was captured"
    for path in wb.data_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert not list(wb.data_dir.rglob("secret_env")), "kept only until the spawn"


async def test_secret_env_is_checked_like_env_and_never_echoed(wb: DaemonHandle) -> None:
    for bad in ({"1X": SECRET}, {"X": SECRET + "\x00"}, {"X": 5}):
        response = await wb.client.post(
            "/v1/executions/workbench_bash", json={"command": "true", "secretEnv": bad}
        )
        assert response.status_code == 422, response.text
        assert SECRET not in response.text
    both = await wb.client.post(
        "/v1/executions/workbench_bash",
        json={"command": "true", "env": {"X": "1"}, "secretEnv": {"X": SECRET}},
    )
    assert both.status_code == 422 and SECRET not in both.text
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []


async def test_a_replay_with_another_secret_value_is_the_same_request(wb: DaemonHandle) -> None:
    """The idempotency hash keeps the names of secretEnv, never its values."""
    body: dict[str, Any] = {"command": "true", "background": True, "secretEnv": {"K": SECRET}}
    first = await wb.client.post("/v1/executions/workbench_bash", json=body, headers={"Idempotency-Key": "s"})
    body["secretEnv"] = {"K": "another"}
    again = await wb.client.post("/v1/executions/workbench_bash", json=body, headers={"Idempotency-Key": "s"})
    assert again.status_code == 200 and again.json()["executionId"] == first.json()["executionId"]
    await wb.wait(first.json()["executionId"])
