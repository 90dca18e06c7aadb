"""What a python cell may do to its interpreter without harming the context: an exception that
cannot be shown, fds 0, 1 and 2 closed or replaced, an interrupt caught."""

from __future__ import annotations

import trio

from tests.conftest import DaemonHandle
from tests.e2e.test_code import streams
from tests.e2e.test_contexts import context_of, new_context, printed, run_in, start_in

UNSHOWABLE = 'class E(Exception):\n    def __str__(self):\n        raise RuntimeError("no str")\n'


async def test_an_exception_that_cannot_be_shown_fails_only_its_cell(wb: DaemonHandle) -> None:
    """An exception whose `str()` raises (raised by the cell, or by the repr of its final
    expression): `failed` with error.code `exception` and a stand-in text, and the interpreter
    lives on with its names."""
    cx = (await new_context(wb))["contextId"]
    await run_in(wb, cx, "kept = 1\n" + UNSHOWABLE)
    record = await run_in(wb, cx, "raise E()")
    assert record["status"] == "failed" and record["error"]["code"] == "exception", record
    assert record["error"]["message"] == "E: <exception str() failed>"
    assert "raise E()" in record["error"]["traceback"]
    shown = await run_in(wb, cx, "class R:\n    def __repr__(self):\n        raise E()\nR()")
    assert shown["status"] == "failed" and shown["error"]["code"] == "exception", shown
    assert shown["error"]["message"] == "E: <exception str() failed>"
    # One whose type's name cannot be read either, and a traceback that cannot be formatted.
    odd = await run_in(
        wb,
        cx,
        "class M(type):\n    def __getattribute__(c, n): raise E()\n"
        "class F(Exception, metaclass=M): pass\nraise F()",
    )
    assert odd["status"] == "failed" and odd["error"]["code"] == "exception", odd
    assert (await context_of(wb, cx))["status"] == "ready"
    assert (await run_in(wb, cx, "kept"))["result"] == {"text/plain": "1"}


async def test_a_cell_that_closes_or_replaces_its_fds_ends_normally(wb: DaemonHandle) -> None:
    """fds 0, 1 and 2 are the cell's own: closed or replaced by it, the cell ends as it ended, and
    the next one has its own output and the interpreter's stdin again."""
    cx = (await new_context(wb))["contextId"]
    await run_in(wb, cx, "import os, sys\nstdin = os.fstat(0)")
    for code in (
        "os.close(1)",
        "os.close(2)",
        "os.close(0)",
        "os.close(0); os.close(1); os.close(2)",
        "os.dup2(os.open(os.devnull, os.O_WRONLY), 1)",
        "os.dup2(os.open(os.devnull, os.O_WRONLY), 2)",
        "os.dup2(os.open(os.devnull, os.O_RDONLY), 0)",
    ):
        record = await run_in(wb, cx, f"print('before', flush=True)\n{code}\n'done'")
        assert record["status"] == "completed", (code, record)
        assert record["result"] == {"text/plain": "'done'"}, (code, record)
        assert (await streams(wb, record["executionId"]))["stdout"] == "before\n", code
        after = await run_in(
            wb, cx, "print('out', flush=True)\nprint('err', file=sys.stderr)\nos.fstat(0) == stdin"
        )
        assert after["result"] == {"text/plain": "True"}, (code, after)
        assert await streams(wb, after["executionId"]) == {"stdout": "out\n", "stderr": "err\n"}, code
    # Output to a closed fd 1 is the cell's own error.
    record = await run_in(wb, cx, "os.close(1)\nprint('lost', flush=True)")
    assert record["status"] == "failed" and record["error"]["code"] == "exception", record
    assert record["error"]["message"].startswith("OSError"), record
    assert (await context_of(wb, cx))["status"] == "ready"


CATCHES = "import time\ntry:\n    time.sleep(10)\nexcept KeyboardInterrupt:\n    print('caught')\n'after'"


async def test_a_cell_that_catches_the_interrupt_still_ends_cancelled(wb: DaemonHandle) -> None:
    """A cancel (or the deadline) that reached a cell ends it `cancelled` (`timed_out`) even when
    the cell caught the KeyboardInterrupt and went on to its end: with its output, without a
    `result` (the value is `_` in the interpreter)."""
    cx = (await new_context(wb))["contextId"]
    started = await start_in(wb, cx, "print('sleeping', flush=True)\n" + CATCHES)
    await printed(wb, started["executionId"], "sleeping")
    response = await wb.client.post(
        f"/v1/executions/{started['executionId']}/cancel", json={"reason": "enough"}
    )
    assert response.status_code == 202, response.text
    record = await wb.wait(started["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "enough", record
    assert record["result"] is None and record["error"] is None, record
    assert await streams(wb, started["executionId"]) == {"stdout": "sleeping\ncaught\n", "stderr": ""}
    timed = await run_in(wb, cx, CATCHES, timeoutMs=800)
    assert timed["status"] == "timed_out" and timed["error"]["code"] == "timeout", timed
    assert timed["result"] is None, timed
    assert await streams(wb, timed["executionId"]) == {"stdout": "caught\n", "stderr": ""}
    assert (await run_in(wb, cx, "_"))["result"] == {"text/plain": "'after'"}
    assert (await context_of(wb, cx))["status"] == "ready"


async def test_a_cell_reports_what_it_used(wb: DaemonHandle) -> None:
    """`usage` of a cell: the CPU time the interpreter and the children it waited for spent while
    it ran, and the most resident memory the interpreter held then (its high-water mark, from the
    cell's start), or a child it waited for when that is more."""
    cx = (await new_context(wb))["contextId"]
    # Busy for 0.3 s of its own CPU time, however fast the machine (a fixed sum took 198 ms once).
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: sum(range(10**5))"
    busy = await run_in(wb, cx, "import sys, subprocess\n" + spin + "\nn = 1")
    usage = busy["usage"]
    assert usage["cpuUserMs"] >= 200 and usage["cpuSystemMs"] >= 0, usage
    assert usage["peakMemoryBytes"] > 0, usage
    idle = (await run_in(wb, cx, "n"))["usage"]
    assert idle["cpuUserMs"] < 100, idle
    # A child's CPU time counts, once the cell waited for it.
    child = await run_in(wb, cx, f"subprocess.run([sys.executable, '-c', {spin!r}])\nNone")
    assert child["usage"]["cpuUserMs"] >= 200, child["usage"]
    big = (await run_in(wb, cx, "x = bytearray(300 * 2**20)\nx[::4096] = b'1' * len(x[::4096])"))["usage"]
    assert big["peakMemoryBytes"] >= 300 * 2**20, big
    # The high-water mark is the cell's: once that memory is freed, the next cell's is less.
    after = (await run_in(wb, cx, "del x\nimport gc; gc.collect()\nNone"))["usage"]
    small = (await run_in(wb, cx, "1"))["usage"]
    assert small["peakMemoryBytes"] < 300 * 2**20, (after, small)


async def test_a_cell_that_does_not_compile_shows_only_its_own_error(wb: DaemonHandle) -> None:
    """A SyntaxError of the cell: its traceback is the cell's line and caret, as a notebook shows
    it, without the compiler's frames; one raised by code the cell runs keeps the cell's frame."""
    cx = (await new_context(wb))["contextId"]
    syntax = (await run_in(wb, cx, "x = 1\ndef (:"))["error"]
    assert syntax["code"] == "exception" and syntax["message"].startswith("SyntaxError"), syntax
    assert syntax["traceback"].startswith('  File "<cell 1>", line 2\n    def (:\n'), syntax
    assert "ast.py" not in syntax["traceback"] and "Traceback" not in syntax["traceback"], syntax
    nested = (await run_in(wb, cx, "eval('(')"))["error"]
    assert nested["traceback"].startswith("Traceback (most recent call last):\n"), nested
    assert "line 1, in <module>\n    eval('(')" in nested["traceback"], nested


async def test_text_that_is_not_unicode_comes_back_escaped(wb: DaemonHandle) -> None:
    """A lone surrogate in a cell's value, in an exception's message or in its traceback (a file
    name of undecodable bytes put in an f-string): the record holds it escaped (`\\udcff`), as
    Python writes it to a stream, and stays readable; the cell ends as it would without it."""
    cx = (await new_context(wb))["contextId"]
    value = await run_in(wb, cx, "class A:\n    def __repr__(self):\n        return 'a' + chr(0xD800)\nA()")
    assert value["status"] == "completed", value
    assert value["result"] == {"text/plain": "a\\ud800"}, value
    raised = await run_in(wb, cx, "raise ValueError('bad ' + chr(0xDCFF))")
    assert raised["status"] == "failed" and raised["error"]["code"] == "exception", raised
    assert raised["error"]["message"] == "ValueError: bad \\udcff", raised
    assert "bad \\udcff" in raised["error"]["traceback"], raised
    for record in (value, raised):
        again = await wb.client.get(f"/v1/executions/{record['executionId']}")
        assert again.status_code == 200 and again.json()["result"] == record["result"], again.text
    assert (await wb.client.get("/v1/executions?limit=5")).status_code == 200
    assert (await context_of(wb, cx))["status"] == "ready"


async def test_a_running_cell_refuses_a_signal_and_says_to_cancel_it(wb: DaemonHandle) -> None:
    """A cell's process is its context's interpreter: a signal for the cell is `409`, saying why
    and what interrupts a cell instead (a cancel), and nothing is sent: the cell runs on."""
    cx = (await new_context(wb))["contextId"]
    started = await start_in(
        wb,
        cx,
        "import time\ntry:\n    print('up', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n    time.sleep(60)",
    )
    execution_id = started["executionId"]
    await printed(wb, execution_id, "up")
    refused = await wb.client.post(f"/v1/executions/{execution_id}/signal", json={"signal": "INT"})
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "conflict" and "code context" in error["message"], error
    assert "cancel" in error["message"] and "is running: only a running" not in error["message"], error
    assert error["details"] == {"contextId": cx}, error
    await trio.sleep(0.3)  # an interrupt sent would have been printed by now
    record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
    assert record["status"] == "running" and record["preview"]["stdout"] == "up\n", record
    await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    assert (await wb.wait(execution_id))["status"] == "cancelled"


async def test_a_process_forked_by_a_cell_ends_with_the_cell_and_never_answers_for_it(
    wb: DaemonHandle,
) -> None:
    """`os.fork()` in a cell: the cell's value is the parent's (the child's pid), and the child,
    a copy of the interpreter, exits where the cell ends instead of answering for it and living on
    as a second interpreter."""
    cx = (await new_context(wb))["contextId"]
    for _ in range(3):
        record = await run_in(wb, cx, "import os\npid = os.fork()\npid")
        assert record["status"] == "completed", record
        assert int(record["result"]["text/plain"]) > 0, record
        ended = await run_in(wb, cx, "os.waitpid(pid, 0)[1]")
        assert ended["result"] == {"text/plain": "0"}, ended
    # The child's end is a forked multiprocessing child's: SystemExit's code, or 1 with the
    # traceback of an uncaught exception on stderr.
    for code, status in (("sys.exit(3)", 3 << 8), ("raise ValueError('in the child')", 1 << 8)):
        cell = f"import sys\npid = os.fork()\nif pid == 0:\n    {code}\nos.waitpid(pid, 0)[1]"
        record = await run_in(wb, cx, cell)
        assert record["result"] == {"text/plain": str(status)}, (code, record)
    assert "ValueError: in the child" in (await streams(wb, record["executionId"]))["stderr"]
    assert (await run_in(wb, cx, "n = 5\nn * 2"))["result"] == {"text/plain": "10"}
