"""`GET /openapi.json`: a valid OpenAPI document of every route the app registers, from the wire models."""

from __future__ import annotations

import re
from typing import Any

import httpx
from openapi_spec_validator import validate

from tests.conftest import DaemonHandle

#: Werkzeug converters → the OpenAPI parameter names of `api/openapi.py`.
PARAMETERS = {
    "node_id": "nodeId",
    "execution_id": "executionId",
    "name": "name",
    "delivery_id": "deliveryId",
    "kind": "kind",
    "session_id": "sessionId",
    "path": "path",
    "context_id": "contextId",
}


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
        "partial_failed",
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


#: The only response fields that may be left out: the record of a detach that worked, an error's details.
OPTIONAL = {("DetachResult", "execution"), ("ErrorBody", "details")}
#: The named enums of the wire.
ENUMS = {
    "ChangeType",
    "ExecutionKind",
    "ProcessKind",
    "ExecutionStatus",
    "EventType",
    "StreamName",
    "Containment",
    "ErrorCode",
    "PreviewFormat",
    "OnWaitTimeout",
    "WaitUntil",
    "FileType",
    "FileEventType",
    "ContextStatus",
}


def walk(value: Any, where: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every schema object under `value`, with where it is."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(value, dict):
        found.append((where, value))
        for key, item in value.items():
            found += walk(item, f"{where}/{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += walk(item, f"{where}/{i}")
    return found


def response_models(doc: dict[str, Any]) -> set[str]:
    """The schemas of response bodies, and every schema they reach."""
    schemas = doc["components"]["schemas"]
    todo = [
        schema["$ref"].rsplit("/", 1)[1]
        for item in doc["paths"].values()
        for operation in item.values()
        for response in operation["responses"].values()
        for media in response.get("content", {}).values()
        for schema in [media["schema"]]
        if "$ref" in schema
    ]
    todo.append("Event")  # the data of each SSE event
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo += [s["$ref"].rsplit("/", 1)[1] for _, s in walk(schemas[name]) if "$ref" in s]
    return seen


async def test_response_fields_are_required(wb: DaemonHandle) -> None:
    """Every field of a response is always there, so the schema requires it (but the two optional ones)."""
    doc = await document(wb)
    schemas = doc["components"]["schemas"]
    models = response_models(doc) - ENUMS
    assert {"Execution", "Event", "Exit", "Image", "ErrorBody", "EventPage", "OutputInfo"} <= models
    for name in models:
        properties = set(schemas[name].get("properties", {}))
        required = set(schemas[name].get("required", []))
        assert required == {p for p in properties if (name, p) not in OPTIONAL}, name
        for prop in schemas[name].get("properties", {}).values():
            assert "default" not in prop, (name, prop)
    assert "command" in schemas["StartBashRequest"]["required"]
    assert "background" not in schemas["StartBashRequest"].get("required", [])


async def test_real_responses_carry_every_required_field(wb: DaemonHandle) -> None:
    """The records, events, exits and images the daemon sends hold every field the schema requires."""
    doc = await document(wb)
    schemas = doc["components"]["schemas"]

    def conforms(name: str, body: dict[str, Any]) -> None:
        schema = schemas[name]
        assert set(schema.get("required", [])) <= set(body) <= set(schema["properties"]), name

    record = await wb.run("echo hi", detached=True)
    conforms("Execution", record)
    conforms("OutputInfo", record["output"])
    conforms("Capabilities", record["capabilities"])
    page = (await wb.client.get(f"/v1/executions/{record['executionId']}/events")).json()
    conforms("EventPage", page)
    for event in page["events"]:
        conforms("Event", event)
    exits = (await wb.client.get("/v1/exits", params={"waitTimeoutMs": 5000})).json()
    conforms("ExitList", exits)
    conforms("Exit", exits["exits"][0])
    for image in (await wb.client.get("/v1/images")).json()["images"]:
        conforms("Image", image)
        conforms("ImageIsolation", image["isolation"])
    conforms("ExecutionList", (await wb.client.get("/v1/executions")).json())
    error = (await wb.client.get("/v1/executions/ex_01JD0000000000000000000000")).json()
    conforms("ErrorResponse", error)
    conforms("ErrorBody", error["error"])


async def test_times_are_date_times(wb: DaemonHandle) -> None:
    doc = await document(wb)
    times = []
    for name, schema in doc["components"]["schemas"].items():
        for prop, value in schema.get("properties", {}).items():
            if prop.endswith("At") or prop == "timestamp":
                branches = value.get("anyOf", [value])
                strings = [b for b in branches if b.get("type") == "string"]
                assert [b.get("format") for b in strings] == ["date-time"], (name, prop)
                times.append((name, prop))
    assert {("Execution", "createdAt"), ("Execution", "finishedAt"), ("Event", "timestamp")} <= set(times)
    assert ("Exit", "finishedAt") in times


async def test_each_enum_is_one_named_schema(wb: DaemonHandle) -> None:
    """Kinds, statuses, event types, streams, containments and error codes are named schemas, used by
    `$ref`; no schema or parameter inlines their values again."""
    from api.errors import STATUS
    from workbench.wire.models import EXECUTION_KINDS

    doc = await document(wb)
    schemas = doc["components"]["schemas"]
    assert set(schemas) >= ENUMS
    assert schemas["ExecutionKind"]["enum"] == list(EXECUTION_KINDS)
    events = ["status", "output", "output_truncated", "progress", "artifact", "signal", "item", "ready"]
    events += ["input", "resize"]
    assert schemas["EventType"]["enum"] == events
    assert schemas["ErrorCode"]["enum"] == list(STATUS)
    for where, schema in walk(doc):
        if "enum" in schema and not where.startswith(tuple(f"/components/schemas/{e}" for e in ENUMS)):
            assert schema["enum"] == ["true"], where  # only the Idempotent-Replayed header is inline
    refs = {s["$ref"] for _, s in walk(doc) if "$ref" in s}
    for name in ENUMS:
        assert f"#/components/schemas/{name}" in refs, name
    assert schemas["ErrorBody"]["properties"]["code"] == {"$ref": "#/components/schemas/ErrorCode"}
    kind = doc["paths"]["/v1/executions/{kind}/{executionId}"]["get"]["parameters"][0]
    assert kind["schema"] == {"$ref": "#/components/schemas/ExecutionKind"}


async def test_bounds_are_those_the_daemon_enforces(wb: DaemonHandle) -> None:
    """Each bound of a body field or query parameter is the one the daemon applies: the value at the
    bound is taken, one past it is refused (422 in a body, 400 in a query)."""
    doc = await document(wb)
    schemas = doc["components"]["schemas"]
    settings = wb.settings

    def integer(schema: dict[str, Any]) -> dict[str, Any]:
        return next(b for b in schema.get("anyOf", [schema]) if b.get("type") == "integer")

    bash = schemas["StartBashRequest"]["properties"]
    assert integer(bash["timeoutMs"])["maximum"] == settings.max_timeout_ms
    assert integer(bash["idleTimeoutMs"])["maximum"] == settings.max_timeout_ms
    assert integer(bash["waitTimeoutMs"])["maximum"] == settings.max_wait_timeout_ms
    wait = schemas["WaitRequest"]["properties"]["waitTimeoutMs"]
    assert integer(wait)["maximum"] == settings.max_wait_timeout_ms
    post = "/v1/executions/workbench_bash"
    at = {"command": "true", "background": True, "timeoutMs": settings.max_timeout_ms}
    assert (await wb.client.post(post, json=at)).status_code == 202
    record = await wb.run("true")
    for route, field, schema in (
        (post, "timeoutMs", bash["timeoutMs"]),
        (post, "idleTimeoutMs", bash["idleTimeoutMs"]),
        (post, "waitTimeoutMs", bash["waitTimeoutMs"]),
        (f"/v1/executions/{record['executionId']}/wait", "waitTimeoutMs", wait),
        (
            f"/v1/executions/{record['executionId']}/cancel",
            "graceMs",
            schemas["CancelRequest"]["properties"]["graceMs"],
        ),
    ):
        bound = integer(schema)
        for value in (bound["maximum"] + 1, bound["minimum"] - 1):
            body = {"command": "true", field: value} if route == post else {field: value}
            response = await wb.client.post(route, json=body)
            assert response.status_code == 422, (route, field, value, response.text)
            assert response.json()["error"]["code"] == "invalid_request"
    probe = await wb.client.put("/v1/sessions/default/files/bounds/probe.txt", content=b"x")
    assert probe.status_code == 201, probe.text
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            for param in operation.get("parameters", []):
                if param["in"] != "query" or param["schema"].get("type") != "integer":
                    continue
                url = path.replace("{executionId}", record["executionId"]).replace("{kind}", "workbench_bash")
                url = url.replace("{sessionId}", "default").replace("{path}", "bounds")
                low, high = param["schema"]["minimum"], param["schema"]["maximum"]
                extra = {"waitTimeoutMs": 0} if path == "/v1/exits" else {}
                for value in (low - 1, high + 1):
                    response = await wb.client.request(method, url, params={**extra, param["name"]: value})
                    assert response.status_code == 400, (method, path, param["name"], value)
                if param["name"] not in ("waitTimeoutMs", "timeoutMs") and not path.endswith("/stream"):
                    response = await wb.client.request(method, url, params={**extra, param["name"]: high})
                    assert response.status_code == 200, (method, path, param["name"], high)


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
    assert "reason" in doc["components"]["schemas"]["Degraded"]["properties"]
