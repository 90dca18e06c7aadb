"""What a python cell may do to its interpreter without harming the context: an exception that
cannot be shown, fds 0, 1 and 2 closed or replaced, an interrupt caught."""

from __future__ import annotations

from tests.conftest import DaemonHandle
from tests.e2e.test_contexts import context_of, new_context, run_in

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
