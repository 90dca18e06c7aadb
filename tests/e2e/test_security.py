"""Principals and scopes through every route, tokens kept out of logs, and the daemon's exposure."""

from __future__ import annotations

import logging
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"
READER = "reader-token-0123456789abcdef"  # alice, logs:read only
RUNNER = "runner-token-0123456789abcdef"  # alice, tools:execute only
WATCHER = "watcher-token-0123456789abcdef"  # admin, logs:read only (a metrics scraper's)
TOKENS_FILE = f"""
[[tokens]]
token = "{ALICE}"
principal = "alice"
scopes = ["tools:execute", "logs:read"]

[[tokens]]
token = "{BOB}"
principal = "bob"
scopes = ["tools:execute", "logs:read"]

[[tokens]]
token = "{READER}"
principal = "alice"
scopes = ["logs:read"]

[[tokens]]
token = "{RUNNER}"
principal = "alice"
scopes = ["tools:execute"]

[[tokens]]
token = "{WATCHER}"
principal = "admin"
scopes = ["logs:read"]
"""
ALL_TOKENS = (TOKEN, ALICE, BOB, READER, RUNNER)
UNKNOWN_ID = "ex_01JD0000000000000000000000"


@dataclass
class Principals:
    wb: DaemonHandle
    clients: dict[str, httpx.AsyncClient]

    def __getitem__(self, name: str) -> httpx.AsyncClient:
        return self.clients[name]


@pytest.fixture
async def principals(make_daemon: Any, tmp_path: Path) -> AsyncIterator[Principals]:
    """A daemon with the tokens above; clients named admin, alice, bob, reader, runner, anonymous."""
    path = tmp_path / "tokens.toml"
    path.write_text(TOKENS_FILE)
    path.chmod(0o600)
    wb: DaemonHandle = await make_daemon(tokens_file=path)
    tokens = {"admin": TOKEN, "alice": ALICE, "bob": BOB, "reader": READER, "runner": RUNNER}
    clients = {
        name: httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        for name, token in tokens.items()
    }
    clients["anonymous"] = httpx.AsyncClient(base_url=wb.url, timeout=30)
    try:
        yield Principals(wb, clients)
    finally:
        for client in clients.values():
            await client.aclose()


def execution_routes(eid: str, kind: str = "workbench_bash") -> list[tuple[str, str, Any]]:
    """(method, path, JSON body) of every per-execution route, with and without the kind segment."""
    out: list[tuple[str, str, Any]] = []
    for base in (f"/v1/executions/{eid}", f"/v1/executions/{kind}/{eid}"):
        out += [
            ("GET", base, None),
            ("GET", f"{base}/events", None),
            ("GET", f"{base}/events/stream", None),
            ("GET", f"{base}/artifacts", None),
            ("GET", f"{base}/artifacts/stdout", None),
            ("POST", f"{base}/wait", {"waitTimeoutMs": 0}),
            ("POST", f"{base}/cancel", {"reason": "not yours"}),
            ("POST", f"{base}/detach", None),
            ("DELETE", base, None),
        ]
    return out


async def call(client: httpx.AsyncClient, method: str, path: str, body: Any = None) -> httpx.Response:
    # A wrongly opened stream of a running execution would hang: fail instead.
    with trio.fail_after(20):
        return await client.request(method, path, json=body)


def error_code(response: httpx.Response) -> str:
    code: str = response.json()["error"]["code"]
    return code


async def test_anothers_execution_is_not_found_through_every_route(principals: Principals) -> None:
    """Promise 9: another principal's execution is 404 (never 403) on every route, and stays as it was."""
    alice, bob = principals["alice"], principals["bob"]
    running = (
        await alice.post("/v1/executions/workbench_bash", json={"command": "sleep 30", "background": True})
    ).json()
    done = (await alice.post("/v1/executions/workbench_bash", json={"command": "printf '\\xff'"})).json()
    assert [a["name"] for a in done["artifacts"]] == ["stdout"]
    for eid in (running["executionId"], done["executionId"]):
        for method, path, body in execution_routes(eid):
            response = await call(bob, method, path, body)
            assert (response.status_code, error_code(response)) == (404, "not_found"), (method, path)
    after = (await alice.get(f"/v1/executions/{running['executionId']}")).json()
    assert after["status"] == "running" and after["detached"] is False and after["cancelReason"] is None
    assert (await alice.get(f"/v1/executions/{done['executionId']}/artifacts/stdout")).content == b"\xff"
    listed = (await bob.get("/v1/executions")).json()["executions"]
    assert listed == []
    # The owner, through another of its tokens, and admin see both.
    for name in ("reader", "admin"):
        seen = {e["executionId"] for e in (await principals[name].get("/v1/executions")).json()["executions"]}
        assert seen == {running["executionId"], done["executionId"]}, name
    cancelled = await principals["runner"].post(f"/v1/executions/{running['executionId']}/cancel", json={})
    assert cancelled.status_code == 202


async def test_not_found_says_the_same_for_anothers_and_for_none(principals: Principals) -> None:
    """Promise 9: the 404 for another's execution reads exactly like the 404 for an id never made."""
    mine = (await principals["alice"].post("/v1/executions/workbench_bash", json={"command": "true"})).json()
    eid = mine["executionId"]
    for (method, path, body), (_, unknown_path, _) in zip(
        execution_routes(eid), execution_routes(UNKNOWN_ID), strict=True
    ):
        theirs = await call(principals["bob"], method, path, body)
        never = await call(principals["bob"], method, unknown_path, body)
        assert theirs.status_code == never.status_code == 404
        assert theirs.json() == never.json() | {
            "error": {
                **never.json()["error"],
                "message": never.json()["error"]["message"].replace(UNKNOWN_ID, eid),
            }
        }, (method, path)


async def test_idempotency_keys_of_two_principals_never_meet(principals: Principals) -> None:
    """Promise 8 and 9: equal keys of two principals start two executions, each seen by its owner."""
    body = {"command": "true", "background": True}
    headers = {"Idempotency-Key": "same-key"}
    a = await principals["alice"].post("/v1/executions/workbench_bash", json=body, headers=headers)
    b = await principals["bob"].post("/v1/executions/workbench_bash", json=body, headers=headers)
    assert a.status_code == b.status_code == 202
    assert a.json()["executionId"] != b.json()["executionId"]
    for client, record in ((principals["alice"], a.json()), (principals["bob"], b.json())):
        await client.post(f"/v1/executions/{record['executionId']}/wait", json={})


async def test_scopes_gate_every_route(principals: Principals) -> None:
    """Promise 9: tools:execute starts, cancels, detaches, deletes; logs:read reads; else 403."""
    reader, runner = principals["reader"], principals["runner"]
    record = (
        await principals["alice"].post("/v1/executions/workbench_bash", json={"command": "true"})
    ).json()
    eid = record["executionId"]
    for client, executes in ((reader, False), (runner, True)):
        for method, path, body in execution_routes(eid) + execution_routes(UNKNOWN_ID):
            is_write = method == "DELETE" or path.endswith(("/cancel", "/detach"))
            response = await call(client, method, path, body)
            if executes != is_write:
                # Refused whether or not the execution exists: a 403 reveals nothing.
                assert (response.status_code, error_code(response)) == (403, "forbidden"), (method, path)
            else:
                assert response.status_code != 403, (method, path)
    start = {"command": "true", "background": True}
    refused = await reader.post("/v1/executions/workbench_bash", json=start)
    assert (refused.status_code, error_code(refused)) == (403, "forbidden")
    assert (
        await reader.post("/v1/executions/workbench_code", json={"language": "bash", "code": "true"})
    ).status_code == 403
    for path in ("/v1/executions", "/v1/images"):
        assert (await runner.get(path)).status_code == 403
        assert (await reader.get(path)).status_code == 200
    started = await runner.post("/v1/executions/workbench_bash", json=start)
    assert started.status_code == 202
    await principals["alice"].post(f"/v1/executions/{started.json()['executionId']}/wait", json={})


async def test_no_token_or_a_wrong_one_is_unauthorized_on_every_route(principals: Principals) -> None:
    """Promise 9: every route but /healthz needs a known bearer token."""
    record = (
        await principals["alice"].post("/v1/executions/workbench_bash", json={"command": "true"})
    ).json()
    routes = [
        *execution_routes(record["executionId"]),
        *execution_routes(UNKNOWN_ID),
        ("GET", "/v1/executions", None),
        ("POST", "/v1/executions/workbench_bash", {"command": "true"}),
        ("POST", "/v1/executions/workbench_code", {"language": "bash", "code": "true"}),
        ("GET", "/v1/images", None),
        ("GET", "/v1/exits", None),
        ("POST", "/v1/exits/dl_01JD0000000000000000000000/ack", None),
    ]
    wrong = {"Authorization": f"Bearer {ALICE[:-1]}X"}
    for method, path, body in routes:
        for headers in ({}, wrong, {"Authorization": ALICE}, {"Authorization": f"Basic {ALICE}"}):
            response = await principals["anonymous"].request(method, path, json=body, headers=headers)
            assert (response.status_code, error_code(response)) == (401, "unauthorized"), (method, path)
            assert response.headers["WWW-Authenticate"] == "Bearer"
    assert len((await principals["admin"].get("/v1/executions")).json()["executions"]) == 1


async def test_exits_are_seen_only_by_their_principal(principals: Principals) -> None:
    """Promise 9: a principal reads and acks only the exits of its own detached executions."""
    start = {"command": "echo bye", "detached": True}
    record = (await principals["alice"].post("/v1/executions/workbench_bash", json=start)).json()
    assert record["status"] == "completed"
    poll = {"waitTimeoutMs": 0}
    bobs = (await principals["bob"].get("/v1/exits", params=poll)).json()["exits"]
    assert all(e["executionId"] != record["executionId"] for e in bobs)
    assert (await principals["runner"].get("/v1/exits", params=poll)).status_code == 403
    alices = (await principals["reader"].get("/v1/exits", params=poll)).json()["exits"]
    mine = [e for e in alices if e["executionId"] == record["executionId"]]
    assert len(mine) == 1
    ack = f"/v1/exits/{mine[0]['deliveryId']}/ack"
    stolen = await principals["bob"].post(ack)
    assert (stolen.status_code, error_code(stolen)) == (404, "not_found")
    assert (await principals["alice"].post(ack)).status_code == 204


ACCESS_LINE = re.compile(
    r"method=(?P<method>[A-Z]+) route=(?P<route>\S+) status=(?P<status>\d{3}) "
    r"duration_ms=\d+\.\d principal=(?P<principal>\S+)"
)


async def test_tokens_never_reach_the_log_and_each_request_is_one_access_line(
    principals: Principals, caplog: pytest.LogCaptureFixture
) -> None:
    """Promise 9: tokens (right or wrong) never appear in the log; the access log is key=value."""
    caplog.set_level(logging.DEBUG)
    near_miss = ALICE[:-2] + "zz"
    record = (
        await principals["alice"].post("/v1/executions/workbench_bash", json={"command": "echo hi"})
    ).json()
    eid = record["executionId"]
    await principals["reader"].get(f"/v1/executions/workbench_bash/{eid}/events", params={"after": 0})
    await principals["anonymous"].get("/v1/executions", headers={"Authorization": f"Bearer {near_miss}"})
    await principals["reader"].delete(f"/v1/executions/{eid}")
    await principals["bob"].get(f"/v1/executions/{eid}")
    await principals["admin"].get("/v1/nothing/here")
    await principals["admin"].post("/v1/executions/workbench_bash", content=b'{"command": "' + TOKEN.encode())
    logged = caplog.text + "".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    for token in (*ALL_TOKENS, near_miss):
        assert token not in logged
    lines = [r.getMessage() for r in caplog.records if r.name == "workbench.access"]
    parsed = [m.groupdict() for m in map(ACCESS_LINE.fullmatch, lines) if m is not None]
    assert len(parsed) == len(lines) == 7, lines
    assert not any(eid in line or "echo hi" in line for line in lines)
    assert parsed == [
        {"method": "POST", "route": "/v1/executions/<kind>", "status": "201", "principal": "alice"},
        {
            "method": "GET",
            "route": "/v1/executions/<kind>/<execution_id>/events",
            "status": "200",
            "principal": "alice",
        },
        {"method": "GET", "route": "/v1/executions", "status": "401", "principal": "-"},
        {"method": "DELETE", "route": "/v1/executions/<execution_id>", "status": "403", "principal": "alice"},
        {"method": "GET", "route": "/v1/executions/<execution_id>", "status": "404", "principal": "bob"},
        {"method": "GET", "route": "-", "status": "404", "principal": "-"},
        {"method": "POST", "route": "/v1/executions/<kind>", "status": "400", "principal": "admin"},
    ]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


async def test_the_generated_token_is_0600_in_a_0700_data_dir(make_daemon: Any, tmp_path: Path) -> None:
    """Promise 9: without WORKBENCH_TOKEN a token is generated, readable by the owner alone."""
    data_dir = tmp_path / "wide-open"
    data_dir.mkdir(mode=0o755)
    wb: DaemonHandle = await make_daemon(data_dir=data_dir, token=None)
    token = (data_dir / "token").read_text().strip()
    assert token and token != TOKEN
    assert mode(data_dir / "token") == 0o600
    for directory in (data_dir, data_dir / "executions", data_dir / "workspaces", data_dir / "run"):
        assert mode(directory) == 0o700, directory
    assert (await wb.client.get("/v1/executions")).status_code == 401
    headers = {"Authorization": f"Bearer {token}"}
    assert (await wb.client.get("/v1/executions", headers=headers)).status_code == 200


async def test_the_unix_socket_is_0600(make_daemon: Any, tmp_path: Path) -> None:
    """Promise 9: the Unix socket is for its owner alone, and still asks for a token."""
    socket_path = tmp_path / "wb.sock"
    await make_daemon(unix_socket=socket_path)
    assert stat.S_ISSOCK(socket_path.lstat().st_mode)
    assert mode(socket_path) == 0o600
    transport = httpx.AsyncHTTPTransport(uds=str(socket_path))
    async with httpx.AsyncClient(transport=transport, base_url="http://workbench") as client:
        assert (await client.get("/healthz")).json() == {"status": "ok"}
        assert (await client.get("/v1/executions")).status_code == 401
        authorized = await client.get("/v1/executions", headers={"Authorization": f"Bearer {TOKEN}"})
        assert authorized.status_code == 200


# -- `workbench serve` as a subprocess -------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
SERVE = [sys.executable, "-m", "workbench", "serve"]


def serve_env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no WORKBENCH_* of the test runner leaks into the daemon under test."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **extra}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "does not exist"),
        ("a directory", "cannot be read"),
        ("[[tokens]\n", "not valid TOML"),
        (TOKENS_FILE.replace('"logs:read"]', '"logs:write"]', 1), "unknown scope 'logs:write'"),
    ],
)
async def test_a_bad_tokens_file_stops_workbench_serve(
    tmp_path: Path, content: str | None, expected: str
) -> None:
    """Promise 9: a missing, unreadable or malformed tokens file stops the start with one clear line."""
    path = tmp_path / "tokens.toml"
    if content == "a directory":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    env = serve_env(tmp_path, WORKBENCH_TOKENS_FILE=str(path), WORKBENCH_TOKEN=TOKEN)
    with trio.fail_after(60):
        done = await trio.run_process(
            [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")],
            env=env,
            cwd=REPO,
            check=False,
            capture_stdout=True,
            capture_stderr=True,
        )
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert f"workbench: tokens file {path} (WORKBENCH_TOKENS_FILE)" in stderr and expected in stderr
    assert "Traceback" not in stderr
    assert not any(token in stderr for token in ALL_TOKENS)


async def read_until(stream: trio.abc.ReceiveStream, marker: bytes, seen: bytearray) -> None:
    while marker not in seen:
        chunk = await stream.receive_some()
        if not chunk:
            raise AssertionError(f"the daemon ended before {marker!r}: {seen.decode(errors='replace')}")
        seen += chunk


async def test_binding_beyond_loopback_needs_allow_remote_and_warns(tmp_path: Path) -> None:
    """Promise 9: a non-loopback bind is refused without --allow-remote, and warned about with it.

    The daemon's whole log is then searched for its token: it is never written there.
    """
    data_dir = tmp_path / "data"
    args = [*SERVE, "--bind", "0.0.0.0:0", "--data-dir", str(data_dir)]
    env = serve_env(tmp_path)
    with trio.fail_after(60):
        refused = await trio.run_process(args, env=env, cwd=REPO, check=False, capture_stderr=True)
    assert refused.returncode == 2
    assert "--allow-remote" in refused.stderr.decode()
    assert not data_dir.exists(), "a refused start touches nothing"
    process = await trio.lowlevel.open_process(
        [*args, "--allow-remote"], env=env, cwd=REPO, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    log = bytearray()
    try:
        with trio.fail_after(60):
            await read_until(process.stderr, b"workbench: listening on", log)
            await read_until(process.stderr, b"\n", log)
            match = re.search(rb"listening on http://0\.0\.0\.0:(\d+)", log)
            assert match, log.decode()
            token = (data_dir / "token").read_text().strip()
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{int(match[1])}") as client:
                for given, status in ((token, 200), (token[:-1] + "x", 401)):
                    response = await client.get(
                        "/v1/executions", headers={"Authorization": f"Bearer {given}"}
                    )
                    assert response.status_code == status
            process.send_signal(signal.SIGTERM)
            while chunk := await process.stderr.receive_some():
                log += chunk
            assert await process.wait() == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    text = log.decode()
    assert "WARNING" in text and "listening on 0.0.0.0:0: anyone who can reach it" in text
    assert "method=GET route=/v1/executions status=200" in text and "principal=admin" in text
    assert token not in text and token[:-1] not in text


async def test_principals_never_share_a_workspace(principals: Principals) -> None:
    """Promise 9: the same session id of two principals is two workspaces, on every image."""
    alice, bob = principals["alice"], principals["bob"]
    images = (await alice.get("/v1/images")).json()["images"]
    names = [i["name"] for i in images if i["available"]]
    for image in names:
        session = f"shared-{image}"
        body = {"command": "echo secret > mine.txt; pwd", "sessionId": session, "image": image}
        wrote = (await alice.post("/v1/executions/workbench_bash", json=body)).json()
        assert wrote["exitCode"] == 0, wrote
        probe = {
            "command": "cat mine.txt 2>/dev/null || echo absent; echo overwritten > mine.txt",
            "sessionId": session,
            "image": image,
        }
        read = (await bob.post("/v1/executions/workbench_bash", json=probe)).json()
        out = (await bob.get(f"/v1/executions/{read['executionId']}/events")).json()["events"]
        printed = "".join(e["outputDelta"] or "" for e in out if e["eventType"] == "output")
        assert printed == "absent\n", (image, printed)
        again = {"command": "cat mine.txt", "sessionId": session, "image": image}
        mine = (await alice.post("/v1/executions/workbench_bash", json=again)).json()
        events = (await alice.get(f"/v1/executions/{mine['executionId']}/events")).json()["events"]
        assert "".join(e["outputDelta"] or "" for e in events if e["eventType"] == "output") == "secret\n"
        assert wrote["cwd"] != read["cwd"]


async def test_metrics_are_the_whole_daemons_and_only_admin_reads_them(principals: Principals) -> None:
    """No one sees what is not theirs: /metrics counts every principal's executions, so a token of
    another principal is refused (403) even with logs:read; a read-only admin token is enough."""
    await principals["alice"].post("/v1/executions/workbench_bash", json={"command": "true"})
    for name in ("alice", "bob", "reader"):
        refused = await principals[name].get("/metrics")
        assert (refused.status_code, error_code(refused)) == (403, "forbidden"), name
        assert "admin" in refused.json()["error"]["message"]
    watcher = {"Authorization": f"Bearer {WATCHER}"}
    for headers in ({}, watcher):
        read = await principals["admin"].get("/metrics", headers=headers)
        assert read.status_code == 200 and 'workbench_executions{status="completed"} 1.0' in read.text
