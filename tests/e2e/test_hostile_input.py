"""Hostile input on every route: each gets the JSON error of API.md and changes nothing.

(Hostile code, what an execution can see of the daemon, is in `test_hostile_code`.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle

BASH = "/v1/executions/workbench_bash"
BATCH = "/v1/executions/batch"
CODE = "/v1/executions/workbench_code"
UNKNOWN_ID = "ex_01JD0000000000000000000000"


async def snapshot(wb: DaemonHandle) -> tuple[list[str], list[str]]:
    """Every execution id, and every file under the executions and workspaces dirs."""
    listing = await wb.client.get("/v1/executions", params={"limit": 1000})
    ids = [e["executionId"] for e in listing.json()["executions"]]
    files = sorted(
        str(p.relative_to(wb.data_dir))
        for sub in ("executions", "workspaces")
        for p in (wb.data_dir / sub).rglob("*")
    )
    return ids, files


@pytest.fixture
async def unchanged(wb: DaemonHandle) -> AsyncIterator[DaemonHandle]:
    """The daemon; at the end, the same executions and files as at the start (and no process)."""
    before = await snapshot(wb)
    yield wb
    assert await snapshot(wb) == before, "a rejected request left a row or a file behind"


def expect(response: httpx.Response, statuses: set[int], code: str | None = None) -> None:
    assert response.status_code in statuses, (response.request.url, response.text)
    error = response.json()["error"]
    assert isinstance(error["message"], str) and error["message"]
    if code is not None:
        assert error["code"] == code, response.text


async def test_bodies_over_the_limit_are_413_on_every_route(unchanged: DaemonHandle) -> None:
    """Promise 7: a body over 1 MiB is refused on any route, read or not, announced or chunked."""
    wb = unchanged
    too_big = b'{"command": "true", "metadata": "' + b"x" * (1024 * 1024) + b'"}'
    routes = [
        ("POST", BASH),
        ("POST", CODE),
        ("POST", f"/v1/executions/{UNKNOWN_ID}/wait"),
        ("POST", f"/v1/executions/{UNKNOWN_ID}/cancel"),
        ("POST", f"/v1/executions/{UNKNOWN_ID}/detach"),
        ("GET", "/v1/executions"),
        ("DELETE", f"/v1/executions/{UNKNOWN_ID}"),
        ("GET", "/healthz"),
        ("PUT", "/v1/no-such-route"),
    ]
    for method, path in routes:
        response = await wb.client.request(method, path, content=too_big)
        expect(response, {413}, "payload_too_large")
        assert response.headers["Connection"] == "close"

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 65536
        yield b'{"command": "true"}'

    chunked = await wb.client.post(BASH, content=chunks())
    expect(chunked, {413}, "payload_too_large")
    assert (await wb.client.get("/healthz")).status_code == 200


async def test_a_body_no_one_reads_never_stalls_the_connection(wb: DaemonHandle) -> None:
    """Promise 7: a body under the limit on a route that takes none is read and dropped."""
    body = b"x" * (900 * 1024)
    async with httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {TOKEN}"}) as one:
        for method, path in (("GET", "/v1/executions"), ("POST", f"/v1/executions/{UNKNOWN_ID}/detach")):
            with trio.fail_after(20):
                first = await one.request(method, path, content=body)
                again = await one.get("/healthz")
            assert first.status_code in {200, 404} and again.status_code == 200


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"{not json",
        b'{"command": "true"} trailing',
        b"\xff\xfe{}",
        b'{"command": "caf\xe9"}',
        b'\xef\xbb\xbf{"command": "true"}',
        b'{"command": "true", "metadata": NaN}',
        b'{"command": "true", "metadata": [Infinity, -Infinity]}',
        b'{"command": "true", "metadata": ' + b"9" * 5000 + b"}",
        b'{"command": "\\ud800"}',
        b'{"command": "true", "env": {"A": "\\udfff"}}',
        b'{"command": "true", "metadata": {"\\udbff": 1}}',
        b'{"command": "true", "metadata": ' + b"[" * 32 + b"]" * 32 + b"}",
        # A name given twice: which value would count? (The last, silently, before.)
        b'{"command": "echo a", "command": "echo b"}',
        b'{"command": "true", "env": {"A": "1", "A": "2"}}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"command": "true", "metadata": ' + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}",
    ],
)
async def test_malformed_bodies_are_400(unchanged: DaemonHandle, raw: bytes) -> None:
    """Promise 7: bodies that are not strict JSON in UTF-8, or nest deeper than 32 levels, are 400."""
    expect(await unchanged.client.post(BASH, content=raw), {400}, "bad_request")


async def test_the_deepest_json_allowed_is_32_levels(wb: DaemonHandle) -> None:
    nested = "[" * 31 + "]" * 31
    body = f'{{"command": "true", "metadata": {nested}}}'.encode()
    assert (await wb.client.post(BASH, content=body)).status_code == 201


NUL = "a\x00b"
INVALID = [
    {"command": NUL},
    {"command": ""},
    {"command": "x" * (128 * 1024)},
    {"command": 7},
    {"command": ["true"]},
    {"command": "true", "cwd": NUL},
    {"command": "true", "cwd": "relative/path"},
    {"command": "true", "cwd": ""},
    {"command": "true", "cwd": "~/somewhere"},
    {"command": "true", "cwd": "/" + "d" * 4096},
    {"command": "true", "cwd": "/etc/hostname"},
    {"command": "true", "env": {"A": NUL}},
    {"command": "true", "env": {"A": 1}},
    {"command": "true", "env": {"B": "v" * (128 * 1024)}},
    {"command": "true", "env": ["A=1"]},
    {"command": "true", "metadata": {"x": "y" * (16 * 1024)}},
    {"command": "true", "timeoutMs": True},
    {"command": "true", "timeoutMs": 0},
    {"command": "true", "timeoutMs": 1.5},
    {"command": "true", "timeoutMs": "100"},
    {"command": "true", "timeoutMs": 10**30},
    {"command": "true", "waitTimeoutMs": -1},
    {"command": "true", "idleTimeoutMs": 10**20},
    {"command": "true", "background": "yes"},
    {"command": "true", "background": True, "openStdin": "true"},
    {"command": "true", "background": True, "openStdin": 1},
    {"command": "true", "background": True, "tty": "true"},
    {"command": "true", "background": True, "tty": 1},
    {"command": "true", "persistShell": "true"},
    {"command": "true", "service": 1},
    {"command": "true", "timeoutMs": 1000.0},
    {"command": "true", "waitTimeoutMs": 1000.0},
    {"command": "true", "previewBytes": 16.0},
    {"command": "true", "background": True, "tty": True, "ttySize": {"rows": 10.0, "cols": 80}},
    {"command": "true", "sessionId": "../escape"},
    {"command": "true", "sessionId": ".."},
    {"command": "true", "sessionId": "s" * 65},
    {"command": "true", "image": "../host"},
    {"command": "true", "stdin": 5},
    {"command": "true", "unknownField": 1},
    [],
    "true",
    42,
    None,
]
INVALID += [{"command": "true", "env": {name: "x"}} for name in ("1A", "A-B", "", "A=B", "Ä", "A B", "A\x00")]


@pytest.mark.parametrize("body", INVALID, ids=lambda b: json.dumps(b)[:40])
async def test_invalid_start_requests_are_422(unchanged: DaemonHandle, body: Any) -> None:
    """Promise 7: a start request that fails validation is 422 with the fields, and starts nothing."""
    response = await unchanged.client.post(
        BASH, content=json.dumps(body), headers={"Idempotency-Key": "k-invalid"}
    )
    expect(response, {422}, "invalid_request")
    if isinstance(body, dict):
        assert response.json()["error"]["details"], "details name the fields"


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"command": "true", "metadata": 1e400}', "metadata"),
        (b'{"command": "true", "metadata": {"a": [1, -1E+400]}}', "metadata.a.1"),
        (b'{"command": "true", "metadata": {"big": 123456789e999}}', "metadata.big"),
        (b'{"command": "true", "timeoutMs": 1e400}', "timeoutMs"),
    ],
)
async def test_numbers_json_cannot_hold_are_422_naming_the_field(
    unchanged: DaemonHandle, raw: bytes, field: str
) -> None:
    """Promise 7: a number too large for a double (1e400) is refused, never stored as null."""
    response = await unchanged.client.post(BASH, content=raw)
    expect(response, {422}, "invalid_request")
    details = response.json()["error"]["details"]
    assert [d["field"] for d in details] == [field], details
    assert field in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "body",
    [
        {"language": "python", "code": NUL},
        {"language": "python"},
        {"language": "", "code": "1"},
        {"language": "x" * 65, "code": "1"},
        {"code": "1"},
        {"language": "python", "code": "1", "command": "true"},
    ],
    ids=lambda b: json.dumps(b)[:40],
)
async def test_invalid_code_requests_are_422(unchanged: DaemonHandle, body: Any) -> None:
    """Promise 7: a code execution with NUL in its code, or a field missing or foreign, is 422."""
    expect(await unchanged.client.post(CODE, json=body), {422}, "invalid_request")


async def test_limits_are_inclusive(wb: DaemonHandle) -> None:
    """Promise 7: metadata of exactly 16 KiB and env names of every allowed shape are accepted."""
    filler = 16 * 1024 - len('{"x":""}')
    env = {"_": "1", "a": "2", "A_1": "3", "z9": ""}
    record = await wb.run("true", metadata={"x": "y" * filler}, env=env)
    assert record["status"] == "completed" and len(record["metadata"]["x"]) == filler


async def test_ids_and_artifact_names_never_reach_outside(wb: DaemonHandle) -> None:
    """Promise 7 and 9: traversal, encoded `..`, `/` and NUL in ids or names are 404/400, never a file."""
    record = await wb.run("printf 'raw \\xff'", stdin="kept in the execution's directory\n")
    eid = record["executionId"]
    assert [a["name"] for a in record["artifacts"]] == ["stdout"]
    secrets = [TOKEN.encode(), b"SQLite format 3", b"kept in the execution"]
    (wb.data_dir / "token").write_text(TOKEN)
    art = f"/v1/executions/{eid}/artifacts"
    targets = [
        f"{art}/..%2F..%2F..%2Ftoken",
        f"{art}/%2e%2e%2f%2e%2e%2f%2e%2e%2ftoken",
        f"{art}/%2E%2E/%2E%2E/%2E%2E/token",
        f"{art}/..",
        f"{art}/%2e%2e",
        f"{art}/.",
        f"{art}/stdout%00",
        f"{art}/stdout%00.txt",
        f"{art}/%00",
        f"{art}/stdout/../../../token",
        f"{art}/../../../token",
        f"{art}/STDOUT",
        f"{art}/stdout%2F..%2F..%2F..%2Fworkbench.db",
        f"{art}/%252e%252e%252ftoken",
        f"{art}/..%5c..%5ctoken",
        f"{art}/%ff",
        f"{art}/stdin",
        f"{art}/progress",
        f"{art}/stderr",
        "/v1/executions/..%2F..%2Ftoken/artifacts/stdout",
        "/v1/executions/%2e%2e/artifacts/stdout",
        f"/v1/executions/{eid}%00/artifacts/stdout",
        f"/v1/executions/{eid.lower()}/artifacts/stdout",
        f"/v1/executions/{eid}x/artifacts/stdout",
        f"/v1/executions/workbench_bash/..%2F{eid}/artifacts/stdout",
        f"/v1/executions/workbench_bash/%2e%2e/{eid}",
        "/v1/executions/%2e%2e%2f%2e%2e%2fworkspaces",
        f"/v1/executions/{eid}/../../token",
        "/v1/%2e%2e/%2e%2e/token",
        f"/v1/executions/{'9' * 5000}",
    ]
    for target in targets:
        response = await wb.client.get("/", extensions={"target": target.encode()})
        assert response.status_code in {400, 404}, (target, response.status_code)
        assert response.json()["error"]["code"] in {"bad_request", "not_found"}
        assert not any(secret in response.content for secret in secrets), target
    for delivery in ("..%2F..%2Ftoken", "%2e%2e", "%00", "dl_" + "0" * 26 + "%00", eid):
        target = f"/v1/exits/{delivery}/ack"
        response = await wb.client.post("/", extensions={"target": target.encode()})
        assert response.status_code in {400, 404}, (target, response.status_code)
        assert response.json()["error"]["code"] in {"bad_request", "not_found"}
        assert not any(secret in response.content for secret in secrets), target
    good = await wb.client.get("/", extensions={"target": f"{art}/stdout".encode()})
    assert good.content == b"raw \xff"


async def test_query_parameters_are_validated(unchanged: DaemonHandle) -> None:
    """Promise 7: a query parameter a route does not take, or that does not parse, is 400."""
    wb = unchanged
    record = (await wb.client.get("/v1/executions")).json()["executions"]
    eid = record[0]["executionId"] if record else UNKNOWN_ID
    bad_numbers = ["0", "-1", "abc", "1.5", "٥", "1e3", "", " ", "9" * 30, "1_000", "0x10", " 5", "5 "]
    cases: list[tuple[str, dict[str, Any]]] = [
        *[("/v1/executions", {"limit": v}) for v in [*bad_numbers, "1001"]],
        ("/v1/executions", {"status": "nope"}),
        ("/v1/executions", {"kind": "workbench_rust"}),
        ("/v1/executions", {"cursor": "../../etc"}),
        ("/v1/executions", {"sessionId": "../escape"}),
        ("/v1/executions", {"sessionId": ".."}),
        ("/v1/executions", {"sessionId": "."}),
        (f"/v1/executions/{UNKNOWN_ID}/events/stream", {"sessionId": ".."}),
        ("/v1/executions", {"sessionId": "s" * 65}),
        ("/v1/executions", {"limit": ["1", "2"]}),
        ("/v1/executions", {"bogus": "1"}),
        *[(f"/v1/executions/{UNKNOWN_ID}/events", {"after": v}) for v in bad_numbers[1:]],
        *[(f"/v1/executions/{UNKNOWN_ID}/events", {"limit": v}) for v in ["0", "10001", "x"]],
        (f"/v1/executions/{UNKNOWN_ID}/events", {"since": "1"}),
        *[(f"/v1/executions/{UNKNOWN_ID}/events/stream", {"after": v}) for v in ["-1", "x", "9" * 30]],
        (f"/v1/executions/{UNKNOWN_ID}/events/stream", {"limit": "1"}),
        *[(f"/v1/executions/{UNKNOWN_ID}{s}", {"x": "1"}) for s in ("", "/artifacts", "/artifacts/stdout")],
        *[("/v1/exits", {"waitTimeoutMs": v}) for v in ["-1", "600001", "x", ["0", "0"]]],
        ("/v1/exits", {"waitTimeoutMs": "0", "limit": "0"}),
        ("/v1/exits", {"waitTimeoutMs": "0", "leaseMs": "3600001"}),
        ("/v1/exits", {"waitTimeoutMs": "0", "leaseMs": "-1"}),
        ("/v1/exits", {"waitTimeoutMs": "0", "bogus": "1"}),
    ]
    for path, params in cases:
        expect(await wb.client.get(path, params=params), {400, 422})
    for method, suffix in (("POST", "/wait"), ("POST", "/cancel"), ("POST", "/detach"), ("DELETE", "")):
        response = await wb.client.request(method, f"/v1/executions/{eid}{suffix}", params={"x": "1"})
        expect(response, {400}, "bad_request")
    expect(await wb.client.post(BASH, params={"x": "1"}, json={"command": "true"}), {400}, "bad_request")


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("Idempotency-Key", b"k" * 256),
        ("Idempotency-Key", b""),
        ("Idempotency-Key", b"tab\there"),
        ("Last-Event-ID", b"x"),
        ("Last-Event-ID", b"-1"),
        ("Last-Event-ID", b"9" * 30),
        ("Last-Event-ID", b"\xb2"),
        ("Last-Event-ID", b"1 2"),
        # Given twice (which one would count?), or not ASCII (a key kept garbled).
        ("Idempotency-Key", [b"dupA", b"dupB"]),
        ("Idempotency-Key", "é".encode()),
        ("Idempotency-Key", b"\xc3\xa9\xff"),
        ("Last-Event-ID", [b"1", b"2"]),
        ("Last-Event-ID", [b"1", b"1"]),
    ],
)
async def test_bad_headers_are_400(unchanged: DaemonHandle, header: str, value: bytes | list[bytes]) -> None:
    """Promise 7: an Idempotency-Key of 0 or over 255 printable ASCII characters, or a
    Last-Event-ID that is not a sequence number, or either given twice, is 400."""
    wb = unchanged
    headers = [(header.encode(), v) for v in (value if isinstance(value, list) else [value])]
    if header == "Idempotency-Key":
        for path, body in (
            (BASH, {"command": "true"}),
            (BATCH, {"items": [{"kind": "workbench_bash", "command": "true"}]}),
        ):
            response = await wb.client.post(path, json=body, headers=headers)
            expect(response, {400}, "bad_request")
    else:
        for path in (f"/v1/executions/{UNKNOWN_ID}/events/stream", "/v1/events/stream"):
            response = await wb.client.get(path, headers=headers)
            expect(response, {400}, "bad_request")


async def test_a_full_queue_leaves_no_workspace(make_daemon: Any) -> None:
    """Promise 7: a start refused with 429 leaves no row and no file."""
    wb: DaemonHandle = await make_daemon(max_concurrent_executions=1, max_queued_executions=0)
    sleeper = await wb.start("sleep 30")
    try:
        refused = await wb.client.post(
            BASH, json={"command": "true", "background": True, "sessionId": "full"}
        )
        expect(refused, {429}, "too_many_executions")
        assert len((await wb.client.get("/v1/executions")).json()["executions"]) == 1
        assert not (wb.data_dir / "workspaces" / "admin" / "full").exists()
    finally:
        await wb.client.post(f"/v1/executions/{sleeper['executionId']}/cancel", json={})
        await wb.wait(sleeper["executionId"])


async def test_a_wrong_method_on_a_known_path_names_the_methods_it_takes(unchanged: DaemonHandle) -> None:
    """Promise 7: 404 not_found whose message lists the path's methods, for every start path too
    (`GET /v1/executions/workbench_bash` is the start's path, not an execution named so)."""
    wb = unchanged
    for method, path in [
        ("PUT", BASH),
        ("GET", BASH),
        ("DELETE", BASH),
        ("GET", "/v1/executions/workbench_code"),
        ("GET", BATCH),
        ("PATCH", f"/v1/executions/{UNKNOWN_ID}"),
    ]:
        response = await wb.client.request(method, path)
        expect(response, {404}, "not_found")
        assert "it takes" in response.json()["error"]["message"], (method, path, response.text)
