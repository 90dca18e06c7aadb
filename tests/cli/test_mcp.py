"""`workbench mcp` driven by the official MCP client (`ClientSession` over `stdio_client`) against
a real daemon: the tools listed, bash in the foreground and past its wait, the execution tool's
wait, cancel and logs, the exits feed, and bad arguments (a tool error; the server serves on)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types as mcp_types

PYTHON = os.path.realpath(sys.executable)  # a real interpreter, never a PATH shim
TOOLS = {"bash", "code", "execution", "input", "list", "exits", "read_file", "write_file", "list_files"}


#: A raw client's first two messages, for tests that write the wire's bytes themselves.
HANDSHAKE: list[dict[str, Any]] = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def bash_call(request_id: int, command: str, session_id: str) -> dict[str, Any]:
    """A raw `tools/call` of the bash tool."""
    arguments = {"command": command, "sessionId": session_id}
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "bash", "arguments": arguments},
    }


async def raw_server(url: str, tmp_path: Path, *, stdout: int, stderr: int) -> trio.Process:
    """A `workbench mcp` subprocess for `url` with its stdin a pipe, for a raw client."""
    return await trio.lowlevel.open_process(
        [sys.executable, "-m", "workbench", "mcp", "--url", url, "--token", TOKEN],
        stdin=subprocess.PIPE,
        stdout=stdout,
        stderr=stderr,
        env={"WORKBENCH_DATA_DIR": str(tmp_path / "mcp-home"), "PATH": "/usr/bin:/bin"},
    )


def lines(messages: list[dict[str, Any]]) -> bytes:
    """Messages as the wire carries them: a line of JSON each."""
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


@asynccontextmanager
async def session(url: str, tmp_path: Path) -> AsyncIterator[ClientSession]:
    """A `workbench mcp` subprocess for `url`, initialized."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workbench", "mcp", "--url", url, "--token", TOKEN],
        env={"WORKBENCH_DATA_DIR": str(tmp_path / "mcp-home")},
    )
    with (tmp_path / "mcp-stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
            with ceilings.within(60, "the MCP server to start and answer initialize"):
                await client.initialize()
            yield client


async def call(client: ClientSession, name: str, **arguments: Any) -> mcp_types.CallToolResult:
    with ceilings.within(90, f"the MCP tool {name} to answer"):
        return await client.call_tool(name, arguments)


def text(result: mcp_types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, mcp_types.TextContent))


def data(result: mcp_types.CallToolResult) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict), result
    return result.structured_content


@pytest.mark.timeout(240)
async def test_the_tools_against_a_daemon(wb: DaemonHandle, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    async with session(wb.url, tmp_path) as client:
        listed = await client.list_tools()
        assert {t.name for t in listed.tools} == TOOLS
        for tool in listed.tools:
            assert tool.description and len(tool.description) > 40
            assert tool.input_schema["type"] == "object" and tool.input_schema["properties"]
        bash = next(t for t in listed.tools if t.name == "bash")
        assert bash.input_schema["required"] == ["command"]
        assert {
            "command",
            "cwd",
            "timeoutSeconds",
            "waitSeconds",
            "background",
            "sessionId",
            "image",
            "service",
            "readiness",
            "readyTimeoutSeconds",
            "openStdin",
        } == set(bash.input_schema["properties"])

        # Foreground: the exit code, the status and the output, as text and as structured content.
        done = await call(client, "bash", command="echo hello; echo oops >&2; exit 3")
        assert not done.is_error
        assert data(done)["status"] == "failed" and data(done)["exitCode"] == 3
        assert (data(done)["stdout"], data(done)["stderr"], data(done)["running"]) == (
            "hello\n",
            "oops\n",
            False,
        )
        assert "exit code 3" in text(done) and "hello" in text(done) and "oops" in text(done)
        here = await call(client, "bash", command="pwd", cwd=str(tmp_path))
        assert data(here)["stdout"] == f"{tmp_path}\n"
        ran = await call(client, "code", language="python", code="print(6 * 7)")
        assert (data(ran)["exitCode"], data(ran)["stdout"]) == (0, "42\n")
        plain = await call(client, "bash", command=r"printf 'a\r\033[1mb\033[0m\n'")
        assert data(plain)["stdout"] == "b\n"  # what a terminal shows

        # One that outlives waitSeconds: running, its id, the output so far, and a note.
        command = f"echo started; while [ ! -e {gate} ]; do sleep 0.02; done; echo finished"
        slow = await call(client, "bash", command=command, waitSeconds=0.5)
        info = data(slow)
        assert not slow.is_error and info["running"] is True and info["status"] == "running"
        assert info["stdout"] == "started\n" and info["executionId"].startswith("ex_")
        assert info["detached"] is True  # handed over: its outcome comes from the exits tool too
        assert "do not start it again" in info["note"] and info["executionId"] in text(slow)
        eid = info["executionId"]
        still = await call(client, "execution", action="wait", executionId=eid, waitSeconds=0.2)
        assert data(still)["running"] is True
        gate.touch()
        waited = await call(client, "execution", action="wait", executionId=eid, waitSeconds=60)
        assert data(waited)["status"] == "completed" and data(waited)["stdout"] == "started\nfinished\n"
        got = await call(client, "execution", action="get", executionId=eid)
        assert data(got)["exitCode"] == 0

        # Logs by sequence, page by page, and by byte offset (past the event budget too).
        page = await call(client, "execution", action="logs", executionId=eid)
        assert data(page)["text"] == "started\nfinished\n" and data(page)["done"] is True
        first = await call(client, "execution", action="logs", executionId=eid, maxBytes=3)
        assert data(first)["text"] == "sta" and data(first)["done"] is False
        rest = await call(
            client, "execution", action="logs", executionId=eid, afterSequence=data(first)["nextSequence"],
            skipBytes=data(first)["nextSkipBytes"],
        )  # fmt: skip
        assert data(rest)["text"] == "rted\nfinished\n" and data(rest)["done"] is True
        big = await call(client, "bash", command="seq 1 900000", waitSeconds=120)
        expected = "".join(f"{i}\n" for i in range(1, 900_001)).encode()
        assert data(big)["stdoutElidedBytes"] > 0 and data(big)["stdout"].endswith("900000\n")
        at = len(expected) - 14
        tail = await call(
            client, "execution", action="logs", executionId=data(big)["executionId"], stream="stdout",
            offset=at, maxBytes=100,
        )  # fmt: skip
        assert data(tail)["text"] == expected[at:].decode() and data(tail)["done"] is True

        # Cancel: the whole tree, then the cancelled record.
        sleeping = await call(client, "bash", command="sleep 60 & sleep 60; wait", background=True)
        assert data(sleeping)["running"] is True
        cancelled = await call(
            client, "execution", action="cancel", executionId=data(sleeping)["executionId"]
        )
        assert data(cancelled)["status"] == "cancelled" and data(cancelled)["cancelled"] is True

        # Exits: the runs handed over (past their wait, or in the background), each once.
        seen: set[str] = set()
        said = ""
        with ceilings.within(60, "the exits of the handed-over runs"):
            while not {eid, data(sleeping)["executionId"]} <= seen:
                exits = await call(client, "exits", waitSeconds=5)
                seen |= {item["executionId"] for item in data(exits)["exits"]}
                said += text(exits)
        assert f"{data(sleeping)['executionId']}: cancelled, signal SIGKILL" in said, said
        assert "None" not in said, said  # a run killed by a signal has no exit code to show
        again = await call(client, "exits")
        assert data(again)["exits"] == [] and text(again) == "no exits"

        listing = await call(client, "list", status="completed", limit=3)
        assert [row["status"] for row in data(listing)["executions"]] == ["completed"] * 3
        assert data(listing)["executions"][0]["executionId"] in text(listing)


@pytest.mark.timeout(120)
async def test_the_input_tool_answers_a_waiting_program(wb: DaemonHandle, tmp_path: Path) -> None:
    """bash with openStdin runs on past its wait; input types the answers, then the outcome."""
    python = f"{PYTHON} -u -i -q"
    async with session(wb.url, tmp_path) as client:
        started = await call(client, "bash", command=python, openStdin=True, waitSeconds=0.2)
        assert data(started)["running"] is True
        eid = data(started)["executionId"]
        first = await call(client, "input", executionId=eid, text="x = 6\n", waitSeconds=0)
        assert not first.is_error and data(first)["running"] is True
        last = await call(client, "input", executionId=eid, text="print(x * 7)\n", eof=True, waitSeconds=30)
        assert data(last)["status"] == "completed" and "42" in data(last)["stdout"]
        late = await call(client, "input", executionId=eid, text="1\n")
        assert late.is_error and "conflict" in text(late)


@pytest.mark.timeout(120)
async def test_bad_arguments_are_tool_errors_and_the_server_serves_on(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    cases: list[tuple[str, dict[str, Any], str]] = [
            ("bash", {}, "invalid_request"),
            ("bash", {"command": "true", "colour": "red"}, "invalid_request"),
            ("bash", {"command": "true", "waitSeconds": 601}, "invalid_request"),
            ("bash", {"command": "true", "cwd": "relative/dir"}, "invalid_request"),
            ("bash", {"command": "true", "image": "no-such-image"}, "unknown_image"),
            ("code", {"language": "cobol", "code": "x"}, "unsupported_language"),
            ("execution", {"action": "explode", "executionId": "ex_x"}, "invalid_request"),
            ("execution", {"action": "get", "executionId": "ex_01JD0000000000000000000000"}, "not_found"),
            ("execution", {"action": "logs", "executionId": "ex_01JD0000000000000000000000", "offset": 0},
             "invalid_request"),
            ("list", {"status": "complete"}, "invalid_request"),
            ("no_such_tool", {}, "not_found"),
    ]  # fmt: skip
    async with session(wb.url, tmp_path) as client:
        for name, arguments, code in cases:
            result = await call(client, name, **arguments)
            assert result.is_error, (name, arguments, result)
            error = data(result)["error"]
            assert error["code"] == code and error["message"], (name, arguments, error)
            assert text(result).startswith(f"{code}: "), text(result)
        ok = await call(client, "bash", command="echo still serving")
        assert not ok.is_error and data(ok)["stdout"] == "still serving\n"


@pytest.mark.timeout(120)
async def test_a_daemon_that_is_not_there_is_a_tool_error(tmp_path: Path) -> None:
    async with session("http://127.0.0.1:9", tmp_path) as client:
        result = await call(client, "bash", command="true")
        assert result.is_error and data(result)["error"]["code"] == "unavailable"
        assert "cannot reach" in data(result)["error"]["message"]
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS


def _help() -> str:
    """What `workbench mcp --help` prints."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", "mcp", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout


def test_help_shows_a_ready_configuration_snippet() -> None:
    out = _help()
    found = re.search(r"^\{\n.*?^\}$", out, re.MULTILINE | re.DOTALL)
    assert found is not None, out
    config = json.loads(found.group())
    server = config["mcpServers"]["workbench"]
    assert server["args"] == ["-m", "workbench", "mcp"] and Path(server["command"]).exists()
    assert server["env"]["WORKBENCH_URL"].startswith("http://")


def test_help_and_the_readme_name_every_tool() -> None:
    out = _help()
    description = " ".join(out.partition("an agent's MCP configuration")[0].split())
    for tool in TOOLS:
        assert re.search(rf"\b{tool}\b", description), (tool, description)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    agent = readme.partition("## Use it from an agent")[2].partition("\n## ")[0]
    assert f"The agent gets {len(TOOLS)} tools" in agent.replace("nine", "9"), agent[:2000]
    for tool in TOOLS:
        assert f"`{tool}`" in agent, tool


async def test_the_server_stops_when_its_stdin_closes(wb: DaemonHandle, tmp_path: Path) -> None:
    """The agent going away ends the server (the fixture checks no process is left behind)."""
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "workbench", "mcp", "--url", wb.url, "--token", TOKEN],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None
    await process.stdin.aclose()
    with ceilings.within(60, "the MCP server to exit once its stdin closed"):
        assert await process.wait() == 0
