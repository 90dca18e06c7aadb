"""Browsers' credentials and streams (API.md v2, "Browsers"), over plain HTTP against a real daemon:
sessions and their CSRF header, stream tokens, CORS, login codes, the changes stream, the 204."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from pathlib import Path
from typing import Any

import httpx
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from tests.sse import Frame, frames, keepalive_after_quiet

CSRF = "X-Workbench-CSRF"


async def login(wb: DaemonHandle) -> tuple[httpx.AsyncClient, dict[str, Any]]:
    """A client with no token, holding the session cookie of a login (and the login's answer)."""
    browser = httpx.AsyncClient(base_url=wb.url, timeout=60)
    response = await browser.post("/v1/login", json={"token": TOKEN})
    assert response.status_code == 200, response.text
    cookie = response.headers["set-cookie"]
    assert re.match(r"workbench_session_[0-9a-f]{12}=", cookie), cookie  # the daemon's own name
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    return browser, response.json()


def session_cookie(browser: httpx.AsyncClient) -> tuple[str, str]:
    """The name and value of the session cookie `browser` holds."""
    found = [(c.name, c.value or "") for c in browser.cookies.jar if c.name.startswith("workbench_session_")]
    assert len(found) == 1, found
    return found[0]


def error_code(response: httpx.Response, status: int) -> str:
    assert response.status_code == status, response.text
    code: str = response.json()["error"]["code"]
    return code


async def test_a_session_reads_and_changes_only_with_its_csrf_header(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Promise 7: a cookie-authenticated change without the CSRF header is 403 and changes nothing."""
    browser, session = await login(wb)
    async with contextlib.aclosing(browser):
        assert session["principal"] == "admin"
        assert session["scopes"] == ["logs:read", "tools:execute"]
        started = await wb.start("while [ ! -e stop ]; do sleep 0.02; done", cwd=str(tmp_path))
        path = f"/v1/executions/{started['executionId']}"
        assert (await browser.get(path)).status_code == 200  # reads need no CSRF header
        assert error_code(await browser.post(path + "/cancel", json={}), 403) == "forbidden"
        wrong = await browser.post(path + "/cancel", json={}, headers={CSRF: "not-it"})
        assert error_code(wrong, 403) == "forbidden"
        start = await browser.post("/v1/executions/workbench_bash", json={"command": "true"})
        assert error_code(start, 403) == "forbidden"
        assert (await wb.client.get(path)).json()["status"] in ("queued", "running")  # nothing changed
        done = await browser.post(
            path + "/cancel", json={"reason": "r"}, headers={CSRF: session["csrfToken"]}
        )
        assert done.status_code == 202, done.text
        # Bearer tokens work unchanged, and need no CSRF header.
        assert (await wb.client.post(path + "/cancel", json={})).status_code in (200, 202)


async def test_a_session_leases_exits_only_with_its_csrf_header(wb: DaemonHandle) -> None:
    """`GET /v1/exits` hides what it hands out for `leaseMs`: a cookie-authenticated poll changes
    something, so it needs the CSRF header as any change does (403 without it, nothing leased)."""
    record = await wb.run("true", detached=True)
    browser, session = await login(wb)
    async with contextlib.aclosing(browser):
        for method in ("GET", "HEAD"):
            refused = await browser.request(method, "/v1/exits", params={"leaseMs": 60_000})
            assert refused.status_code == 403, (method, refused.text)
        assert error_code(await browser.get("/v1/exits", params={"leaseMs": 0}), 403) == "forbidden"
        look = await wb.client.get("/v1/exits", params={"leaseMs": 0})
        assert [(e["executionId"], e["attempt"]) for e in look.json()["exits"]] == [
            (record["executionId"], 1)
        ]
        leased = await browser.get(
            "/v1/exits", params={"leaseMs": 60_000}, headers={CSRF: session["csrfToken"]}
        )
        assert leased.status_code == 200 and len(leased.json()["exits"]) == 1, leased.text


async def test_logout_ends_the_session_for_good(make_daemon: Any, tmp_path: Path) -> None:
    wb: DaemonHandle = await make_daemon(tmp_path / "data")
    browser, session = await login(wb)
    name, cookie = session_cookie(browser)
    async with contextlib.aclosing(browser):
        assert error_code(await browser.post("/v1/logout"), 403) == "forbidden"  # CSRF here too
        response = await browser.post("/v1/logout", headers={CSRF: session["csrfToken"]})
        assert response.status_code == 204
        assert "Max-Age=0" in response.headers["set-cookie"]
    # The old cookie, sent again, is refused: now and after a restart of the daemon.
    async with httpx.AsyncClient(base_url=wb.url, cookies={name: cookie}) as c:
        assert error_code(await c.get("/v1/executions"), 401) == "unauthorized"
    again = await restart(make_daemon, wb, tmp_path)
    async with httpx.AsyncClient(base_url=again.url, cookies={name: cookie}) as c:
        assert error_code(await c.get("/v1/executions"), 401) == "unauthorized"
    # A session that was not ended outlives the restart (its key is in the data dir).
    fresh, _ = await login(again)
    assert session_cookie(fresh)[0] == name  # the name lasts as the data dir's key does
    kept = session_cookie(fresh)[1]
    await fresh.aclose()
    again = await restart(make_daemon, again, tmp_path)
    async with httpx.AsyncClient(base_url=again.url, cookies={name: kept}) as c:
        assert (await c.get("/v1/executions")).status_code == 200


async def restart(make_daemon: Any, wb: DaemonHandle, tmp_path: Path) -> DaemonHandle:
    """Stop `wb` and start a daemon on its data dir once the first has let go of it."""
    await wb.client.aclose()
    wb.shutdown.set()
    lock = os.open(tmp_path / "data" / "daemon.lock", os.O_RDWR)
    try:
        with ceilings.within(60, "the first daemon to let go of its data dir"):
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    fcntl.flock(lock, fcntl.LOCK_UN)
                    break
                except BlockingIOError:
                    await trio.sleep(0.05)
    finally:
        os.close(lock)
    handle: DaemonHandle = await make_daemon(tmp_path / "data")
    return handle


async def test_bad_logins_get_the_json_errors_of_the_contract(wb: DaemonHandle) -> None:
    async with httpx.AsyncClient(base_url=wb.url) as anonymous:
        assert error_code(await anonymous.post("/v1/login", json={"token": "x" * 20}), 401) == "unauthorized"
        assert error_code(await anonymous.post("/v1/login", json={}), 422) == "invalid_request"
        both = {"token": TOKEN, "code": "c"}
        assert error_code(await anonymous.post("/v1/login", json=both), 422) == "invalid_request"
        assert error_code(await anonymous.post("/v1/login", json={"tok": TOKEN}), 422) == "invalid_request"
        form = await anonymous.post("/v1/login", data={"token": TOKEN})
        assert error_code(form, 400) == "bad_request"
        assert error_code(await anonymous.post("/v1/login", content=b"{"), 400) == "bad_request"
        assert error_code(await anonymous.post("/v1/login/links"), 401) == "unauthorized"
    browser, _ = await login(wb)
    name, _cookie = session_cookie(browser)
    await browser.aclose()
    for forged in ("a.1.b.c", "nonsense", TOKEN):
        async with httpx.AsyncClient(base_url=wb.url, cookies={name: forged}) as c:
            assert error_code(await c.get("/v1/executions"), 401) == "unauthorized", forged


async def test_a_login_code_logs_in_once(wb: DaemonHandle) -> None:
    link = await wb.client.post("/v1/login/links")
    assert link.status_code == 201, link.text
    code = link.json()["code"]
    async with httpx.AsyncClient(base_url=wb.url) as browser:
        first = await browser.post("/v1/login", json={"code": code})
        assert first.status_code == 200 and first.json()["principal"] == "admin"
        assert (await browser.get("/v1/executions")).status_code == 200
    async with httpx.AsyncClient(base_url=wb.url) as other:
        assert error_code(await other.post("/v1/login", json={"code": code}), 401) == "unauthorized"


async def test_a_stream_token_opens_its_own_execution_s_stream_only(wb: DaemonHandle) -> None:
    """Promise 9: a stream token for one execution is refused on another's stream and elsewhere."""
    one, two = await wb.run("echo one"), await wb.run("echo two")
    response = await wb.client.post(f"/v1/executions/workbench_bash/{one['executionId']}/stream-token")
    assert response.status_code == 200, response.text
    token = response.json()["streamToken"]
    assert response.json()["expiresAt"].endswith("Z")
    async with httpx.AsyncClient(base_url=wb.url, timeout=60) as anonymous:
        own = f"/v1/executions/{one['executionId']}/events/stream"
        async with anonymous.stream("GET", own, params={"streamToken": token}) as stream:
            assert stream.status_code == 200
            got = [f async for f in frames(stream)]
        assert [f.json["outputDelta"] for f in got if f.event == "output"] == ["one\n"]
        other = f"/v1/executions/{two['executionId']}/events/stream"
        assert error_code(await anonymous.get(other, params={"streamToken": token}), 403) == "forbidden"
        tampered = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
        assert error_code(await anonymous.get(own, params={"streamToken": tampered}), 401) == "unauthorized"
        # Not a credential on any other route.
        record = f"/v1/executions/{one['executionId']}"
        assert error_code(await anonymous.get(record, params={"streamToken": token}), 401) == "unauthorized"
    unknown = await wb.client.post("/v1/executions/ex_00000000000000000000000000/stream-token")
    assert error_code(unknown, 404) == "not_found"


async def test_the_stream_answers_204_when_resumed_after_its_terminal_event(wb: DaemonHandle) -> None:
    record = await wb.run("echo x")
    path = f"/v1/executions/{record['executionId']}/events/stream"
    last = record["lastSequence"]
    done = await wb.client.get(path, headers={"Last-Event-ID": str(last)})
    assert done.status_code == 204 and done.content == b""
    assert (await wb.client.get(path, params={"after": last + 5})).status_code == 204
    async with wb.client.stream("GET", path, params={"after": last - 1}) as before_the_end:
        assert before_the_end.status_code == 200
        assert [f.id async for f in frames(before_the_end) if f.id is not None] == [last]


async def test_cors_is_off_unless_origins_are_configured(make_daemon: Any, tmp_path: Path) -> None:
    wb: DaemonHandle = await make_daemon(tmp_path / "a")
    preflight = {"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    response = await wb.client.options("/v1/executions/workbench_bash", headers=preflight)
    assert error_code(response, 403) == "forbidden"
    plain = await wb.client.get("/v1/executions", headers={"Origin": "http://evil.example"})
    assert plain.status_code == 200 and not any(h.startswith("access-control-") for h in plain.headers)

    allowed = "http://127.0.0.1:5173"
    cors: DaemonHandle = await make_daemon(tmp_path / "b", cors_origins=(allowed, "https://ui.example"))
    ok = await cors.client.options(
        "/v1/executions/workbench_bash", headers={"Origin": allowed, "Access-Control-Request-Method": "POST"}
    )
    assert ok.status_code == 204
    assert ok.headers["access-control-allow-origin"] == allowed
    assert "X-Workbench-CSRF" in ok.headers["access-control-allow-headers"]
    got = await cors.client.get("/v1/executions", headers={"Origin": allowed})
    assert got.headers["access-control-allow-origin"] == allowed and "Origin" in got.headers["vary"]
    for near in ("http://127.0.0.1:5174", allowed + "/", "https://ui.example.evil", "null"):
        response = await cors.client.get("/v1/executions", headers={"Origin": near})
        assert "access-control-allow-origin" not in response.headers, near


async def changes(client: httpx.AsyncClient, stop: Any, **kw: Any) -> list[Frame]:
    """Frames of the changes stream until `stop(frames)` is true."""
    got: list[Frame] = []
    async with client.stream("GET", "/v1/events/stream", **kw) as response:
        assert response.status_code == 200, await response.aread()
        async for frame in frames(response):
            if frame.comment is None:
                got.append(frame)
            if stop(got):
                break
    return got


async def test_a_quiet_changes_stream_gets_a_keepalive_and_goes_on(wb: DaemonHandle) -> None:
    """A `: keepalive` comment after 15 s without a change, and the stream then goes on."""
    with ceilings.within(45, "a keep-alive, then the next change"):
        async with wb.client.stream("GET", "/v1/events/stream") as response:
            quiet_s = await keepalive_after_quiet(
                response,
                lambda frame: frame.event == "ready",
                lambda: wb.start("true"),
                lambda frame: frame.event == "created",
            )
    assert quiet_s >= 14  # not before 15 s of quiet


def ended(execution_id: str) -> Any:
    return lambda got: any(
        f.event == "terminal" and f.json["execution"]["executionId"] == execution_id for f in got
    )


async def test_the_changes_stream_follows_every_execution_and_resumes_by_its_id(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """Promise 2 for the list: a reconnect with the last id gets each execution changed since, once."""
    first = await wb.run("true")
    with ceilings.within(60, "the changes of a new execution"):
        async with wb.client.stream("GET", "/v1/events/stream") as response:
            stream = frames(response)
            ready = await anext(stream)
            assert ready.event == "ready" and ready.id == ready.json["changeId"]
            started = await wb.start(
                "echo '3/10 warming' > \"$WORKBENCH_PROGRESS\"; while [ ! -e go ]; do sleep 0.02; done",
                cwd=str(tmp_path),
            )
            seen: list[Frame] = []
            async for frame in stream:
                if frame.comment is not None:
                    continue
                seen.append(frame)
                if frame.event == "progress":
                    (tmp_path / "go").touch()
                if frame.event == "terminal":
                    break
    assert {f.json["execution"]["executionId"] for f in seen} == {started["executionId"]}
    assert seen[0].event == "created" and seen[-1].json["execution"]["status"] == "completed"
    change = next(f for f in seen if f.event == "progress").json
    assert change["progress"] == {"progress": 3, "total": 10, "message": "warming"}
    assert change["execution"]["progress"] == change["progress"], "one progress, the record's"
    ids = [f.id or 0 for f in seen]
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and 0 not in ids
    # From the ready id: the new execution once, as it is now; the older one not at all.
    resumed = await changes(
        wb.client, ended(started["executionId"]), headers={"Last-Event-ID": str(ready.id)}
    )
    assert resumed[0].event == "ready" and resumed[0].id == ready.id
    assert [f.json["execution"]["executionId"] for f in resumed[1:]] == [started["executionId"]]
    assert resumed[1].json == seen[-1].json
    everything = await changes(wb.client, ended(started["executionId"]), params={"after": 0})
    assert [f.json["execution"]["executionId"] for f in everything[1:]] == [
        first["executionId"],
        started["executionId"],
    ]


async def test_a_batch_in_the_changes_stream_carries_its_items(wb: DaemonHandle) -> None:
    """A batch's record in the changes stream is the record as it is now, its items included (it
    came with `items: []`), as `GET` gives it."""
    head = (await changes(wb.client, lambda got: bool(got)))[0].id
    answer = await wb.client.post(
        "/v1/executions/batch",
        json={"items": [{"kind": "workbench_bash", "command": c} for c in ("true", "exit 3")]},
    )
    assert answer.status_code in (200, 201, 202), answer.text
    batch = answer.json()
    with ceilings.within(60, "the batch's terminal change"):
        seen = await changes(wb.client, ended(batch["executionId"]), params={"after": head})
    batch_id = batch["executionId"]
    record = next(f.json["execution"] for f in seen[1:] if f.json["execution"]["executionId"] == batch_id)
    statuses = [(i["status"], i["exitCode"]) for i in record["items"]]
    assert statuses == [("completed", 0), ("failed", 3)], record
    fetched = (await wb.client.get(f"/v1/executions/{batch['executionId']}")).json()
    assert record["items"] == fetched["items"]


async def test_the_changes_stream_shows_a_principal_only_its_own(make_daemon: Any, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(
        '[[tokens]]\ntoken = "ci-token-0123456789"\nprincipal = "ci"\n'
        'scopes = ["logs:read", "tools:execute"]\n'
    )
    tokens.chmod(0o600)
    wb: DaemonHandle = await make_daemon(tokens_file=tokens)
    admins = await wb.run("true")
    async with httpx.AsyncClient(
        base_url=wb.url, headers={"Authorization": "Bearer ci-token-0123456789"}, timeout=60
    ) as ci:
        mine = (await ci.post("/v1/executions/workbench_bash", json={"command": "true"})).json()
        got = await changes(ci, ended(mine["executionId"]), params={"after": 0})
    assert {f.json["execution"]["executionId"] for f in got[1:]} == {mine["executionId"]}
    assert admins["executionId"] != mine["executionId"]


async def test_a_session_expires(make_daemon: Any) -> None:
    # Long enough that a loaded machine still makes the request that the session allows in time.
    wb: DaemonHandle = await make_daemon(session_ttl_ms=2500)
    browser, _session = await login(wb)
    async with contextlib.aclosing(browser):
        assert "Max-Age=2" in (await browser.post("/v1/login", json={"token": TOKEN})).headers["set-cookie"]
        name, cookie = session_cookie(browser)
        assert (await browser.get("/v1/executions")).status_code == 200
    await trio.sleep(2.7)
    async with httpx.AsyncClient(base_url=wb.url, cookies={name: cookie}) as late:
        response = await late.get("/v1/executions")
        assert error_code(response, 401) == "unauthorized"
        assert "ended" in response.json()["error"]["message"]
