"""Code contexts end to end: a long-lived interpreter whose names persist between executions,
each of which is an ordinary execution (events, record, cancel), run one at a time, in order."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import trio

from tests import procs
from tests.conftest import DaemonHandle
from tests.e2e.test_code import streams
from tests.e2e.test_security import Principals, principals  # noqa: F401 (a fixture)
from tests.ends import noted_at_each_end

CODE = "/v1/executions/workbench_code"


async def new_context(wb: DaemonHandle, **body: Any) -> dict[str, Any]:
    response = await wb.client.post("/v1/contexts", json={"language": "python", **body})
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    assert record["status"] == "ready", response.text
    return record


async def run_in(wb: DaemonHandle, context_id: str, code: str, **body: Any) -> dict[str, Any]:
    response = await wb.client.post(
        CODE,
        json={"language": "python", "code": code, "contextId": context_id, "waitTimeoutMs": 60_000, **body},
    )
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


async def start_in(wb: DaemonHandle, context_id: str, code: str) -> dict[str, Any]:
    response = await wb.client.post(
        CODE, json={"language": "python", "code": code, "contextId": context_id, "background": True}
    )
    assert response.status_code == 202, response.text
    record: dict[str, Any] = response.json()
    return record


async def reaches(wb: DaemonHandle, path: str, status: str, within_s: float = 30.0) -> dict[str, Any]:
    """The record at `path` once its status is `status` (what a cell or a reaper does is not announced)."""
    with trio.fail_after(within_s):
        for _ in iter(int, 1):
            record: dict[str, Any] = (await wb.client.get(path)).json()
            if record["status"] == status:
                return record
            await trio.sleep(0.01)
    raise AssertionError("unreachable")


async def printed(wb: DaemonHandle, execution_id: str, text: str, within_s: float = 30.0) -> None:
    """Once a running execution's stdout (its record's live preview) holds `text`: what a cell did
    before it printed that has been done."""
    with trio.fail_after(within_s):
        for _ in iter(int, 1):
            record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
            if text in (record["preview"] or {}).get("stdout", ""):
                return
            await trio.sleep(0.01)


async def context_of(wb: DaemonHandle, context_id: str) -> dict[str, Any]:
    response = await wb.client.get(f"/v1/contexts/{context_id}")
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_names_persist_and_the_final_expression_is_the_result(wb: DaemonHandle) -> None:
    """Names defined by one execution are there for the next; the value of a final expression is
    `result["text/plain"]`; output streams as events of each execution (promise 1)."""
    cx = (await new_context(wb))["contextId"]
    first = await run_in(wb, cx, "import os\nx = 20\nprint('set', x)\nx * 2")
    assert first["status"] == "completed" and first["exitCode"] == 0, first
    assert first["contextId"] == cx and first["result"] == {"text/plain": "40"}
    assert await streams(wb, first["executionId"]) == {"stdout": "set 20\n", "stderr": ""}
    second = await run_in(wb, cx, "y = x + 1\nimport sys; print('err', file=sys.stderr)\n{'y': y}")
    assert second["result"] == {"text/plain": "{'y': 21}"}, second
    assert await streams(wb, second["executionId"]) == {"stdout": "", "stderr": "err\n"}
    # No final expression (or one whose value is None): no result.
    assert (await run_in(wb, cx, "z = 1"))["result"] is None
    assert (await run_in(wb, cx, "None"))["result"] is None
    # A child process of a cell writes to the cell's output too.
    child = await run_in(
        wb, cx, "import subprocess; subprocess.run(['echo', 'from a child'])\nos.getpid() > 0"
    )
    assert await streams(wb, child["executionId"]) == {"stdout": "from a child\n", "stderr": ""}
    record = await context_of(wb, cx)
    assert record["status"] == "ready" and record["executions"] == 5, record
    assert record["image"] == "host" and record["sessionId"] == "default"


async def test_an_exception_fails_the_execution_with_its_traceback(wb: DaemonHandle) -> None:
    """An uncaught exception: `failed`, error.code `exception`, `Type: text`, the traceback; the
    context lives on with its names."""
    cx = (await new_context(wb))["contextId"]
    await run_in(wb, cx, "def f(n):\n    return 1 / n")
    record = await run_in(wb, cx, "print('before')\nf(0)")
    assert record["status"] == "failed", record
    error = record["error"]
    assert error["code"] == "exception" and error["message"] == "ZeroDivisionError: division by zero"
    assert "Traceback (most recent call last)" in error["traceback"]
    assert "return 1 / n" in error["traceback"] and "ctxdriver" not in error["traceback"]
    assert await streams(wb, record["executionId"]) == {"stdout": "before\n", "stderr": ""}
    syntax = await run_in(wb, cx, "def (:")
    assert syntax["status"] == "failed" and syntax["error"]["code"] == "exception"
    assert syntax["error"]["message"].startswith("SyntaxError")
    assert (await run_in(wb, cx, "f(4)"))["result"] == {"text/plain": "0.25"}
    # SystemExit is an exception of the cell too: the interpreter stays.
    assert (await run_in(wb, cx, "raise SystemExit(3)"))["error"]["message"] == "SystemExit: 3"
    assert (await run_in(wb, cx, "f(2)"))["result"] == {"text/plain": "0.5"}


async def test_executions_of_a_context_queue_in_order(wb: DaemonHandle) -> None:
    """Executions of one context run one at a time, in the order they were started."""
    cx = (await new_context(wb))["contextId"]
    await run_in(wb, cx, "seen = []")
    ids = [
        (await start_in(wb, cx, f"import time; time.sleep(0.05); seen.append({i})"))["executionId"]
        for i in range(4)
    ]
    for eid in ids:
        assert (await wb.wait(eid))["status"] == "completed"
    assert (await run_in(wb, cx, "seen"))["result"] == {"text/plain": "[0, 1, 2, 3]"}


async def test_cancel_interrupts_and_the_context_lives_on(wb: DaemonHandle) -> None:
    """Cancel of `while True: pass` raises KeyboardInterrupt in it: `cancelled`, and the next
    execution runs in the same interpreter with its names (promise 3 for the cell)."""
    cx = (await new_context(wb))["contextId"]
    await run_in(wb, cx, "kept = 'yes'")
    busy = await start_in(wb, cx, "print('spinning', flush=True)\nwhile True: pass")
    queued = await start_in(wb, cx, "kept + '!'")
    await reaches(wb, f"/v1/contexts/{cx}", "busy")
    response = await wb.client.post(f"/v1/executions/{busy['executionId']}/cancel", json={})
    assert response.status_code == 202, response.text
    assert (await wb.wait(busy["executionId"]))["status"] == "cancelled"
    after = await wb.wait(queued["executionId"])
    assert after["status"] == "completed" and after["result"] == {"text/plain": "'yes!'"}, after
    # Blocking calls are interrupted too.
    sleeper = await start_in(wb, cx, "import time\ntime.sleep(600)")
    await reaches(wb, f"/v1/executions/{sleeper['executionId']}", "running")
    await wb.client.post(f"/v1/executions/{sleeper['executionId']}/cancel", json={})
    assert (await wb.wait(sleeper["executionId"]))["status"] == "cancelled"
    assert (await context_of(wb, cx))["status"] == "ready"
    assert (await run_in(wb, cx, "kept"))["result"] == {"text/plain": "'yes'"}


async def test_a_context_is_ready_again_when_its_cells_end_is_committed(wb: DaemonHandle) -> None:
    """Whoever learns that a cell ended (its wait returns, its stream ends) and then reads the
    context finds it `ready`, not still `busy` with that cell: the turn is given back before the
    end is committed. The context's status is noted at each terminal commit, to see it then."""
    cx = (await new_context(wb))["contextId"]
    context = wb.daemon.executor.contexts.all[cx]

    async def status(_execution_id: str) -> str:
        return str(context.status)

    async with noted_at_each_end(wb.daemon.executor.journal, status, last="cancelled") as seen:
        await run_in(wb, cx, "1 + 1")
        await run_in(wb, cx, "1 / 0")
        sleeper = await start_in(wb, cx, "import time\ntime.sleep(600)")
        await reaches(wb, f"/v1/executions/{sleeper['executionId']}", "running")
        await wb.client.post(f"/v1/executions/{sleeper['executionId']}/cancel", json={})
        assert (await wb.wait(sleeper["executionId"]))["status"] == "cancelled"
    assert seen == [("completed", "ready"), ("failed", "ready"), ("cancelled", "ready")], seen
    assert (await context_of(wb, cx))["status"] == "ready"


async def test_a_cell_that_ignores_the_interrupt_kills_its_context(wb: DaemonHandle) -> None:
    """One that does not stop within 2 s of the interrupt: the context is killed (its whole tree),
    `dead`, and what waited in it fails with error.code `context_dead`."""
    cx = (await new_context(wb))["contextId"]
    code = (
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('armed', flush=True)\n"
        "while True: pass"
    )
    stubborn = await start_in(wb, cx, code)
    queued = await start_in(wb, cx, "1")
    # Interrupted once it ignores SIGINT (an interrupt before that line stops it, as it should).
    await printed(wb, stubborn["executionId"], "armed")
    tree = procs.processes_mentioning(cx)
    assert tree
    await wb.client.post(f"/v1/executions/{stubborn['executionId']}/cancel", json={})
    assert (await wb.wait(stubborn["executionId"]))["status"] == "cancelled"
    failed = await wb.wait(queued["executionId"])
    assert failed["status"] == "failed" and failed["error"]["code"] == "context_dead", failed
    assert "did not stop within 2 s" in failed["error"]["message"]
    record = await context_of(wb, cx)
    assert record["status"] == "dead" and "did not stop" in record["reason"], record
    assert not [p for p in tree if procs.alive(p)]
    # A start in a dead context is refused; deleting it forgets it.
    response = await wb.client.post(CODE, json={"language": "python", "code": "1", "contextId": cx})
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    assert (await wb.client.delete(f"/v1/contexts/{cx}")).status_code == 204
    assert (await wb.client.get(f"/v1/contexts/{cx}")).status_code == 404


async def test_an_interpreter_that_dies_leaves_a_dead_context(wb: DaemonHandle) -> None:
    """The interpreter ending (os._exit in a cell): that execution fails `context_dead`, and so
    does the context."""
    cx = (await new_context(wb))["contextId"]
    record = await run_in(wb, cx, "import os\nos._exit(7)")
    assert record["status"] == "failed" and record["error"]["code"] == "context_dead", record
    assert "exited with code 7" in record["error"]["message"]
    assert (await context_of(wb, cx))["status"] == "dead"


async def test_idle_timeout_reaps_an_idle_context(wb: DaemonHandle) -> None:
    """`idleTimeoutMs`: a context with nothing running or queued for that long is killed."""
    # Idle for long enough that the cell surely comes first, on a machine busy with the whole
    # suite too (300 ms did not once).
    cx = (await new_context(wb, idleTimeoutMs=1500))["contextId"]
    # A running execution is not idleness.
    cell = await start_in(wb, cx, "import time; time.sleep(2); 1")
    tree = procs.processes_mentioning(cx)
    assert (await wb.wait(cell["executionId"]))["status"] == "completed"
    record = await reaches(wb, f"/v1/contexts/{cx}", "dead")
    assert "idle for 1500 ms" in record["reason"] and record["executions"] == 1
    assert not [p for p in tree if procs.alive(p)]


async def test_the_idle_clock_starts_once_the_context_is_ready(wb: DaemonHandle, tmp_path: Path) -> None:
    """An interpreter's start-up is not idleness: a context slower to start than its
    `idleTimeoutMs` is answered `ready`, and reaped that long after it was ready."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import time\ntime.sleep(1)\n")
    asked = trio.current_time()
    cx = (await new_context(wb, idleTimeoutMs=300, env={"PYTHONPATH": str(site)}))["contextId"]
    record = await reaches(wb, f"/v1/contexts/{cx}", "dead")
    assert "idle for 300 ms" in record["reason"], record
    assert trio.current_time() - asked >= 1.3  # its start-up (1 s), then idle for 300 ms


async def test_delete_kills_the_tree_and_fails_what_runs(wb: DaemonHandle) -> None:
    cx = (await new_context(wb))["contextId"]
    tree = procs.processes_mentioning(cx)
    running = await start_in(wb, cx, "import time\ntime.sleep(600)")
    await reaches(wb, f"/v1/executions/{running['executionId']}", "running")
    assert (await wb.client.delete(f"/v1/contexts/{cx}")).status_code == 204
    record = await wb.wait(running["executionId"])
    assert record["status"] == "failed" and record["error"]["code"] == "context_dead", record
    assert not [p for p in tree if procs.alive(p)]
    listed = (await wb.client.get("/v1/contexts")).json()["contexts"]
    assert cx not in [c["contextId"] for c in listed]


async def test_a_session_with_a_live_context_is_not_deleted(wb: DaemonHandle) -> None:
    """A session whose code context lives is kept, as one whose execution runs: its delete (and
    that of every session) is `409 conflict` naming the context and removes nothing, and the
    context goes on in its workspace. A dead context holds nothing; once the live one is deleted,
    the session goes."""
    cx = (await new_context(wb, sessionId="work"))["contextId"]
    assert (await run_in(wb, cx, "open('kept.txt', 'w').write('x')"))["status"] == "completed"
    ended = (await new_context(wb, sessionId="work"))["contextId"]
    await start_in(wb, ended, "import os\nos._exit(0)")
    await reaches(wb, f"/v1/contexts/{ended}", "dead")
    workspace = wb.settings.layout.workspace("admin", "work")
    for path in ("/v1/sessions/work", "/v1/sessions"):
        refused = await wb.client.delete(path)
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert error["code"] == "conflict" and cx in error["message"], error
        assert error["details"] == {"contexts": [cx]}, error
        assert (workspace / "kept.txt").read_bytes() == b"x"
    after = await run_in(wb, cx, "import os\n(os.getcwd(), open('kept.txt').read())")
    assert after["result"] == {"text/plain": repr((str(workspace), "x"))}, after
    assert (await context_of(wb, cx))["status"] == "ready"
    assert (await wb.client.delete(f"/v1/contexts/{cx}")).status_code == 204
    assert (await wb.client.delete("/v1/sessions/work")).status_code == 204
    assert not workspace.exists()
    assert (await context_of(wb, ended))["status"] == "dead"


async def test_a_sessions_live_contexts_are_counted_where_it_is_listed(wb: DaemonHandle) -> None:
    """The listing and the session's record count its live contexts (`liveContexts`), what holds
    its delete besides its executions: a dead context is not counted, nor one of another session."""
    cx = (await new_context(wb, sessionId="work"))["contextId"]
    ended = (await new_context(wb, sessionId="work"))["contextId"]
    await start_in(wb, ended, "import os\nos._exit(0)")
    await reaches(wb, f"/v1/contexts/{ended}", "dead")
    await new_context(wb, sessionId="other")
    sessions = (await wb.client.get("/v1/sessions")).json()["sessions"]
    counts = {s["sessionId"]: (s["liveExecutions"], s["liveContexts"]) for s in sessions}
    assert counts == {"work": (0, 1), "other": (0, 1)}, sessions
    work = (await wb.client.get("/v1/sessions/work")).json()
    assert work == next(s for s in sessions if s["sessionId"] == "work"), work
    assert (await wb.client.delete(f"/v1/contexts/{cx}")).status_code == 204
    assert (await wb.client.get("/v1/sessions/work")).json()["liveContexts"] == 0
    assert (await wb.client.delete("/v1/sessions/work")).status_code == 204


async def test_bad_requests_change_nothing(wb: DaemonHandle) -> None:
    """Promise 7: every bad input gets the contract's JSON error and starts nothing."""
    for body, code in [
        ({"language": "ruby"}, "invalid_request"),
        ({"language": "python", "image": "nope"}, "unknown_image"),
        ({"language": "python", "idleTimeoutMs": 0}, "invalid_request"),
        ({"language": "python", "surprise": 1}, "invalid_request"),
        ({"language": "python", "sessionId": ".."}, "invalid_request"),
    ]:
        response = await wb.client.post("/v1/contexts", json=body)
        assert response.status_code == 422 and response.json()["error"]["code"] == code, (body, response.text)
    assert (await wb.client.get("/v1/contexts")).json() == {"contexts": []}
    cx = (await new_context(wb))["contextId"]
    for extra in (
        {"cwd": "/tmp"},
        {"env": {"A": "1"}},
        {"stdin": "x"},
        {"idleTimeoutMs": 5},
        {"secretEnv": {"S": "1"}},
        {"openStdin": True, "background": True},
        {"tty": True, "background": True},
    ):
        response = await wb.client.post(
            CODE, json={"language": "python", "code": "1", "contextId": cx, **extra}
        )
        assert response.status_code == 422, (extra, response.text)
    response = await wb.client.post(CODE, json={"language": "bash", "code": "true", "contextId": cx})
    assert response.status_code == 422
    response = await wb.client.post(
        CODE, json={"language": "python", "code": "1", "contextId": cx, "sessionId": "other"}
    )
    assert response.status_code == 422
    response = await wb.client.post(CODE, json={"language": "python", "code": "1", "contextId": "cx_nope"})
    assert response.status_code == 422
    unknown = "cx_01JD0000000000000000000000"
    response = await wb.client.post(CODE, json={"language": "python", "code": "1", "contextId": unknown})
    assert response.status_code == 404
    for method in ("GET", "DELETE"):
        for name in (unknown, "nope"):
            assert (await wb.client.request(method, f"/v1/contexts/{name}")).status_code == 404
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    assert (await context_of(wb, cx))["executions"] == 0


async def test_contexts_are_per_principal(principals: Principals) -> None:  # noqa: F811
    """Promise 9: another principal's context is 404 on every route and for a start."""
    alice, bob = principals["alice"], principals["bob"]
    response = await alice.post("/v1/contexts", json={"language": "python"})
    assert response.status_code == 201, response.text
    cx = response.json()["contextId"]
    assert (await bob.get(f"/v1/contexts/{cx}")).status_code == 404
    assert (await bob.delete(f"/v1/contexts/{cx}")).status_code == 404
    assert (await bob.get("/v1/contexts")).json() == {"contexts": []}
    response = await bob.post(CODE, json={"language": "python", "code": "1", "contextId": cx})
    assert response.status_code == 404, response.text
    assert [c["contextId"] for c in (await alice.get("/v1/contexts")).json()["contexts"]] == [cx]
    # Its workspace is alice's.
    response = await alice.post(
        CODE,
        json={
            "language": "python",
            "code": "import os\nos.getcwd()",
            "contextId": cx,
            "waitTimeoutMs": 60_000,
        },
    )
    cwd = response.json()["result"]["text/plain"]
    assert cwd == repr(str(principals.wb.settings.layout.workspace("alice", "default")))
    assert (await principals["reader"].post("/v1/contexts", json={"language": "python"})).status_code == 403
    # It holds alice's session, not bob's of the same name.
    assert (await bob.put("/v1/sessions/default/files/b.txt", content=b"b")).status_code == 201
    assert (await bob.delete("/v1/sessions/default")).status_code == 204
    assert (await alice.delete("/v1/sessions/default")).status_code == 409
    assert (await alice.delete(f"/v1/contexts/{cx}")).status_code == 204


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_a_context_in_the_sandbox_image(wb: DaemonHandle) -> None:
    """The `sandbox` image: the interpreter runs in bubblewrap like any of its executions (its
    workspace the one writable host path, the data dir hidden), and keeps its names."""
    images = (await wb.client.get("/v1/images")).json()["images"]
    sandbox = next(i for i in images if i["name"] == "sandbox")
    if not sandbox["available"]:
        pytest.skip(f"the sandbox image is unavailable here: {sandbox.get('unavailableReason')}")
    cx = (await new_context(wb, image="sandbox"))["contextId"]
    data_dir = str(wb.data_dir)
    code = (
        "import os\n"
        f"hidden = os.listdir({data_dir!r})\n"
        "open('made-here', 'w').write('x')\n"
        "try:\n    open('/etc/workbench-probe', 'w')\nexcept OSError as e:\n    ro = type(e).__name__\n"
        "(hidden, ro, os.getpid(), os.getuid())"
    )
    record = await run_in(wb, cx, code)
    assert record["status"] == "completed", record
    assert record["image"] == "sandbox"
    hidden, ro, pid, uid = eval(record["result"]["text/plain"])
    assert uid == (65534 if os.geteuid() == 0 else os.geteuid())  # the sandbox's user under root
    # Only the mount points of what is bound back in (the workspace, the context's channel).
    assert set(hidden) <= {"workspaces", "contexts"}, hidden
    assert ro in ("OSError", "PermissionError") and pid < 100
    workspace = Path(wb.settings.layout.workspace("admin", "default"))
    assert (workspace / "made-here").read_text() == "x"
    assert (await run_in(wb, cx, "len(hidden)"))["result"] == {"text/plain": str(len(hidden))}


async def test_output_past_the_budget_is_kept_as_an_artifact(make_daemon: Any) -> None:
    """Promise 1 in a context: every byte a cell writes is in its events or its artifacts."""
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=10_000)
    cx = (await new_context(wb))["contextId"]
    record = await run_in(wb, cx, "import sys\nsys.stdout.write('0123456789' * 5000)\nNone")
    assert record["status"] == "completed", record
    assert record["output"]["truncated"] is True and record["output"]["stdoutBytes"] == 50_000
    body = await wb.client.get(f"/v1/executions/{record['executionId']}/artifacts/stdout")
    assert body.content == b"0123456789" * 5000
    # The next cell's output is its own, from its first byte.
    after = await run_in(wb, cx, "print('small')")
    assert await streams(wb, after["executionId"]) == {"stdout": "small\n", "stderr": ""}
    assert after["artifacts"] == []


async def test_a_deadline_interrupts_the_cell(wb: DaemonHandle) -> None:
    """`timeoutMs` of a run in a context: `timed_out`, and the context lives on."""
    cx = (await new_context(wb))["contextId"]
    record = await run_in(wb, cx, "import time\ntime.sleep(600)", timeoutMs=300)
    assert record["status"] == "timed_out" and record["error"]["code"] == "timeout", record
    assert (await run_in(wb, cx, "'alive'"))["result"] == {"text/plain": "'alive'"}
