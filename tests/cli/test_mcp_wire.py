"""`workbench mcp`'s stdio wire as a client's bytes reach it: a request the SDK's parser refuses
still gets an answer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import ceilings
from tests.cli.test_mcp import HANDSHAKE, bash_call, lines, raw_server
from tests.conftest import DaemonHandle

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


@pytest.mark.timeout(120)
async def test_a_lone_surrogate_in_a_request_is_answered_with_an_error(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """`"\\ud800"` (a JavaScript string cut through an emoji) in a call's arguments: a JSON-RPC
    error naming it, at once (it got no answer at all), nothing run, and the next call is served;
    in a notification it is dropped, as a notification is never answered."""
    messages = [
        *HANDSHAKE,
        bash_call(2, "echo \ud800 > ran", "wire"),
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 9, "reason": "\udcff"},
        },
        bash_call(3, "echo whole", "wire"),
    ]
    server = await raw_server(wb.url, tmp_path, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert server.stdin is not None and server.stdout is not None
    answers: dict[int, Any] = {}
    try:
        await server.stdin.send_all(lines(messages))
        received = b""
        with ceilings.within(60, "the answers to the calls"):
            while not {2, 3} <= answers.keys():
                chunk = await server.stdout.receive_some(65536)
                assert chunk, "the server ended"
                received += chunk
                *whole, received = received.split(b"\n")
                for line in whole:
                    answer = json.loads(line)
                    answers[answer["id"]] = answer
        await server.stdin.aclose()
        with ceilings.within(30, "the server to end"):
            await server.wait()
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
    refused = answers[2]["error"]
    assert refused["code"] == -32602 and "lone surrogate \\ud800" in refused["message"], refused
    assert "whole" in json.dumps(answers[3]["result"]), answers[3]
    listed = (await wb.client.get("/v1/executions", params={"sessionId": "wire"})).json()["executions"]
    assert [e["command"] for e in listed] == ["echo whole"], "the refused call ran nothing"


def test_what_is_not_a_request_with_a_lone_surrogate_is_left_to_the_sdk() -> None:
    """Nested past the interpreter's recursion (it ended the server), not JSON, or a client's
    answer to the server: not refused here (the SDK answers, or handles, as it does any)."""
    from workbench.cli.mcp.stdio import _lone_surrogate

    deep = '{"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": ' + "[" * 200_000 + '"\\ud800"'
    assert _lone_surrogate(deep + "]" * 200_000 + "}}") is None
    assert _lone_surrogate('{"id": 1, "method": "x", "params": "\\ud800"') is None
    assert _lone_surrogate('{"jsonrpc": "2.0", "id": 7, "result": {"text": "\\ud800"}}') is None
    assert (
        _lone_surrogate('{"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": "\\ud800"}}') == ""
    )
    refused = _lone_surrogate(
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"a": "\\udcff"}}'
    )
    assert refused is not None and '"id": 3' in refused and "\\\\udcff" in refused, refused
