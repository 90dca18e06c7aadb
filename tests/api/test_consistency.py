"""One violation, one status, on every route: the operations of `/openapi.json` are walked one by one.

A query parameter a route does not take, or an integer that does not parse, is `400 bad_request`
everywhere (query parameters and headers are 400; a body that fails validation is 422); an id
that names nothing is `404 not_found` everywhere; and every error's status is its code's.
"""

from __future__ import annotations

from typing import Any

import httpx

from api.errors import STATUS
from tests.api.test_openapi import document
from tests.conftest import DaemonHandle

UNKNOWN_ID = "ex_01JD0000000000000000000000"
UNKNOWN_DELIVERY = "dl_01JD0000000000000000000000"


def url(path: str, execution_id: str = UNKNOWN_ID, delivery_id: str = UNKNOWN_DELIVERY) -> str:
    return (
        path.replace("{kind}", "workbench_bash")
        .replace("{executionId}", execution_id)
        .replace("{name}", "stdout")
        .replace("{deliveryId}", delivery_id)
    )


def expect(response: httpx.Response, status: int, code: str, what: Any) -> None:
    assert response.status_code == status, (what, response.status_code, response.text[:300])
    assert response.json()["error"]["code"] == code, (what, response.text[:300])
    assert STATUS[code] == status


async def operations(wb: DaemonHandle) -> list[tuple[str, str, dict[str, Any]]]:
    doc = await document(wb)
    return [(method, path, op) for path, item in doc["paths"].items() for method, op in item.items()]


async def test_an_unknown_query_parameter_is_400_on_every_route(wb: DaemonHandle) -> None:
    """Promise 7: public routes included; checked before the id, the body or anything else."""
    for method, path, _ in await operations(wb):
        body = {"command": "true", "background": True} if method == "post" else None
        response = await wb.client.request(method, url(path), params={"bogus": "1"}, json=body)
        expect(response, 400, "bad_request", (method, path))
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []


async def test_a_bad_integer_is_400_on_every_route(wb: DaemonHandle) -> None:
    checked = 0
    for method, path, op in await operations(wb):
        for param in op.get("parameters", []):
            if param["in"] == "query" and param["schema"].get("type") == "integer":
                for value in ("x", "1.5", "", "1e3", "9" * 30):
                    response = await wb.client.request(method, url(path), params={param["name"]: value})
                    expect(response, 400, "bad_request", (method, path, param["name"], value))
                checked += 1
    assert checked >= 10


async def test_a_bad_query_value_is_400_not_422(wb: DaemonHandle) -> None:
    """The listing's status, kind, sessionId and cursor are query parameters like the others: 400."""
    for params in (
        {"status": "nope"},
        {"kind": "workbench_rust"},
        {"sessionId": "../x"},
        {"cursor": "../etc"},
        {"cursor": "ex_" + "0" * 25},
    ):
        expect(await wb.client.get("/v1/executions", params=params), 400, "bad_request", params)


async def test_an_id_that_names_nothing_is_404_on_every_route(wb: DaemonHandle) -> None:
    """Unknown, malformed or of another kind: the same 404 on every route that takes an id."""
    record = await wb.run("true")
    real = record["executionId"]
    checked = 0
    for method, path, _ in await operations(wb):
        if "{executionId}" not in path and "{deliveryId}" not in path:
            continue
        if path.startswith("/v1/nodes/"):
            continue  # its one credential is the nodes' token (tests/reliability/test_node_artifacts.py)
        targets = [url(path, UNKNOWN_ID), url(path, "not-an-id"), url(path, real.lower(), "dl_nope")]
        if "{kind}" in path:
            targets.append(url(path, real).replace("workbench_bash", "workbench_code"))
        for target in targets:
            expect(await wb.client.request(method, target), 404, "not_found", (method, target))
        checked += 1
    assert checked == 29  # 14 per-execution routes with and without the kind, and the ack
    expect(await wb.client.get(f"/v1/executions/{real}/artifacts/nope"), 404, "not_found", "artifact")


async def test_a_range_that_cannot_be_met_is_416_with_its_own_code(wb: DaemonHandle) -> None:
    record = await wb.run("printf '\\377'")
    path = f"/v1/executions/{record['executionId']}/artifacts/stdout"
    assert (await wb.client.get(path, headers={"Range": "bytes=0-0"})).status_code == 206
    for value in ("bytes=5-", "bytes=-0", "items=0-1", "bytes=0-1,3-4"):
        response = await wb.client.get(path, headers={"Range": value})
        expect(response, 416, "range_not_satisfiable", value)
        assert response.headers["Content-Range"] == "bytes */1"


async def test_a_wait_past_its_bound_is_422_as_a_start_is(wb: DaemonHandle) -> None:
    """`waitTimeoutMs` over 600000 is a body field out of range: 422 on `wait` as on a start."""
    record = await wb.run("true")
    too_long = {"waitTimeoutMs": 600_001}
    for path in (f"/v1/executions/{record['executionId']}/wait", "/v1/executions/workbench_bash"):
        body = too_long if path.endswith("/wait") else {"command": "true", **too_long}
        expect(await wb.client.post(path, json=body), 422, "invalid_request", path)
