"""End to end against a real daemon on 127.0.0.1:0: the routes, errors and promises of the core."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import httpx
import trio

from tests.conftest import TOKEN, DaemonHandle


async def test_healthz_needs_no_token(wb: DaemonHandle) -> None:
    async with httpx.AsyncClient(base_url=wb.url) as anonymous:
        response = await anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


async def test_foreground_run_returns_the_terminal_record(wb: DaemonHandle) -> None:
    """Promise 1: an accepted execution ends terminal with the right exit code and output."""
    record = await wb.run("echo hello; echo oops >&2; exit 3")
    assert record["status"] == "failed", record
    assert record["exitCode"] == 3
    assert record["executionId"].startswith("ex_") and len(record["executionId"]) == 29
    assert record["executionKind"] == "workbench_bash"
    assert record["output"]["stdoutBytes"] == 6 and record["output"]["stderrBytes"] == 5
    assert record["finishedAt"] and record["startedAt"] and record["createdAt"].endswith("Z")
    assert record["containment"] in {"cgroup", "pidns", "pgroup"}
    events = await wb.events(record["executionId"])
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    text = {"stdout": "", "stderr": ""}
    for e in events:
        if e["eventType"] == "output":
            text[e["stream"]] += e["outputDelta"]
    assert text == {"stdout": "hello\n", "stderr": "oops\n"}
    assert events[0]["eventType"] == "status" and events[0]["status"] == "queued"
    assert events[-1]["eventType"] == "status" and events[-1]["status"] == "failed"
    assert events[-1]["exitCode"] == 3
    assert record["lastSequence"] == events[-1]["sequence"]


async def test_completed_and_background(wb: DaemonHandle) -> None:
    started = await wb.start("sleep 0.2; echo done")
    assert started["status"] in {"queued", "running"}
    final = await wb.wait(started["executionId"])
    assert final["status"] == "completed" and final["exitCode"] == 0


async def test_wait_times_out_without_touching_the_execution(wb: DaemonHandle) -> None:
    """Promise 5: a wait that times out never changes the execution."""
    started = await wb.start("sleep 30")
    path = f"/v1/executions/workbench_bash/{started['executionId']}"
    with trio.fail_after(30):  # running first: on a loaded machine the spawn may take 100 ms
        while (await wb.client.get(path)).json()["status"] != "running":  # noqa: ASYNC110
            await trio.sleep(0.01)
    response = await wb.client.post(f"{path}/wait", json={"waitTimeoutMs": 100})
    assert response.status_code == 200
    assert response.json()["waitTimedOut"] is True
    assert response.json()["execution"]["status"] == "running"
    cancel = await wb.client.post(f"/v1/executions/{started['executionId']}/cancel", json={})
    assert cancel.status_code == 202


async def test_stdin_cwd_env_and_metadata(wb: DaemonHandle, tmp_path: Any) -> None:
    record = await wb.run(
        'read line; echo "$line|$PWD|$GREETING"',
        stdin="from stdin\n",
        cwd=str(tmp_path),
        env={"GREETING": "hi there"},
        metadata={"ticket": 7, "tags": ["a", "b"]},
    )
    assert record["status"] == "completed"
    assert record["metadata"] == {"ticket": 7, "tags": ["a", "b"]}
    assert record["cwd"] == str(tmp_path)
    out = "".join(
        e["outputDelta"] for e in await wb.events(record["executionId"]) if e["eventType"] == "output"
    )
    assert out == f"from stdin|{tmp_path}|hi there\n"


async def test_no_stdin_means_eof_at_once(wb: DaemonHandle) -> None:
    record = await wb.run("cat; echo end")
    assert record["status"] == "completed"


async def test_daemon_environment_and_token_never_reach_the_command(wb: DaemonHandle) -> None:
    """Promise 9: the daemon's own environment and its token are not passed through."""
    os.environ["WORKBENCH_TEST_SECRET"] = "leaked-secret-value"
    try:
        record = await wb.run("env; cat /proc/self/environ | tr '\\0' '\\n'")
    finally:
        del os.environ["WORKBENCH_TEST_SECRET"]
    out = "".join(
        e["outputDelta"] for e in await wb.events(record["executionId"]) if e["eventType"] == "output"
    )
    assert "leaked-secret-value" not in out
    assert TOKEN not in out
    assert "PATH=" in out and "WORKBENCH_EXECUTION_ID=" + record["executionId"] in out


async def test_six_megabytes_of_output_spill_to_byte_exact_artifacts(wb: DaemonHandle) -> None:
    """Promise 1: every byte is in the events or the artifacts, byte for byte."""
    script = "import sys; [sys.stdout.write('%07d ' % i + 'x' * 91 + '\\n') for i in range(60000)]"
    record = await wb.run(f'python3 -c "{script}"; echo tail >&2')
    assert record["status"] == "completed", record
    total = 60000 * 100
    assert record["output"]["stdoutBytes"] == total
    assert record["output"]["truncated"] is True
    assert record["output"]["eventBytes"] == 5242880
    names = {a["name"]: a for a in record["artifacts"]}
    assert set(names) == {"stdout", "stderr"}
    expected = b"".join(b"%07d " % i + b"x" * 91 + b"\n" for i in range(60000))
    assert names["stdout"]["sizeBytes"] == total
    assert names["stdout"]["sha256"] == hashlib.sha256(expected).hexdigest()
    body = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts/stdout")
    assert body.status_code == 200 and body.content == expected
    part = await wb.client.get(
        f"/v1/executions/{record['executionId']}/artifacts/stdout", headers={"Range": "bytes=100-199"}
    )
    assert part.status_code == 206
    assert part.content == expected[100:200]
    assert part.headers["Content-Range"] == f"bytes 100-199/{total}"
    tail = await wb.client.get(
        f"/v1/executions/{record['executionId']}/artifacts/stdout", headers={"Range": "bytes=-10"}
    )
    assert tail.content == expected[-10:]
    bad = await wb.client.get(
        f"/v1/executions/{record['executionId']}/artifacts/stdout", headers={"Range": f"bytes={total}-"}
    )
    assert bad.status_code == 416
    events = await wb.events(record["executionId"])
    deltas = [e for e in events if e["eventType"] == "output"]
    assert all(len(e["outputDelta"].encode()) <= 65536 for e in deltas)
    assert sum(len(e["outputDelta"].encode()) for e in deltas if e["stream"] == "stdout") <= 5242880
    truncated = [e for e in events if e["eventType"] == "output_truncated"]
    assert len(truncated) == 1
    assert [e["eventType"] for e in events].index("output_truncated") < len(events) - 1
    assert events[-1]["status"] == "completed"
    listing = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts")
    assert {a["name"] for a in listing.json()["artifacts"]} == {"stdout", "stderr"}


async def test_invalid_utf8_is_replaced_in_events_and_kept_whole(wb: DaemonHandle) -> None:
    record = await wb.run("printf 'ok \\xff\\xfe end'")
    events = await wb.events(record["executionId"])
    text = "".join(e["outputDelta"] for e in events if e["eventType"] == "output")
    assert text == "ok \ufffd\ufffd end"
    assert [a["name"] for a in record["artifacts"]] == ["stdout"]
    raw = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts/stdout")
    assert raw.content == b"ok \xff\xfe end"


async def test_small_valid_output_keeps_no_artifact(wb: DaemonHandle) -> None:
    record = await wb.run("echo fine")
    assert record["artifacts"] == []
    missing = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts/stdout")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


async def test_deadline_kills_and_times_out(wb: DaemonHandle) -> None:
    record = await wb.run("sleep 30", timeoutMs=300)
    assert record["status"] == "timed_out"
    assert record["error"]["code"] == "timeout"


async def test_queueing_is_fifo_and_bounded(make_daemon: Any, tmp_path: Path) -> None:
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1, max_queued_executions=2)
    # The first holds the one slot until the queue was seen full (a `sleep` could end first on a
    # busy machine, and the fourth start would then find room).
    first = await wb.start(f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.02; done")
    second = await wb.start("true")
    third = await wb.start("true")
    assert second["status"] == "queued" and third["status"] == "queued"
    full = await wb.client.post("/v1/executions/workbench_bash", json={"command": "true", "background": True})
    assert full.status_code == 429
    assert full.json()["error"]["code"] == "too_many_executions"
    (tmp_path / "go").touch()
    done = [await wb.wait(r["executionId"]) for r in (first, second, third)]
    assert [d["status"] for d in done] == ["completed"] * 3
    assert done[0]["finishedAt"] <= done[1]["startedAt"] <= done[2]["startedAt"]


async def test_idempotency_key_replays_and_guards(wb: DaemonHandle) -> None:
    """Promise 8: the same Idempotency-Key never runs a command twice."""
    body = {"command": "echo once", "background": True}
    headers = {"Idempotency-Key": "key-1"}
    first = await wb.client.post("/v1/executions/workbench_bash", json=body, headers=headers)
    again = await wb.client.post("/v1/executions/workbench_bash", json=body, headers=headers)
    assert first.status_code == 202
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["executionId"] == first.json()["executionId"]
    assert again.json()["idempotencyKey"] == "key-1"
    other = await wb.client.post(
        "/v1/executions/workbench_bash", json={**body, "command": "echo twice"}, headers=headers
    )
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    listing = await wb.client.get("/v1/executions")
    assert len(listing.json()["executions"]) == 1


async def test_concurrent_first_requests_with_one_key_start_one_execution(wb: DaemonHandle) -> None:
    results: list[httpx.Response] = []

    async def post() -> None:
        results.append(
            await wb.client.post(
                "/v1/executions/workbench_bash",
                json={"command": "echo $RANDOM >> counted", "background": True},
                headers={"Idempotency-Key": "same"},
            )
        )

    async with trio.open_nursery() as nursery:
        for _ in range(10):
            nursery.start_soon(post)
    ids = {r.json()["executionId"] for r in results}
    assert len(ids) == 1
    assert sorted(r.status_code for r in results) == [200] * 9 + [202]
    await wb.wait(ids.pop())
    listing = await wb.client.get("/v1/executions")
    assert len(listing.json()["executions"]) == 1


async def test_list_filters_and_cursor(wb: DaemonHandle) -> None:
    ids = [
        (await wb.run(f"exit {i % 2}", sessionId="s1" if i < 3 else "s2"))["executionId"] for i in range(5)
    ]
    page = (await wb.client.get("/v1/executions", params={"limit": 2})).json()
    assert [e["executionId"] for e in page["executions"]] == ids[::-1][:2]
    seen = [e["executionId"] for e in page["executions"]]
    while page["nextCursor"]:
        page = (
            await wb.client.get("/v1/executions", params={"limit": 2, "cursor": page["nextCursor"]})
        ).json()
        seen.extend(e["executionId"] for e in page["executions"])
    assert seen == ids[::-1]
    failed = (await wb.client.get("/v1/executions", params={"status": "failed"})).json()["executions"]
    assert {e["executionId"] for e in failed} == {ids[1], ids[3]}
    s1 = (await wb.client.get("/v1/executions", params={"sessionId": "s1"})).json()["executions"]
    assert {e["executionId"] for e in s1} == set(ids[:3])
    code = (await wb.client.get("/v1/executions", params={"kind": "workbench_code"})).json()["executions"]
    assert code == []
    for params in ({"status": "nope"}, {"limit": "x"}, {"limit": "0"}, {"cursor": "../etc"}, {"bogus": "1"}):
        bad = await wb.client.get("/v1/executions", params=params)
        assert bad.status_code in {400, 422}, params
        assert "error" in bad.json()


async def test_routes_with_and_without_kind(wb: DaemonHandle) -> None:
    record = await wb.run("true")
    eid = record["executionId"]
    assert (await wb.client.get(f"/v1/executions/workbench_bash/{eid}")).status_code == 200
    assert (await wb.client.get(f"/v1/executions/{eid}")).status_code == 200
    wrong = await wb.client.get(f"/v1/executions/workbench_code/{eid}")
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "not_found"
    for suffix in ("/events", "/artifacts"):
        assert (await wb.client.get(f"/v1/executions/workbench_bash/{eid}{suffix}")).status_code == 200
        assert (await wb.client.get(f"/v1/executions/{eid}{suffix}")).status_code == 200
        assert (await wb.client.get(f"/v1/executions/workbench_code/{eid}{suffix}")).status_code == 404


async def test_events_pages(wb: DaemonHandle) -> None:
    record = await wb.run("for i in 1 2 3; do echo $i; sleep 0.05; done")
    eid = record["executionId"]
    page = (await wb.client.get(f"/v1/executions/{eid}/events", params={"after": 0, "limit": 2})).json()
    assert [e["sequence"] for e in page["events"]] == [1, 2]
    assert page["nextAfter"] == 2 and page["terminal"] is False
    rest = (await wb.client.get(f"/v1/executions/{eid}/events", params={"after": 2})).json()
    assert rest["events"][0]["sequence"] == 3 and rest["terminal"] is True
    beyond = (await wb.client.get(f"/v1/executions/{eid}/events", params={"after": 999})).json()
    assert beyond["events"] == [] and beyond["nextAfter"] == 999


async def test_delete_only_when_terminal(wb: DaemonHandle) -> None:
    running = await wb.start("sleep 30")
    conflict = await wb.client.delete(f"/v1/executions/{running['executionId']}")
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "conflict"
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])
    big = await wb.run("head -c 6000000 /dev/zero")
    directory = wb.data_dir / "executions" / big["executionId"]
    assert (directory / "stdout").exists()
    for eid in (running["executionId"], big["executionId"]):
        gone = await wb.client.delete(f"/v1/executions/{eid}")
        assert gone.status_code == 204
        assert (await wb.client.get(f"/v1/executions/{eid}")).status_code == 404
        assert (await wb.client.get(f"/v1/executions/{eid}/events")).status_code == 404
    assert not directory.exists()


async def test_cancel_a_running_and_a_finished_execution(wb: DaemonHandle) -> None:
    running = await wb.start("sleep 30")
    response = await wb.client.post(
        f"/v1/executions/{running['executionId']}/cancel", json={"reason": "user asked"}
    )
    assert response.status_code == 202
    assert response.json()["cancelled"] is True
    assert response.json()["execution"]["status"] in {"cancel_requested", "cancelled"}
    final = await wb.wait(running["executionId"])
    assert final["status"] == "cancelled" and final["cancelReason"] == "user asked"
    again = await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    assert again.status_code == 200
    assert again.json() == {"cancelled": False, "execution": again.json()["execution"]}
    assert again.json()["execution"]["status"] == "cancelled"
    done = await wb.run("exit 0")
    late = await wb.client.post(f"/v1/executions/{done['executionId']}/cancel")
    assert late.status_code == 200 and late.json()["cancelled"] is False
    assert late.json()["execution"]["status"] == "completed"


async def test_spawn_failure_is_a_failed_execution(make_daemon: Any, tmp_path: Any) -> None:
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1)
    gone = tmp_path / "gone"
    gone.mkdir()
    # The blocker holds the one slot until the cwd is gone (a `sleep` could end first).
    blocker = await wb.start(f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.02; done")
    queued = await wb.start("true", cwd=str(gone))
    assert queued["status"] == "queued"
    # The cwd is checked at acceptance; one removed before the spawn makes the spawn fail.
    gone.rmdir()
    (tmp_path / "go").touch()
    await wb.wait(blocker["executionId"])
    final = await wb.wait(queued["executionId"])
    assert final["status"] == "failed"
    assert final["error"]["code"] == "spawn_failed"
    assert str(gone) in final["error"]["message"] or "No such file" in final["error"]["message"]
    assert final["startedAt"] is None


# -- errors ----------------------------------------------------------------------------------


async def expect_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]
    return body


async def test_every_error_code(wb: DaemonHandle) -> None:
    """Promise 7: every bad request gets the JSON error of API.md and changes nothing."""
    async with httpx.AsyncClient(base_url=wb.url) as anonymous:
        await expect_error(await anonymous.get("/v1/executions"), 401, "unauthorized")
        wrong = await anonymous.get("/v1/executions", headers={"Authorization": "Bearer nope"})
        await expect_error(wrong, 401, "unauthorized")
    client = wb.client
    post = "/v1/executions/workbench_bash"
    await expect_error(await client.get("/v1/nothing-here"), 404, "not_found")
    await expect_error(await client.get("/v1/executions/ex_01JD0000000000000000000000"), 404, "not_found")
    await expect_error(await client.get("/v1/executions/../../etc/passwd"), 404, "not_found")
    await expect_error(await client.post(post, content=b"{not json"), 400, "bad_request")
    await expect_error(await client.post(post, content=b"\xff\xfe"), 400, "bad_request")
    await expect_error(await client.post(post, content=b"[" * 5000 + b"]" * 5000), 400, "bad_request")
    big = b'{"command": "' + b"x" * (1024 * 1024 + 10) + b'"}'
    await expect_error(await client.post(post, content=big), 413, "payload_too_large")
    body = await expect_error(await client.post(post, json={"command": ""}), 422, "invalid_request")
    assert body["error"]["details"][0]["field"] == "command"
    await expect_error(await client.post(post, json={}), 422, "invalid_request")
    await expect_error(await client.post(post, json={"command": "true", "nope": 1}), 422, "invalid_request")
    await expect_error(await client.post(post, json={"command": "a\x00b"}), 422, "invalid_request")
    await expect_error(
        await client.post(post, json={"command": "true", "cwd": "relative"}), 422, "invalid_request"
    )
    await expect_error(
        await client.post(post, json={"command": "true", "cwd": "/does/not/exist"}), 422, "invalid_request"
    )
    await expect_error(
        await client.post(post, json={"command": "true", "env": {"1BAD": "x"}}), 422, "invalid_request"
    )
    await expect_error(
        await client.post(post, json={"command": "true", "timeoutMs": 86_400_001}), 422, "invalid_request"
    )
    await expect_error(
        await client.post(post, json={"command": "true", "waitTimeoutMs": 600_001}), 422, "invalid_request"
    )
    await expect_error(
        await client.post(post, json={"command": "true", "metadata": {"x": "y" * 17000}}),
        422,
        "invalid_request",
    )
    await expect_error(
        await client.post(post, json={"command": "true", "image": "nope"}), 422, "unknown_image"
    )
    await expect_error(
        await client.post("/v1/executions/workbench_code", json={"language": "cobol", "code": "x"}),
        422,
        "unsupported_language",
    )
    await expect_error(
        await client.post(post, json={"command": "true"}, headers={"Idempotency-Key": "k" * 256}),
        400,
        "bad_request",
    )
    wrong_method = await expect_error(await client.put("/v1/executions"), 404, "not_found")
    assert "GET" in wrong_method["error"]["message"]
    listing = await client.get("/v1/executions")
    assert listing.json()["executions"] == [], "a rejected request must leave no row"
    assert list((wb.data_dir / "executions").iterdir()) == []
