"""The Python client's twins, `Client` and `AsyncClient`, against a real daemon: on trio and on asyncio."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from workbench import (
    AsyncClient,
    Client,
    Event,
    Execution,
    ExecutionStatus,
    InvalidRequest,
    LiveEvent,
    NotFound,
    UnsupportedLanguage,
    WorkbenchError,
)

MISSING = "ex_01JD0000000000000000000000"


def output_of(events: list[Event | LiveEvent], stream: str = "stdout") -> str:
    return "".join(e.output_delta or "" for e in events if e.event_type == "output" and e.stream == stream)


def check_journal(events: list[Event | LiveEvent]) -> None:
    sequences = [e.sequence for e in events if isinstance(e, Event)]
    assert sequences == list(range(1, len(sequences) + 1))
    last = events[-1]
    assert isinstance(last, Event) and last.event_type == "status" and last.status.terminal


def scenario(url: str) -> None:
    """Every method of `Client`, blocking (run in a worker thread while the daemon serves)."""
    with Client(url, TOKEN) as wb:
        assert wb.health().status == "ok"
        failed = wb.run_bash("echo hi; echo e >&2; exit 3")
        assert isinstance(failed, Execution) and failed.status is ExecutionStatus.FAILED
        assert failed.exit_code == 3 and failed.output.stdout_bytes == 3
        run = wb.run_bash(
            "sleep 0.2; echo done $A", background=True, timeout=60, env={"A": "1"}, metadata={"m": 1}
        )
        assert run.status in {ExecutionStatus.QUEUED, ExecutionStatus.RUNNING} and run.metadata == {"m": 1}
        events = list(wb.events(run))
        check_journal(events)
        assert output_of(events) == "done 1\n"
        assert wb.wait(run, timeout=30).status is ExecutionStatus.COMPLETED
        assert list(wb.events(run.execution_id, follow=False)) == events
        assert next(e.sequence for e in wb.events(run, after=2, follow=False)) == 3
        code = wb.run_code("python", "print(1 + 1)")
        assert code.status is ExecutionStatus.COMPLETED and output_of(list(wb.events(code))) == "2\n"
        binary = wb.run_bash("printf 'a\\xffb'")
        assert [a.name for a in wb.artifacts(binary)] == ["stdout"]
        assert (
            wb.artifact(binary, "stdout") == b"a\xffb" and wb.artifact(binary, "stdout", start=1) == b"\xffb"
        )
        assert wb.artifact(binary, "stdout", 0, 1) == b"a"
        slow = wb.run_bash("sleep 30", background=True)
        assert not wb.wait(slow, timeout=0.1).terminal
        assert wb.detach(slow).detached is True
        cancel = wb.cancel(slow, reason="user asked")
        assert cancel.cancelled is True
        final = wb.wait(slow)
        assert final.status is ExecutionStatus.CANCELLED and final.cancel_reason == "user asked"
        assert wb.cancel(slow).cancelled is False
        assert wb.detach(failed).detached is False
        first = wb.run_bash("echo once", background=True, idempotency_key="key-1")
        assert (
            wb.run_bash("echo once", background=True, idempotency_key="key-1").execution_id
            == first.execution_id
        )
        ids = [e.execution_id for e in wb.list()]
        assert ids[:2] == [first.execution_id, slow.execution_id] and failed.execution_id in ids
        assert [e.execution_id for e in wb.list(status="failed")] == [failed.execution_id]
        assert len(wb.list(limit=2)) == 2 and wb.list_page(limit=1).next_cursor is not None
        assert "host" in {i.name for i in wb.images()}
        wb.delete(binary)
        with pytest.raises(NotFound) as missing:
            wb.get(binary)
        assert isinstance(missing.value, WorkbenchError) and missing.value.code == "not_found"
        with pytest.raises(InvalidRequest):
            wb.run_bash("true", cwd="relative")
        with pytest.raises(UnsupportedLanguage):
            wb.run_code("cobol", "x")
        with pytest.raises(NotFound):
            list(wb.events(MISSING))


async def ascenario(url: str) -> None:
    """The same with `AsyncClient`: it must run on trio and on asyncio."""
    async with AsyncClient(url, TOKEN) as wb:
        assert (await wb.health()).status == "ok"
        failed = await wb.run_bash("echo hi; echo e >&2; exit 3")
        assert failed.status is ExecutionStatus.FAILED and failed.exit_code == 3
        run = await wb.run_bash("sleep 0.2; echo done $A", background=True, timeout=60, env={"A": "1"})
        events = [e async for e in wb.events(run)]
        check_journal(events)
        assert output_of(events) == "done 1\n"
        assert (await wb.wait(run, timeout=30)).status is ExecutionStatus.COMPLETED
        assert [e async for e in wb.events(run, follow=False)] == events
        code = await wb.run_code("python", "print(1 + 1)")
        assert output_of([e async for e in wb.events(code)]) == "2\n"
        binary = await wb.run_bash("printf 'a\\xffb'")
        assert [a.name for a in await wb.artifacts(binary)] == ["stdout"]
        assert await wb.artifact(binary, "stdout", start=1) == b"\xffb"
        slow = await wb.run_bash("sleep 30", background=True)
        assert not (await wb.wait(slow, timeout=0.1)).terminal
        assert (await wb.detach(slow)).detached is True
        assert (await wb.cancel(slow, reason="user asked")).cancelled is True
        assert (await wb.wait(slow)).status is ExecutionStatus.CANCELLED
        assert (await wb.list(status="failed"))[0].execution_id == failed.execution_id
        assert (await wb.list_page(limit=1)).executions
        assert "host" in {i.name for i in await wb.images()}
        await wb.delete(binary)
        with pytest.raises(NotFound):
            await wb.get(binary)
        with pytest.raises(InvalidRequest):
            await wb.run_bash("true", cwd="relative")
        with pytest.raises(NotFound):
            async for _ in wb.events(MISSING):
                pass


async def test_client_blocking(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(scenario, wb.url)


async def test_async_client_on_trio(wb: DaemonHandle) -> None:
    await ascenario(wb.url)


async def test_async_client_on_asyncio(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(lambda: asyncio.run(ascenario(wb.url)))


BIG = "import sys\nfor i in range(70000):\n    sys.stdout.write('%07d ' % i + 'x' * 91 + '\\n')\n"


async def test_events_past_the_budget_come_as_flagged_live_events(wb: DaemonHandle, tmp_path: Path) -> None:
    """Past the output budget, display output comes flagged (`sequence` None) and the journal stays whole."""
    script = tmp_path / "big.py"
    script.write_text(BIG)
    expected = "".join(f"{i:07d} " + "x" * 91 + "\n" for i in range(70000))
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await client.run_bash(f"{sys.executable} {script}", background=True)
        with ceilings.within(60, "the followed events of the big run to end"):
            events = [e async for e in client.events(run)]
        check_journal([e for e in events if isinstance(e, Event)])
        journal = [e for e in events if isinstance(e, Event)]
        live = [e for e in events if isinstance(e, LiveEvent)]
        assert [e.event_type for e in journal].count("output_truncated") == 1
        assert live and all(e.sequence is None for e in live)
        if not any(e.event_type == "gap" for e in live):
            assert output_of(events) == expected
        quiet = [e async for e in client.events(run, live=False)]
        assert quiet == journal
        assert await client.artifact(run, "stdout") == expected.encode()


async def test_exits_feed_and_ack(wb: DaemonHandle) -> None:
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await client.run_bash("echo out; echo err >&2; exit 2", detached=True)
        assert run.detached is True
        exits = [e for e in await client.exits(wait_timeout=5) if e.execution_id == run.execution_id]
        assert len(exits) == 1
        (delivered,) = exits
        assert (delivered.status, delivered.exit_code, delivered.stdout_tail, delivered.stderr_tail) == (
            "failed",
            2,
            "out\n",
            "err\n",
        )
        assert delivered.attempt == 1 and delivered.delivery_id
        await client.ack_exit(delivered)
        later = await client.exits(wait_timeout=0, lease=1)
        assert run.execution_id not in {e.execution_id for e in later}


async def test_node_is_passed_on_by_both_clients(wb: DaemonHandle) -> None:
    """`node` pins a start: a single daemon takes its own id and refuses another's."""
    async with AsyncClient(wb.url, TOKEN) as wb_async:
        here = (await wb_async.run_bash("true")).node_id
        assert here
        pinned = await wb_async.run_code("python", "print(1)", node=here)
        assert pinned.status is ExecutionStatus.COMPLETED and pinned.node_id == here
        with pytest.raises(InvalidRequest, match="node"):
            await wb_async.run_bash("true", node="no-such-node")

    def blocking() -> None:
        with Client(wb.url, TOKEN) as client:
            assert client.run_bash("echo hi", node=here).node_id == here
            with pytest.raises(InvalidRequest, match="no-such-node"):
                client.run_code("python", "print(1)", node="no-such-node")

    await trio.to_thread.run_sync(blocking)
