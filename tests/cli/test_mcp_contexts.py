"""`workbench mcp`'s code tool with `stateful`: the session's interpreter of a language, made on
first use and found again by later calls (and by a new MCP server), keeps its names; the value of
a final expression and an exception come back in the answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_mcp import call, data, session, text
from tests.conftest import DaemonHandle

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


@pytest.mark.timeout(120)
async def test_stateful_code_keeps_its_names_between_calls(wb: DaemonHandle, tmp_path: Path) -> None:
    async with session(wb.url, tmp_path) as client:
        first = await call(client, "code", language="python", code="x = 20", stateful=True, sessionId="nb")
        assert not first.is_error and data(first)["status"] == "completed", text(first)
        context_id = data(first)["contextId"]
        assert context_id.startswith("cx_")
        cell = "print('hi')\nx * 2 + 2"
        value = await call(client, "code", language="python", code=cell, stateful=True, sessionId="nb")
        assert data(value)["stdout"] == "hi\n" and data(value)["result"] == "42", text(value)
        assert data(value)["contextId"] == context_id and "42" in text(value)
        failed = await call(client, "code", language="python", code="x / 0", stateful=True, sessionId="nb")
        assert data(failed)["error"]["code"] == "exception" and "ZeroDivisionError" in text(failed)
        traceback = data(failed)["error"]["traceback"]
        assert "Traceback" in traceback and traceback.strip() in text(failed), text(failed)
        wide = '1 / 0 if x else "' + "y" * 20_000 + '"'  # a traceback that quotes a long line
        long = await call(client, "code", language="python", code=wide, stateful=True, sessionId="nb")
        assert len(data(long)["error"]["traceback"]) > 8000, "a traceback longer than the text holds"
        assert len(text(long)) < 6000 and "ZeroDivisionError" in text(long).rpartition("traceback")[2]
        # Another session has an interpreter of its own; a stateless call sees none of the names.
        other = await call(client, "code", language="python", code="x", stateful=True, sessionId="other")
        assert data(other)["contextId"] != context_id and data(other)["error"]["code"] == "exception"
        plain = await call(client, "code", language="python", code="print(x)", sessionId="nb")
        assert data(plain)["exitCode"] == 1 and "contextId" not in data(plain)
        refused = await call(client, "code", language="python", code="1", stateful=True, cwd="/tmp")
        assert refused.is_error and "stateful" in text(refused)
    # A new server (a restarted agent) finds the session's interpreter again.
    async with session(wb.url, tmp_path) as client:
        again = await call(client, "code", language="python", code="x", stateful=True, sessionId="nb")
        assert data(again)["contextId"] == context_id and data(again)["result"] == "20", text(again)
    listed = (await wb.client.get("/v1/contexts")).json()["contexts"]
    assert sorted(c["sessionId"] for c in listed) == ["nb", "other"]
    for c in listed:
        assert (await wb.client.delete(f"/v1/contexts/{c['contextId']}")).status_code == 204


@pytest.mark.timeout(120)
async def test_stateful_code_without_a_session_uses_the_default_one(wb: DaemonHandle, tmp_path: Path) -> None:
    """No sessionId: the calls share the default session's interpreter (one, not one per call)."""
    async with session(wb.url, tmp_path) as client:
        first = await call(client, "code", language="python", code="y = 7", stateful=True)
        assert not first.is_error and data(first)["status"] == "completed", text(first)
        second = await call(client, "code", language="python", code="y * 6", stateful=True)
        assert data(second)["result"] == "42", text(second)
        assert data(second)["contextId"] == data(first)["contextId"]
    listed = (await wb.client.get("/v1/contexts")).json()["contexts"]
    assert [c["sessionId"] for c in listed] == ["default"], listed
    for c in listed:
        assert (await wb.client.delete(f"/v1/contexts/{c['contextId']}")).status_code == 204


@pytest.mark.timeout(120)
async def test_a_cells_value_comes_back_after_its_wait_and_a_long_one_is_cut(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """A cell that outlives `waitSeconds` gives its value to the execution tool's `wait` and `get`
    (it was lost); every answer's text names its execution (and context); a long value or
    exception message is cut in the text as a traceback is."""
    async with session(wb.url, tmp_path) as client:
        code = "import time\ntime.sleep(2)\n6 * 7"
        slow = await call(client, "code", language="python", code=code, stateful=True, waitSeconds=0.2)
        execution_id = data(slow)["executionId"]
        assert data(slow)["running"], text(slow)
        assert data(slow)["contextId"] in text(slow).splitlines()[0], text(slow)
        waited = await call(client, "execution", action="wait", executionId=execution_id, waitSeconds=30)
        assert data(waited)["result"] == "42" and "42" in text(waited), text(waited)
        assert data(waited)["contextId"] == data(slow)["contextId"]
        got = await call(client, "execution", action="get", executionId=execution_id)
        assert data(got)["result"] == "42", text(got)
        assert execution_id in text(got).splitlines()[0] and data(slow)["contextId"] in text(got)
        wide = await call(client, "code", language="python", code="'v' * 300_000", stateful=True)
        assert len(data(wide)["result"]) > 200_000 and len(text(wide)) < 6000, len(text(wide))
        raised = await call(
            client, "code", language="python", code="raise ValueError('w' * 300_000)", stateful=True
        )
        assert data(raised)["error"]["code"] == "exception" and len(text(raised)) < 12_000, len(text(raised))
        bash = await call(client, "bash", command="exit 3")
        assert data(bash)["executionId"] in text(bash).splitlines()[0], text(bash)
    for c in (await wb.client.get("/v1/contexts")).json()["contexts"]:
        assert (await wb.client.delete(f"/v1/contexts/{c['contextId']}")).status_code == 204


@pytest.mark.timeout(120)
async def test_a_cell_queued_behind_another_is_said_to_wait_not_to_run(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    """A cell whose wait ends while it waits for its turn (the one before still runs) is said to
    be waiting to start (it was said to be "still running")."""
    async with session(wb.url, tmp_path) as client:
        await call(
            client,
            "code",
            language="python",
            code="import time; time.sleep(3)",
            stateful=True,
            background=True,
        )
        queued = await call(client, "code", language="python", code="1", stateful=True, waitSeconds=0.5)
        assert data(queued)["status"] == "queued", text(queued)
        assert "waiting to start" in text(queued) and "running after" not in text(queued), text(queued)
    for c in (await wb.client.get("/v1/contexts")).json()["contexts"]:
        assert (await wb.client.delete(f"/v1/contexts/{c['contextId']}")).status_code == 204
