"""`workbench mcp`'s arguments, through the official MCP client against a real daemon: they are
checked as strictly as the schema the tools publish (types, ids, required paths), so a wrong one
is a tool error that says what is wrong, never a request the daemon misreads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_mcp import call, data, session, text
from tests.conftest import DaemonHandle

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")

EID = "ex_01JD0000000000000000000000"


@pytest.mark.timeout(120)
async def test_ids_and_types_are_checked_before_anything_is_asked(wb: DaemonHandle, tmp_path: Path) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
        # An id goes into a URL: one that is not an id is refused, by its name.
        ("execution", {"action": "get", "executionId": ""}, "executionId"),
        ("execution", {"action": "get", "executionId": "../contexts"}, "executionId"),
        ("execution", {"action": "cancel", "executionId": ""}, "executionId"),
        ("execution", {"action": "get", "executionId": f"{EID}?x=1"}, "executionId"),
        ("input", {"executionId": "ex_1/../x", "text": "1"}, "executionId"),
        ("read_file", {"path": "a.txt", "sessionId": ""}, "sessionId"),
        ("read_file", {"path": "a.txt", "sessionId": ".."}, "sessionId"),
        ("list_files", {"sessionId": "a/b"}, "sessionId"),
        ("bash", {"command": "true", "sessionId": "a b"}, "sessionId"),
        # Types as the schema says: no "yes", 1 or "5" for a boolean or a number.
        ("bash", {"command": "true", "background": "yes"}, "background"),
        ("bash", {"command": "true", "background": 1}, "background"),
        ("bash", {"command": "true", "waitSeconds": "5"}, "waitSeconds"),
        ("list", {"limit": "3"}, "limit"),
        ("execution", {"action": "logs", "executionId": EID, "maxBytes": "10"}, "maxBytes"),
        ("bash", {"command": "true", "service": True, "readiness": {"port": "80"}}, "port"),
        # Bounds as the schema says, named as the agent sent them (not the daemon's field).
        ("bash", {"command": "true", "timeoutSeconds": 0.0001}, "timeoutSeconds"),
        ("bash", {"command": "true", "service": True, "readyTimeoutSeconds": 0.0001}, "readyTimeoutSeconds"),
        ("execution", {"action": "logs", "executionId": EID, "afterSequence": 2**70}, "afterSequence"),
        # background answers at once: a wait with it would be ignored, so it is refused.
        ("bash", {"command": "true", "background": True, "waitSeconds": 5}, "waitSeconds"),
        ("code", {"language": "python", "code": "1", "background": True, "waitSeconds": 0}, "waitSeconds"),
        # A file tool needs a path; an absolute one is not a path of the workspace.
        ("read_file", {}, "path"),
        ("write_file", {"content": "x"}, "path"),
        ("read_file", {"path": "/etc/passwd"}, "relative to the session's workspace"),
        ("write_file", {"path": "/tmp/x", "content": "x"}, "relative to the session's workspace"),
    ]
    async with session(wb.url, tmp_path) as client:
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        assert schemas["read_file"]["required"] == ["path"]
        assert sorted(schemas["write_file"]["required"]) == ["content", "path"]
        assert schemas["execution"]["properties"]["executionId"]["pattern"].startswith("^ex_")
        assert "pattern" in schemas["read_file"]["properties"]["sessionId"]
        for name, arguments, named in cases:
            result = await call(client, name, **arguments)
            assert result.is_error, (name, arguments, text(result))
            error = data(result)["error"]
            assert error["code"] == "invalid_request", (name, arguments, error)
            assert named in error["message"], (name, arguments, error)
        listed = (await wb.client.get("/v1/executions")).json()["executions"]
        assert listed == [], "a refused call starts nothing"


@pytest.mark.timeout(120)
async def test_an_absolute_path_names_the_workspace_when_the_server_knows_it(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    async with session(wb.url, tmp_path) as client:
        ran = await call(client, "bash", command="echo hi > a.txt; pwd", sessionId="ws")
        workspace = data(ran)["stdout"].strip()
        assert data(ran)["cwd"] == workspace
        refused = await call(client, "read_file", path=f"{workspace}/a.txt", sessionId="ws")
        assert refused.is_error and data(refused)["error"]["code"] == "invalid_request"
        assert workspace in text(refused) and "'a.txt'" in text(refused), text(refused)
        read = await call(client, "read_file", path="a.txt", sessionId="ws")
        assert data(read)["content"] == "hi\n"
