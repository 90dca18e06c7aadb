"""`workbench_code` end to end: code written to a file, run by the image's interpreter, and treated
exactly like a bash execution (events, budget, artifacts, cancel, deadlines, idempotency)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import procs
from tests.conftest import DaemonHandle
from workbench.core.images import EXECUTION_PATH

CODE = "/v1/executions/workbench_code"


async def run_code(wb: DaemonHandle, language: str, code: str, **body: Any) -> dict[str, Any]:
    """Run code in the foreground; the terminal record."""
    response = await wb.client.post(
        CODE, json={"language": language, "code": code, "waitTimeoutMs": 60_000, **body}
    )
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


async def start_code(wb: DaemonHandle, language: str, code: str, **body: Any) -> dict[str, Any]:
    response = await wb.client.post(
        CODE, json={"language": language, "code": code, "background": True, **body}
    )
    assert response.status_code == 202, response.text
    record: dict[str, Any] = response.json()
    return record


def real(path: str) -> str:
    return os.path.realpath(path)


async def streams(wb: DaemonHandle, execution_id: str) -> dict[str, str]:
    text = {"stdout": "", "stderr": ""}
    for event in await wb.events(execution_id):
        if event["eventType"] == "output":
            text[event["stream"]] += event["outputDelta"]
    return text


async def test_python_runs_with_its_output_and_exit_status(wb: DaemonHandle) -> None:
    """Promise 1 for code: the right output and exit code; the record carries language and code."""
    code = 'import sys\nprint("héllo from python")\nprint("to stderr", file=sys.stderr)\nsys.exit(3)'
    record = await run_code(wb, "python", code)
    assert record["status"] == "failed" and record["exitCode"] == 3, record
    assert record["executionKind"] == "workbench_code"
    assert record["language"] == "python" and record["code"] == code and record["command"] is None
    assert await streams(wb, record["executionId"]) == {
        "stdout": "héllo from python\n",
        "stderr": "to stderr\n",
    }
    fetched = await wb.client.get(f"/v1/executions/workbench_code/{record['executionId']}")
    assert fetched.json()["code"] == code
    assert (await wb.client.get(f"/v1/executions/workbench_bash/{record['executionId']}")).status_code == 404


async def test_python_is_the_real_interpreter_reading_its_code_file(wb: DaemonHandle) -> None:
    """The interpreter is a real absolute path (never a shim) and runs a file in the execution's directory."""
    record = await run_code(wb, "python", "import os, sys\nprint(sys.executable)\nprint(__file__)")
    assert record["status"] == "completed", record
    executable, code_file = (await streams(wb, record["executionId"]))["stdout"].splitlines()
    assert os.path.isabs(executable) and real(executable) == executable
    assert "shims" not in executable
    assert code_file == str(wb.data_dir / "executions" / record["executionId"] / "code.py")


async def test_bash_and_sh_code(wb: DaemonHandle) -> None:
    script = 'set -e\nfor i in 1 2 3; do\n  echo "line $i"\ndone\n[ -n "$BASH_VERSION" ] && echo bash\n'
    bash = await run_code(wb, "bash", script)
    assert bash["status"] == "completed", bash
    assert (await streams(wb, bash["executionId"]))["stdout"] == "line 1\nline 2\nline 3\nbash\n"
    sh = await run_code(wb, "sh", 'echo "sh here"; exit 7')
    assert sh["status"] == "failed" and sh["exitCode"] == 7
    assert (await streams(wb, sh["executionId"]))["stdout"] == "sh here\n"
    empty = await run_code(wb, "bash", "")
    assert empty["status"] == "completed"


@pytest.mark.skipif(shutil.which("node", path=EXECUTION_PATH) is None, reason="node is not installed")
async def test_node_where_installed(wb: DaemonHandle) -> None:
    record = await run_code(wb, "node", "console.log(6 * 7); process.exit(2)")
    assert record["status"] == "failed" and record["exitCode"] == 2
    assert (await streams(wb, record["executionId"]))["stdout"] == "42\n"


async def test_stdin_env_cwd_and_progress(wb: DaemonHandle, tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "open(os.environ['WORKBENCH_PROGRESS'], 'a').write('1/4 started\\n')\n"
        "print(sys.stdin.read().strip(), os.environ['GREETING'], os.getcwd(), sep='|')\n"
    )
    record = await run_code(
        wb, "python", code, stdin="from stdin\n", env={"GREETING": "hi"}, cwd=str(tmp_path)
    )
    assert record["status"] == "completed", record
    events = await wb.events(record["executionId"])
    assert (await streams(wb, record["executionId"]))["stdout"] == f"from stdin|hi|{tmp_path}\n"
    progress = [(e["progress"], e["total"], e["message"]) for e in events if e["eventType"] == "progress"]
    assert progress == [(1, 4, "started")]
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["eventType"] == "status" and events[-1]["status"] == "completed"


async def test_output_beyond_the_budget_spills_to_artifacts(make_daemon: Any) -> None:
    """Promise 1 for code: every byte is in the events or the artifacts."""
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=10_000)
    record = await run_code(wb, "python", "import sys\nsys.stdout.write('0123456789' * 5000)")
    assert record["status"] == "completed"
    assert record["output"]["truncated"] is True and record["output"]["stdoutBytes"] == 50_000
    artifact = {a["name"]: a for a in record["artifacts"]}["stdout"]
    expected = b"0123456789" * 5000
    assert artifact["sha256"] == hashlib.sha256(expected).hexdigest()
    body = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts/stdout")
    assert body.content == expected
    events = await wb.events(record["executionId"])
    assert [e["eventType"] for e in events].count("output_truncated") == 1


async def test_cancel_kills_the_code_and_its_children(wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 3 for code: a cancel leaves nothing of the tree alive."""
    code = (
        "import subprocess, time\n"
        "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
        "open('ready', 'w').write('up')\n"
        "time.sleep(300)\n"
    )
    started = await start_code(wb, "python", code, cwd=str(tmp_path))
    eid = started["executionId"]
    await procs.eventually((tmp_path / "ready").exists)
    assert len(procs.processes_mentioning(eid)) >= 2
    response = await wb.client.post(f"/v1/executions/workbench_code/{eid}/cancel", json={"reason": "enough"})
    assert response.status_code == 202
    final = await wb.wait(eid)
    assert final["status"] == "cancelled" and final["cancelReason"] == "enough"
    assert procs.processes_mentioning(eid) == []


async def test_deadline_times_code_out(wb: DaemonHandle) -> None:
    record = await run_code(wb, "python", "import time\ntime.sleep(60)", timeoutMs=400)
    assert record["status"] == "timed_out" and record["error"]["code"] == "timeout"
    assert procs.processes_mentioning(record["executionId"]) == []


async def test_idempotency_key_for_code(wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 8 for code: one key runs the code once; a different body with it is refused."""
    body = {"language": "bash", "code": "echo ran >> runs", "cwd": str(tmp_path), "waitTimeoutMs": 60_000}
    headers = {"Idempotency-Key": "code-key"}
    first = await wb.client.post(CODE, json=body, headers=headers)
    again = await wb.client.post(CODE, json=body, headers=headers)
    assert first.status_code == 201 and again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["executionId"] == first.json()["executionId"]
    assert (tmp_path / "runs").read_text() == "ran\n"
    other = await wb.client.post(CODE, json={**body, "code": "echo other"}, headers=headers)
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    as_bash = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "echo ran >> runs"}, headers=headers
    )
    assert as_bash.status_code == 422 and as_bash.json()["error"]["code"] == "idempotency_key_reused"


async def test_unknown_language_lists_those_the_image_has(wb: DaemonHandle) -> None:
    """Promise 7: a clear error that changes nothing."""
    response = await wb.client.post(CODE, json={"language": "cobol", "code": "DISPLAY 'HI'."})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "unsupported_language"
    assert {"bash", "sh", "python"} <= set(error["details"]["languages"])
    assert "python" in error["message"] and "cobol" in error["message"]
    for bad in ({"language": "python"}, {"code": "print(1)"}, {"language": "", "code": "x"}):
        invalid = await wb.client.post(CODE, json=bad)
        assert invalid.status_code == 422 and invalid.json()["error"]["code"] == "invalid_request"
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    assert list((wb.data_dir / "executions").iterdir()) == []


async def test_code_leaves_no_file_in_the_workspace(wb: DaemonHandle) -> None:
    """The code file lives in the execution's directory, which goes when the execution is deleted."""
    record = await run_code(wb, "python", "print('x')", sessionId="tidy")
    assert list((wb.data_dir / "workspaces" / "admin" / "tidy").iterdir()) == []
    deleted = await wb.client.delete(f"/v1/executions/{record['executionId']}")
    assert deleted.status_code == 204
    assert not (wb.data_dir / "executions" / record["executionId"]).exists()
