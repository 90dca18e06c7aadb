"""`GET /openapi.json`: a valid OpenAPI document of every route the app registers, from the wire models."""

from __future__ import annotations

import re
from typing import Any

import httpx
from openapi_spec_validator import validate

from tests.conftest import DaemonHandle

#: Werkzeug converters → the OpenAPI parameter names of `api/openapi.py`.
PARAMETERS = {"execution_id": "executionId", "name": "name", "delivery_id": "deliveryId", "kind": "kind"}


def openapi_paths(rule: str) -> list[str]:
    """The OpenAPI path(s) of a Werkzeug rule: a start route (`<any(...):kind>` last) is one path per kind."""
    kinds = re.search(r"<any\(([^)]*)\):kind>$", rule)
    if kinds:
        return [rule[: kinds.start()] + k.strip() for k in kinds.group(1).split(",")]

    def name(match: re.Match[str]) -> str:
        raw = match.group(1).split(":")[-1]
        return "{" + PARAMETERS.get(raw, raw) + "}"

    return [re.sub(r"<([^>]+)>", name, rule)]


async def document(wb: DaemonHandle) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=wb.url) as anonymous:  # no token needed
        response = await anonymous.get("/openapi.json")
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    return body


async def test_the_document_is_valid_openapi(wb: DaemonHandle) -> None:
    doc = await document(wb)
    validate(doc)  # raises on an invalid document
    assert doc["openapi"].startswith("3.1")
    bearer = doc["components"]["securitySchemes"]["bearer"]
    assert (bearer["type"], bearer["scheme"]) == ("http", "bearer")
    assert doc["security"] == [{"bearer": []}]
    assert doc["paths"]["/healthz"]["get"]["security"] == []


async def test_it_lists_every_route_the_app_registers(wb: DaemonHandle) -> None:
    doc = await document(wb)
    from api.app import create_app

    app = create_app(wb.daemon)  # the same routes as the app serving this daemon
    registered = {
        (method.lower(), path)
        for rule in app.url_map.iter_rules()
        if rule.endpoint != "static"
        for method in rule.methods or ()
        if method not in {"HEAD", "OPTIONS"}
        for path in openapi_paths(rule.rule)
    }
    documented = {(method, path) for path, item in doc["paths"].items() for method in item}
    assert registered <= documented, sorted(registered - documented)
    assert documented <= registered, sorted(documented - registered)
    for path in ("/v1/executions/{kind}/{executionId}/wait", "/v1/executions/{executionId}/wait"):
        assert path in doc["paths"], "per-execution routes come with and without the kind"


async def test_bodies_responses_errors_and_the_stream(wb: DaemonHandle) -> None:
    doc = await document(wb)
    schemas = doc["components"]["schemas"]
    start = doc["paths"]["/v1/executions/workbench_bash"]["post"]
    body_ref = start["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body_ref.endswith("/StartBashRequest") and "command" in schemas["StartBashRequest"]["required"]
    assert schemas["StartBashRequest"]["additionalProperties"] is False
    assert {"201", "202", "200", "401", "413", "422", "429"} <= set(start["responses"])
    assert {"executionId", "status", "exitCode", "output", "artifacts"} <= set(
        schemas["Execution"]["properties"]
    )
    assert set(schemas["ExecutionStatus"]["enum"]) == {
        "queued",
        "running",
        "cancel_requested",
        "completed",
        "failed",
        "cancelled",
        "timed_out",
    }
    for code, status in (("not_found", "404"), ("conflict", "409"), ("unavailable", "503")):
        response = doc["components"]["responses"][code]
        assert response["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorResponse")
        assert status in doc["paths"]["/v1/executions/{executionId}"]["delete"]["responses"]
    stream = doc["paths"]["/v1/executions/{executionId}/events/stream"]["get"]
    assert "text/event-stream" in stream["responses"]["200"]["content"]
    assert "Last-Event-ID" in {p["name"] for p in stream["parameters"]}
    artifact = doc["paths"]["/v1/executions/{kind}/{executionId}/artifacts/{name}"]["get"]
    assert "application/octet-stream" in artifact["responses"]["206"]["content"]
    assert {"sequence", "eventType", "outputDelta"} <= set(schemas["Event"]["properties"])


async def test_writes_document_storage_full_and_health_its_degraded_state(wb: DaemonHandle) -> None:
    """A full disk: every route that writes may answer `507 storage_full`; /healthz may be 503."""
    doc = await document(wb)
    assert doc["components"]["responses"]["storage_full"]["description"].startswith("`storage_full`")
    for path, method in (
        ("/v1/executions/workbench_bash", "post"),
        ("/v1/executions/{executionId}/cancel", "post"),
        ("/v1/executions/{executionId}", "delete"),
        ("/v1/exits/{deliveryId}/ack", "post"),
    ):
        assert "507" in doc["paths"][path][method]["responses"], (method, path)
    assert "503" in doc["paths"]["/healthz"]["get"]["responses"]
    assert "reason" in doc["components"]["schemas"]["Health"]["properties"]
