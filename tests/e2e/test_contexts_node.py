"""Node code contexts end to end (the twin of test_contexts.py where node is installed): names
persist between cells (`let`, `const`, functions, top-level `await`), the completion value is
the result as node's REPL shows it, a thrown error fails the execution with its stack, and a
cancel interrupts the cell while the context lives on."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests import procs
from tests.conftest import DaemonHandle
from tests.e2e.test_code import streams
from tests.e2e.test_contexts import context_of, printed, reaches

CODE = "/v1/executions/workbench_code"

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here")


async def new_node_context(wb: DaemonHandle, **body: Any) -> str:
    response = await wb.client.post("/v1/contexts", json={"language": "node", **body})
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "ready", response.text
    context_id: str = response.json()["contextId"]
    return context_id


async def run_in(wb: DaemonHandle, context_id: str, code: str, **body: Any) -> dict[str, Any]:
    response = await wb.client.post(
        CODE,
        json={"language": "node", "code": code, "contextId": context_id, "waitTimeoutMs": 60_000, **body},
    )
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


async def start_in(wb: DaemonHandle, context_id: str, code: str) -> str:
    body = {"language": "node", "code": code, "contextId": context_id, "background": True}
    response = await wb.client.post(CODE, json=body)
    assert response.status_code == 202, response.text
    execution_id: str = response.json()["executionId"]
    return execution_id


@needs_node
async def test_names_persist_and_the_completion_value_is_the_result(wb: DaemonHandle) -> None:
    cx = await new_node_context(wb)
    code = "let x = 20\nconst y = 2\nfunction f(n) { return n * y }\nconsole.log('set', x)"
    first = await run_in(wb, cx, code)
    assert first["status"] == "completed" and first["exitCode"] == 0, first
    assert first["result"] is None  # a declaration's completion value is undefined: no result
    assert await streams(wb, first["executionId"]) == {"stdout": "set 20\n", "stderr": ""}
    second = await run_in(wb, cx, "console.error('err');\n({ sum: f(x), list: [1, 'two'] })")
    assert second["result"] == {"text/plain": "{ sum: 40, list: [ 1, 'two' ] }"}, second
    assert await streams(wb, second["executionId"]) == {"stdout": "", "stderr": "err\n"}
    # Top-level await, and what it declares persists too.
    awaited = await run_in(wb, cx, "const z = await new Promise((r) => setTimeout(() => r(x + 1), 10))\nz")
    assert awaited["result"] == {"text/plain": "21"}, awaited
    assert (await run_in(wb, cx, "[z, typeof require('node:os').platform, 'str']"))["result"] == {
        "text/plain": "[ 21, 'function', 'str' ]"
    }
    assert (await run_in(wb, cx, "process.env.WORKBENCH_CONTEXT_ID"))["result"] == {"text/plain": repr(cx)}
    loader = await run_in(wb, cx, "Boolean(require('node:vm').constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER)")
    if loader["result"] == {"text/plain": "true"}:  # node 20.8 and later: import() in a cell
        imported = await run_in(wb, cx, "import('node:path').then((m) => m.basename('/a/b'))")
        assert imported["status"] == "completed", imported
        assert (await run_in(wb, cx, "await _"))["result"] == {"text/plain": "'b'"}
        assert (await streams(wb, imported["executionId"]))["stderr"] == ""  # its warning is not here
    record = await context_of(wb, cx)
    assert record["status"] == "ready" and record["language"] == "node"


@needs_node
async def test_a_thrown_error_fails_the_execution_with_its_stack(wb: DaemonHandle) -> None:
    cx = await new_node_context(wb)
    await run_in(wb, cx, "function g(o) { return o.a.b }")
    record = await run_in(wb, cx, "console.log('before')\ng({})")
    assert record["status"] == "failed" and record["exitCode"] == 1, record
    error = record["error"]
    assert error["code"] == "exception", error
    assert error["message"] == "TypeError: Cannot read properties of undefined (reading 'b')"
    assert "at g (<cell 1>" in error["traceback"] and "driver.js" not in error["traceback"]
    assert "node:vm" not in error["traceback"]
    assert await streams(wb, record["executionId"]) == {"stdout": "before\n", "stderr": ""}
    syntax = await run_in(wb, cx, "function (")
    assert syntax["error"]["code"] == "exception" and syntax["error"]["message"].startswith("SyntaxError")
    rejected = await run_in(wb, cx, "await Promise.reject(new RangeError('no'))")
    assert rejected["error"]["message"] == "RangeError: no", rejected
    assert (await run_in(wb, cx, "throw 5"))["error"]["message"] == "Uncaught 5"
    assert (await run_in(wb, cx, "g({ a: { b: 'alive' } })"))["result"] == {"text/plain": "'alive'"}


@needs_node
async def test_an_error_that_cannot_be_shown_fails_only_its_cell(wb: DaemonHandle) -> None:
    """A thrown value whose name, message, stack, class or inspection throws, thrown or awaited
    or the cell's value, and a thrown falsy value: `failed` with error.code `exception`, and the
    context lives on."""
    cx = await new_node_context(wb)
    await run_in(wb, cx, "var kept = 1")
    cells = [
        "throw { get name() { throw new Error('no name') }, message: 'm' }",
        "class E extends Error { get message() { throw new Error('no message') } }\nthrow new E()",
        "const e = new Error('x')\nObject.defineProperty(e, 'stack', { get() { throw 1 } })\nthrow e",
        "throw new Proxy({}, { getPrototypeOf() { throw 1 }, get() { throw 2 }, has() { throw 3 } })",
        "throw { toString() { throw 1 }, [Symbol.for('nodejs.util.inspect.custom')]() { throw 2 } }",
        "await Promise.reject({ get name() { throw 1 }, message: 'm' })",
        "({ [Symbol.for('nodejs.util.inspect.custom')]() { throw { get name() { throw 1 } } } })",
        "throw null",
        "throw 0",
    ]
    for code in cells:
        record = await run_in(wb, cx, code, timeoutMs=10_000)
        assert record["status"] == "failed" and record["error"]["code"] == "exception", (code, record)
        assert isinstance(record["error"]["message"], str) and record["error"]["traceback"], record
    assert (await run_in(wb, cx, "kept"))["result"] == {"text/plain": "1"}
    assert (await context_of(wb, cx))["status"] == "ready"


@needs_node
async def test_text_that_is_not_unicode_comes_back_escaped(wb: DaemonHandle) -> None:
    """A string cut inside a surrogate pair (`.slice` through an emoji), as a cell's value or in a
    thrown error: the record holds the lone half escaped, and stays readable."""
    cx = await new_node_context(wb)
    value = await run_in(wb, cx, "({ [Symbol.for('nodejs.util.inspect.custom')]() { return 'x\\uD800' } })")
    assert value["status"] == "completed" and value["result"] == {"text/plain": "x\\ud800"}, value
    thrown = await run_in(wb, cx, "throw new Error('cut ' + '\\u00e9\\ud83d\\ude00'.slice(0, 2))")
    assert thrown["status"] == "failed" and thrown["error"]["code"] == "exception", thrown
    assert "cut \u00e9\\ud83d" in thrown["error"]["message"], thrown
    again = await wb.client.get(f"/v1/executions/{value['executionId']}")
    assert again.status_code == 200, again.text


@needs_node
async def test_cancel_interrupts_and_the_context_lives_on(wb: DaemonHandle) -> None:
    cx = await new_node_context(wb)
    await run_in(wb, cx, "var kept = 'yes'")
    busy = await start_in(wb, cx, "console.log('spinning')\nwhile (true) {}")
    queued = await start_in(wb, cx, "kept + '!'")
    await reaches(wb, f"/v1/contexts/{cx}", "busy")
    await reaches(wb, f"/v1/executions/{busy}", "running")
    assert (await wb.client.post(f"/v1/executions/{busy}/cancel", json={})).status_code == 202
    assert (await wb.wait(busy))["status"] == "cancelled"
    after = await wb.wait(queued)
    assert after["status"] == "completed" and after["result"] == {"text/plain": "'yes!'"}, after
    # A cell awaiting a promise that never settles is interrupted too.
    waiting = await start_in(wb, cx, "await new Promise(() => {})")
    await reaches(wb, f"/v1/executions/{waiting}", "running")
    await wb.client.post(f"/v1/executions/{waiting}/cancel", json={})
    assert (await wb.wait(waiting))["status"] == "cancelled"
    assert (await run_in(wb, cx, "kept"))["result"] == {"text/plain": "'yes'"}
    # A deadline interrupts like a cancel.
    late = await run_in(wb, cx, "while (true) {}", timeoutMs=300)
    assert late["status"] == "timed_out" and late["error"]["code"] == "timeout", late
    assert (await context_of(wb, cx))["status"] == "ready"


@needs_node
async def test_a_cell_that_does_not_stop_kills_its_context(wb: DaemonHandle) -> None:
    """A cell that takes SIGINT for itself is not interrupted: after 2 s its context is killed
    (its whole tree), `dead`, and what waited in it fails `context_dead`."""
    cx = await new_node_context(wb)
    tree = procs.processes_mentioning(cx)
    stubborn = await start_in(wb, cx, "process.on('SIGINT', () => {})\nconsole.log('armed')\nwhile (true) {}")
    queued = await start_in(wb, cx, "1")
    # Interrupted once it takes SIGINT for itself (an interrupt before that line stops it).
    await printed(wb, stubborn, "armed")
    await wb.client.post(f"/v1/executions/{stubborn}/cancel", json={})
    assert (await wb.wait(stubborn))["status"] == "cancelled"
    failed = await wb.wait(queued)
    assert failed["status"] == "failed" and failed["error"]["code"] == "context_dead", failed
    assert (await context_of(wb, cx))["status"] == "dead"
    assert not [p for p in tree if procs.alive(p)]


async def test_node_where_the_image_has_none_is_unsupported(make_daemon: Any, tmp_path: Path) -> None:
    """A context for a language its image cannot run: `422 unsupported_language`, nothing made."""
    root = Path(__file__).parents[2] / "images"
    images = tmp_path / "images"
    images.mkdir()
    host = (root / "host.toml").read_text()
    (images / "host.toml").write_text(host)
    assert 'command = ["node", "{file}"]' in host
    (images / "nonode.toml").write_text(host.replace('["node", "{file}"]', '["no-such-node-here", "{file}"]'))
    wb: DaemonHandle = await make_daemon(images_dir=images)
    response = await wb.client.post("/v1/contexts", json={"language": "node", "image": "nonode"})
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "unsupported_language"
    assert (await wb.client.get("/v1/contexts")).json() == {"contexts": []}
    assert not (wb.data_dir / "contexts").exists() or not list((wb.data_dir / "contexts").iterdir())


@needs_node
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_a_node_context_in_the_sandbox_image(wb: DaemonHandle) -> None:
    """The `sandbox` image has the host's node (its root is bound read-only): the interpreter
    runs in bubblewrap, its output by hard link through the channel directory works there."""
    images = (await wb.client.get("/v1/images")).json()["images"]
    sandbox = next(i for i in images if i["name"] == "sandbox")
    if not sandbox["available"]:
        pytest.skip(f"the sandbox image is unavailable here: {sandbox.get('unavailableReason')}")
    assert "node" in sandbox["languages"], sandbox
    cx = await new_node_context(wb, image="sandbox")
    listing = f"require('fs').readdirSync({str(wb.data_dir)!r})"
    code = f"var seen = {listing}\nconsole.log('in', process.pid)"
    record = await run_in(wb, cx, code)
    assert record["status"] == "completed" and record["image"] == "sandbox", record
    out = (await streams(wb, record["executionId"]))["stdout"]
    assert out.startswith("in ") and int(out.split()[1]) < 100, out
    # Only the mount points of what is bound back in (the workspace, the context's channel).
    check = "seen.every((name) => ['workspaces', 'contexts'].includes(name))"
    assert (await run_in(wb, cx, check))["result"] == {"text/plain": "true"}


@needs_node
async def test_a_node_cell_reports_what_it_used(wb: DaemonHandle) -> None:
    """`usage` of a node cell: the interpreter's CPU time while it ran (not its children's: node
    cannot tell them) and its peak resident memory meanwhile."""
    cx = await new_node_context(wb)
    # Busy for 0.3 s of its own CPU time in user space, however fast the machine.
    spin = "let s = 0\nconst t = process.cpuUsage()\n"
    spin += "while (process.cpuUsage(t).user < 3e5) for (let i = 0; i < 1e5; i++) s += i\ns > 0"
    busy = (await run_in(wb, cx, spin))["usage"]
    assert busy["cpuUserMs"] >= 200 and busy["cpuSystemMs"] >= 0 and busy["peakMemoryBytes"] > 0, busy
    big = (await run_in(wb, cx, "let b = Buffer.alloc(300 * 2 ** 20, 1)\nb.length"))["usage"]
    assert big["peakMemoryBytes"] >= 300 * 2**20, big
    idle = (await run_in(wb, cx, "b = null\n1"))["usage"]
    assert idle["cpuUserMs"] < 100, idle
