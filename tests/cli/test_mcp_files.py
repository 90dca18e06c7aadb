"""`workbench mcp`'s file tools and services, through the official MCP client against a real
daemon: files written and read back byte for byte (text and base64), listed, refused outside the
workspace; a service started by the bash tool answers once it is ready and is cancelled whole."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli.test_mcp import call, data, session, text
from tests.conftest import DaemonHandle
from tests.ports import free_port

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


@pytest.mark.timeout(180)
async def test_files_round_trip_through_the_tools(wb: DaemonHandle, tmp_path: Path) -> None:
    quoted = 'it\'s $HOME and `date` and "quotes"\nline 2\n'
    blob = bytes(range(256)) * 4
    async with session(wb.url, tmp_path) as client:
        wrote = await call(client, "write_file", path="src/a.txt", content=quoted, sessionId="mcp")
        assert not wrote.is_error, text(wrote)
        assert data(wrote)["sizeBytes"] == len(quoted.encode()) and data(wrote)["etag"]
        back = await call(client, "read_file", path="src/a.txt", sessionId="mcp")
        assert (data(back)["content"], data(back)["encoding"], data(back)["done"]) == (quoted, "utf-8", True)
        # What the tool wrote is what a command of the same session sees.
        seen = await call(client, "bash", command="cat src/a.txt", sessionId="mcp")
        assert data(seen)["stdout"] == quoted

        binary = base64.b64encode(blob).decode()
        await call(client, "write_file", path="b.bin", content=binary, encoding="base64", sessionId="mcp")
        page = await call(client, "read_file", path="b.bin", maxBytes=1000, sessionId="mcp")
        assert data(page)["encoding"] == "base64" and data(page)["nextOffset"] == 1000
        assert base64.b64decode(data(page)["content"]) == blob[:1000] and not data(page)["done"]
        rest = await call(client, "read_file", path="b.bin", offset=1000, sessionId="mcp")
        assert base64.b64decode(data(rest)["content"]) == blob[1000:] and data(rest)["done"]

        # A page edge inside a character: the page ends before it, the next one starts with it.
        await call(client, "write_file", path="h.txt", content="héllo", sessionId="mcp")
        pages: list[dict[str, Any]] = []
        offset = 0
        while not pages or not pages[-1]["done"]:
            page = await call(client, "read_file", path="h.txt", offset=offset, maxBytes=2, sessionId="mcp")
            pages.append(data(page))
            offset = data(page)["nextOffset"]
        assert [p["content"] for p in pages] == ["h", "é", "ll", "o"], pages
        assert {p["encoding"] for p in pages} == {"utf-8"}
        one = await call(client, "read_file", path="h.txt", offset=1, maxBytes=1, sessionId="mcp")
        assert (data(one)["content"], data(one)["nextOffset"]) == ("é", 3), "a page moves on by a character"
        edge = "a" * 65535 + "é" + "b"
        await call(client, "write_file", path="edge.txt", content=edge, sessionId="mcp")
        head = await call(client, "read_file", path="edge.txt", sessionId="mcp")
        assert (data(head)["encoding"], data(head)["nextOffset"]) == ("utf-8", 65535)
        tail = await call(client, "read_file", path="edge.txt", offset=65535, sessionId="mcp")
        assert data(head)["content"] + data(tail)["content"] == edge and data(tail)["done"]

        listed = await call(client, "list_files", depth=2, sessionId="mcp")
        paths = {e["path"]: e for e in data(listed)["entries"]}
        assert paths["src"]["type"] == "directory" and paths["src/a.txt"]["sizeBytes"] == len(quoted)
        assert paths["b.bin"]["sizeBytes"] == len(blob)

        outside = await call(client, "read_file", path="../../token", sessionId="mcp")
        assert outside.is_error and data(outside)["error"]["code"] == "invalid_request", text(outside)
        missing = await call(client, "read_file", path="nope.txt", sessionId="mcp")
        assert missing.is_error and data(missing)["error"]["code"] == "not_found"
        directory = await call(client, "read_file", path="src", sessionId="mcp")
        assert directory.is_error and "not a file" in text(directory)
        bad = await call(
            client, "write_file", path="c.bin", content="%%%", encoding="base64", sessionId="mcp"
        )
        assert bad.is_error and "base64" in text(bad)
        gone = await call(client, "list_files", path="c.bin", sessionId="mcp")
        assert gone.is_error and data(gone)["error"]["code"] == "not_found", "a refused write leaves nothing"


@pytest.mark.timeout(180)
async def test_a_service_through_the_bash_tool(wb: DaemonHandle, tmp_path: Path) -> None:
    port = free_port()
    command = f"python3 -m http.server {port} --bind 127.0.0.1"
    async with session(wb.url, tmp_path) as client:
        refused = await call(client, "bash", command="true", readiness={"port": port})
        assert refused.is_error and "service" in text(refused)
        started = await call(
            client, "bash", command=command, service=True, readiness={"port": port}, waitSeconds=60
        )
        assert not started.is_error, text(started)
        answer = data(started)
        assert answer["service"] is True and answer["ready"] is True and answer["running"] is True
        assert "do not start it again" in answer["note"] and answer["readyAt"]
        async with httpx.AsyncClient() as http:
            assert (await http.get(f"http://127.0.0.1:{port}/")).status_code == 200
        # `get` says whether it is ready, as the note promises, and reads well without a wait.
        got = await call(client, "execution", action="get", executionId=answer["executionId"])
        assert (data(got)["service"], data(got)["ready"], data(got)["readyAt"]) == (
            True,
            True,
            answer["readyAt"],
        )
        assert "is ready" in data(got)["note"] and "after 0 s" not in text(got), text(got)
        now = await call(client, "bash", command="sleep 30", waitSeconds=0)
        assert data(now)["running"] is True and "after 0 s" not in text(now), text(now)
        assert "service" not in data(now)
        await call(client, "execution", action="cancel", executionId=data(now)["executionId"])
        stopped = await call(client, "execution", action="cancel", executionId=answer["executionId"])
        assert data(stopped)["status"] == "cancelled" and data(stopped)["cancelled"] is True
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as http:
            await http.get(f"http://127.0.0.1:{port}/")


@pytest.mark.timeout(120)
async def test_a_new_sessions_workspace_lists_empty(wb: DaemonHandle, tmp_path: Path) -> None:
    """An agent's first look at a session nothing has used yet: an empty workspace (it was
    `not_found: no session`); a path inside it, or a file, is still not found."""
    async with session(wb.url, tmp_path) as client:
        first = await call(client, "list_files", sessionId="brand-new")
        assert not first.is_error and data(first)["entries"] == [], text(first)
        assert "empty" in text(first)
        inside = await call(client, "list_files", path="src", sessionId="brand-new")
        assert inside.is_error and "not_found" in text(inside), text(inside)
        missing = await call(client, "read_file", path="a.txt", sessionId="brand-new")
        assert missing.is_error and "not_found" in text(missing), text(missing)
    assert "brand-new" not in [
        s["sessionId"] for s in (await wb.client.get("/v1/sessions")).json()["sessions"]
    ]
