"""`wb.create_context("python")`, `ctx.run(code)`, `ctx.close()`: both clients."""

from __future__ import annotations

import inspect

import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, NotFound
from workbench.client.contexts import AsyncCodeContext, CodeContext


def test_the_two_handles_are_alike() -> None:
    for name in ("run", "refresh", "close"):
        sync, aio = getattr(CodeContext, name), getattr(AsyncCodeContext, name)
        assert inspect.signature(sync).parameters == inspect.signature(aio).parameters
        assert inspect.iscoroutinefunction(aio) and not inspect.iscoroutinefunction(sync)
    for name in ("create_context", "contexts"):
        sync, aio = getattr(Client, name), getattr(AsyncClient, name)
        assert inspect.signature(sync).parameters == inspect.signature(aio).parameters


def blocking(url: str) -> None:
    with Client(url, TOKEN) as wb:
        ctx = wb.create_context("python")
        assert ctx.record.status == "ready" and ctx.id.startswith("cx_")
        assert ctx.run("n = 6").result is None
        seen: list[str] = []
        record = ctx.run("print('hi')\nn * 7", on_stdout=seen.append)
        assert record.status == "completed" and record.result == {"text/plain": "42"}, record
        assert "".join(seen) == "hi\n"
        failed = ctx.run("n / 0")
        assert failed.status == "failed" and failed.error is not None
        assert failed.error.code == "exception" and "ZeroDivisionError" in (failed.error.traceback or "")
        assert ctx.refresh().executions == 3
        assert [c.id for c in wb.contexts()] == [ctx.id]
        ctx.close()
        assert wb.contexts() == []
        try:
            ctx.refresh()
        except NotFound:
            pass
        else:
            raise AssertionError("a closed context is gone")
        with wb.create_context() as other:
            assert other.run("1 + 1").result == {"text/plain": "2"}
        assert wb.contexts() == []


async def test_the_blocking_context_handle(wb: DaemonHandle) -> None:
    with ceilings.within(60, "the blocking context calls"):
        await trio.to_thread.run_sync(blocking, wb.url)


async def test_the_async_context_handle(wb: DaemonHandle) -> None:
    async with AsyncClient(wb.url, TOKEN) as client:
        ctx = await client.create_context("python", idle_timeout=600)
        assert ctx.record.idle_timeout_ms == 600_000
        await ctx.run("import math")
        record = await ctx.run("math.factorial(5)")
        assert record.result == {"text/plain": "120"}
        started = await ctx.run("import time; time.sleep(600)", background=True)
        assert started.context_id == ctx.id
        await client.cancel(started)
        assert (await client.wait(started)).status == "cancelled"
        assert (await ctx.run("math.pi > 3")).result == {"text/plain": "True"}
        assert [c.id for c in await client.contexts()] == [ctx.id]
        async with ctx:
            pass
        assert await client.contexts() == []
