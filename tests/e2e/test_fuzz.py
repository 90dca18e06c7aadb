"""Random requests against a live daemon: only documented statuses and JSON errors come back.

Requests come from Hypothesis in a worker thread (a blocking client), while the daemon serves from
the test's own trio loop. Every string a request could run is replaced by a harmless command, so
the fuzzing starts only short executions; the test cancels and waits for whatever it started.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
import trio
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable

from api.errors import STATUS
from tests.conftest import TOKEN, DaemonHandle

#: Every status API.md documents.
DOCUMENTED = {200, 201, 202, 204, 400, 401, 403, 404, 409, 413, 422, 429, 503}
ALICE = "alice-fuzz-token-0123456789"
READER = "reader-fuzz-token-0123456789"
TOKENS_FILE = f"""
[[tokens]]
token = "{ALICE}"
principal = "alice"
scopes = ["tools:execute", "logs:read"]

[[tokens]]
token = "{READER}"
principal = "alice"
scopes = ["logs:read"]
"""
UNKNOWN_ID = "ex_01JD0000000000000000000000"

text = st.text(max_size=24)
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | text
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)


def mostly(valid: st.SearchStrategy[Any], invalid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`valid` nine times in ten: a body of many fields is then often valid as a whole."""
    return st.sampled_from([True] * 9 + [False]).flatmap(lambda ok: valid if ok else invalid)


def no_text(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Values of `strategy` that are not strings (a string there could be run)."""
    return strategy.filter(lambda v: not isinstance(v, str))


#: The only strings a fuzzed request may run: each ends at once.
COMMANDS = st.sampled_from(["true", "exit 3", "echo fuzz", "printf '\\xff'"])
BAD_COMMANDS = st.sampled_from(["", "a\x00b"]) | no_text(json_values)
COMMON = {
    "background": mostly(st.booleans(), json_values),
    "waitTimeoutMs": mostly(st.integers(0, 5000), st.integers(-5, 700_000) | json_values),
    "timeoutMs": mostly(st.integers(1, 60_000), st.integers(-5, 90_000_000) | json_values),
    "idleTimeoutMs": mostly(st.integers(1, 60_000), st.integers(-5, 90_000_000) | json_values),
    "cwd": mostly(
        st.sampled_from(["/", "/tmp"]), st.sampled_from(["relative", "/nope", "/etc/hostname"]) | json_values
    ),
    "env": mostly(
        st.dictionaries(st.from_regex(r"FUZZ_[A-Za-z0-9_]{0,8}", fullmatch=True), text, max_size=3),
        st.dictionaries(text, text, max_size=3) | json_values,
    ),
    "stdin": mostly(text, no_text(json_values)),
    "metadata": json_values,
    "image": mostly(st.just("host"), st.sampled_from(["sandbox", "nope"]) | json_values),
    "sessionId": mostly(st.sampled_from(["default", "fuzz"]), st.sampled_from(["..", "a/b"]) | json_values),
    "detached": mostly(st.booleans(), json_values),
}
bash_bodies = st.fixed_dictionaries({"command": mostly(COMMANDS, BAD_COMMANDS)}, optional=COMMON)
code_bodies = st.fixed_dictionaries(
    {
        "language": mostly(st.sampled_from(["bash", "sh"]), st.sampled_from(["cobol", ""]) | json_values),
        "code": mostly(
            st.sampled_from(["true", "exit 0", "echo fuzz"]), st.just("\x00") | no_text(json_values)
        ),
    },
    optional=COMMON,
)
small_bodies = st.fixed_dictionaries(
    {}, optional={"waitTimeoutMs": st.integers(-5, 2000) | json_values, "reason": json_values}
)
junk = (
    json_values.filter(lambda v: not isinstance(v, dict)).map(lambda v: json.dumps(v).encode())
    | st.binary(max_size=48)
    | st.none()
)


def encoded(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes | None]:
    return strategy.map(lambda b: json.dumps(b).encode())


SPECIAL_SEGMENTS = ["..", ".", "%2e%2e", "%2E%2e%2F", "%00", "%2F", "%ff", "%25", "", "stdout", "stderr"]
KIND_PREFIXES = ["", "workbench_bash/", "workbench_code/"]
#: (method, path after /v1/executions/{kind}{id}, body) of the per-execution routes.
PER_EXECUTION: list[tuple[str, str, st.SearchStrategy[bytes | None]]] = [
    ("GET", "", st.none()),
    ("DELETE", "", st.none()),
    ("GET", "/events", st.none()),
    ("GET", "/events/stream", st.none()),
    ("GET", "/artifacts", st.none()),
    ("GET", "/artifacts/stdout", st.none()),
    ("POST", "/wait", encoded(small_bodies) | st.none()),
    ("POST", "/cancel", encoded(small_bodies) | st.none()),
    ("POST", "/detach", st.none()),
]
queries = st.dictionaries(
    st.sampled_from(["after", "limit", "status", "kind", "sessionId", "cursor", "x"]) | text,
    st.sampled_from(["0", "1", "-1", "50", "99999999999999999999", "running", "..", "ex_"]) | text,
    max_size=3,
).map(lambda q: "?" + urlencode(q) if q else "")


def segment(ids: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from([*ids, *SPECIAL_SEGMENTS]) | text.map(lambda s: quote(s, safe=""))


def requests(ids: list[str]) -> st.SearchStrategy[tuple[str, str, bytes | None]]:
    """(method, target, body): mostly the API's own routes with random pieces, some anything at all."""
    starts = st.tuples(
        st.just("POST"), st.just("/v1/executions/workbench_bash"), encoded(bash_bodies) | junk
    ) | st.tuples(st.just("POST"), st.just("/v1/executions/workbench_code"), encoded(code_bodies) | junk)
    per_execution = st.sampled_from(PER_EXECUTION).flatmap(
        lambda route: st.tuples(
            st.just(route[0]),
            st.builds(
                lambda kind, eid: f"/v1/executions/{kind}{eid}{route[1]}",
                st.sampled_from(KIND_PREFIXES),
                st.sampled_from(ids) | segment(ids),
            ),
            route[2] | junk,
        )
    )
    listing = st.tuples(
        st.just("GET"),
        st.sampled_from(
            ["/v1/executions", "/v1/images", "/healthz", "/openapi.json", "/v1/exits?waitTimeoutMs=0"]
        ),
        st.none(),
    )
    ack = st.tuples(
        st.just("POST"),
        segment([*ids, "dl_01JD0000000000000000000000"]).map(lambda d: f"/v1/exits/{d}/ack"),
        junk,
    )
    anything = st.tuples(
        st.sampled_from(["GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"]),
        st.lists(segment(ids), max_size=5).map(lambda parts: "/" + "/".join(parts)),
        junk | encoded(bash_bodies),
    )
    return st.builds(
        lambda request, query: (request[0], request[1] + query, request[2]),
        starts | per_execution | listing | ack | anything,
        queries | st.just(""),
    )


visible = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
#: Mostly a token that gets in, so that the fuzzing reaches the handlers; "" sends no header.
authorizations = mostly(
    st.sampled_from([f"Bearer {TOKEN}", f"Bearer {ALICE}", f"Bearer {READER}"]),
    st.sampled_from(["", "Bearer nope", TOKEN]) | visible.map(lambda v: f"Bearer {v}"),
)
headers = st.fixed_dictionaries(
    {"Authorization": authorizations},
    optional={
        "Idempotency-Key": visible | st.sampled_from(["k" * 256, "same-key"]),
        "Last-Event-ID": visible | st.sampled_from(["0", "3", "-1", "99999999999999999999"]),
        "Content-Type": st.sampled_from(["application/json", "text/plain", "multipart/form-data"]),
        "X-Fuzz": visible,
    },
).map(lambda h: {k: v for k, v in h.items() if v})


def check(response: httpx.Response, method: str) -> None:
    """The property: a documented status, and the JSON error shape with a matching code."""
    assert response.status_code in DOCUMENTED, (response.status_code, response.text[:300])
    if method == "HEAD" or response.status_code == 204:
        return
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and isinstance(error["message"], str) and error["message"]
        assert STATUS[error["code"]] == response.status_code, response.text[:300]
    elif response.headers.get("content-type", "").startswith("application/json"):
        json.loads(response.text, parse_constant=lambda c: pytest.fail(f"{c} in a response"))


def fuzz(url: str, ids: list[str]) -> dict[int, int]:
    """Run the property test (blocking: called in a worker thread); returns the statuses seen."""
    seen: dict[int, int] = {}
    with httpx.Client(base_url=url, timeout=60) as client:

        @settings(
            max_examples=200,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        )
        @given(request=requests(ids), sent=headers)
        def property(request: tuple[str, str, bytes | None], sent: dict[str, str]) -> None:
            method, target, body = request
            response = client.request(
                method, url + "/", content=body, headers=sent, extensions={"target": target.encode()}
            )
            check(response, method)
            seen[response.status_code] = seen.get(response.status_code, 0) + 1

        property()
        assert client.get("/healthz").json() == {"status": "ok"}
    return seen


async def clean_up(wb: DaemonHandle) -> None:
    """Cancel what the fuzzing left running, and wait for every execution to end."""
    cursor: str | None = None
    while True:
        params = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
        page = (await wb.client.get("/v1/executions", params=params)).json()
        for record in page["executions"]:
            if record["status"] not in {"completed", "failed", "cancelled", "timed_out"}:
                await wb.client.post(f"/v1/executions/{record['executionId']}/cancel", json={})
                await wb.wait(record["executionId"])
        cursor = page["nextCursor"]
        if cursor is None:
            return


async def test_random_requests_get_documented_answers(make_daemon: Any, tmp_path: Path) -> None:
    """Promise 7: random methods, paths, queries, headers and bodies on every route get only the
    documented statuses, every error is the JSON error of API.md, and the daemon stays healthy."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS_FILE)
    tokens.chmod(0o600)
    wb: DaemonHandle = await make_daemon(tokens_file=tokens)
    admin_id = (await wb.run("printf '\\xff'"))["executionId"]
    alice = {"Authorization": f"Bearer {ALICE}"}
    alice_id = (
        await wb.client.post(
            "/v1/executions/workbench_code", json={"language": "bash", "code": "true"}, headers=alice
        )
    ).json()["executionId"]
    try:
        seen = await trio.to_thread.run_sync(fuzz, wb.url, [admin_id, alice_id, UNKNOWN_ID])
    finally:
        await clean_up(wb)
    assert (await wb.client.get("/healthz")).status_code == 200
    # The fuzzing got past authentication and validation, not only to early refusals.
    assert {200, 400, 401, 404, 422} <= set(seen), seen


# -- schemathesis against the daemon's own OpenAPI document ---------------------------------------


def _long_wait(value: Any) -> bool:
    """A valid wait (so that shortening it keeps it valid) longer than 2 s."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and 2000 < value <= 600_000


def harmless(case: Any) -> None:
    """Make a generated case safe to send: nothing but `true` runs, and no long-poll outlasts 2 s.

    Only values that would be accepted are replaced, by values that are accepted too, so that an
    invalid case stays invalid (and must still be rejected).
    """
    if isinstance(case.body, dict):
        command, code = case.body.get("command"), case.body.get("code")
        if isinstance(command, str) and command and "\x00" not in command:
            case.body["command"] = "true"
        if isinstance(code, str) and "\x00" not in code:
            case.body["code"] = "true"
        if _long_wait(case.body.get("waitTimeoutMs")):
            case.body["waitTimeoutMs"] = 2000
    if case.path.endswith("files:watch"):
        # A watch follows until told to stop: one that would (no timeoutMs, or 0) ends in 0.2 s.
        query = case.query if case.query is not None else {}
        timeout = query.get("timeoutMs", 0)
        if isinstance(timeout, str) and timeout.isascii() and timeout.isdigit():
            timeout = int(timeout)
        if isinstance(timeout, int) and not isinstance(timeout, bool) and 0 <= timeout <= 600_000:
            case.query = {**query, "timeoutMs": 200}
    if case.path == "/v1/exits":
        query = case.query if case.query is not None else {}
        if _long_wait(query.get("waitTimeoutMs", 30_000)):  # absent: the 30 s default
            case.query = {**query, "waitTimeoutMs": 0}


def check_operation(url: str, operation: Any, mode: Any, checks: list[Any], examples: int) -> int:
    """Send `examples` generated cases of one operation; returns how many were sent."""
    sent = 0

    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
        # No shrinking: a failing case is reported as it was sent (derandomized, so it is sent
        # again the same), instead of being shrunk by many more requests past the test's ceiling.
        phases=(Phase.explicit, Phase.generate),
    )
    @given(case=operation.as_strategy(generation_mode=mode, headers={"Authorization": f"Bearer {TOKEN}"}))
    def conforms(case: Any) -> None:
        nonlocal sent
        harmless(case)
        case.call_and_validate(base_url=url, checks=checks)
        sent += 1

    try:
        conforms()
    except Unsatisfiable:
        # An operation that takes nothing (e.g. /healthz) has no invalid request to make.
        assert not mode.is_positive, operation.label
    return sent


def schemathesis_run(url: str, examples: int) -> int:
    """Every operation of /openapi.json, valid and invalid data; returns the number of cases sent."""
    import schemathesis
    from schemathesis import GenerationMode
    from schemathesis.checks import not_a_server_error
    from schemathesis.core.result import Ok
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        negative_data_rejection,
        response_schema_conformance,
        status_code_conformance,
    )

    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    conformance = [not_a_server_error, status_code_conformance, content_type_conformance]
    modes = [
        (GenerationMode.POSITIVE, [*conformance, response_schema_conformance]),
        (GenerationMode.NEGATIVE, [*conformance, negative_data_rejection]),
    ]
    sent = 0
    for result in schema.get_all_operations():
        # An operation schemathesis cannot read is a broken document: fail on it.
        assert isinstance(result, Ok), result
        for mode, checks in modes:
            if mode.is_positive and result.ok().label == "GET /v1/events/stream":
                # A valid request opens the changes stream, which never ends: schemathesis would
                # wait out its read timeout per case. tests/api/test_browsers.py reads it instead.
                continue
            sent += check_operation(url, result.ok(), mode, checks, examples)
    return sent


@pytest.mark.timeout(300)  # the slowest test: 30 to 40 s on 2 cores (10 cases per operation and mode)
async def test_the_api_conforms_to_its_openapi_document(wb: DaemonHandle) -> None:
    """Promise 7: schemathesis, from /openapi.json, finds no server error, no status, content type
    or response body the document does not declare, and no invalid request that is accepted."""
    try:
        sent = await trio.to_thread.run_sync(schemathesis_run, wb.url, 10)
    finally:
        await clean_up(wb)
    assert sent > 100
