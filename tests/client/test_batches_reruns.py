"""`run_batch`, `rerun`, `secret_env` and the new listing filters, on both twins."""

from __future__ import annotations

import asyncio

import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, Event, ExecutionStatus, InvalidRequest

ITEMS = [
    {"kind": "workbench_bash", "command": "echo one"},
    {"kind": "workbench_code", "language": "sh", "code": "exit 4"},
    {"kind": "workbench_bash", "command": "echo three"},
]


def scenario(url: str) -> None:
    with Client(url, TOKEN) as wb:
        batch = wb.run_batch(ITEMS, concurrency=2, metadata={"b": 1})
        assert batch.status is ExecutionStatus.PARTIAL_FAILED and batch.execution_kind == "batch"
        assert batch.items is not None and [i.status for i in batch.items] == [
            ExecutionStatus.COMPLETED,
            ExecutionStatus.FAILED,
            ExecutionStatus.COMPLETED,
        ]
        assert batch.usage is not None and batch.concurrency == 2 and batch.metadata == {"b": 1}
        items = {e.execution_id for e in wb.list(batch_id=batch)}
        assert items == {i.execution_id for i in batch.items}
        journal = [e for e in wb.events(batch) if isinstance(e, Event) and e.event_type == "item"]
        assert len(journal) == 9 and all(e.item is not None for e in journal)
        background = wb.run_batch(ITEMS[:1], background=True, fail_fast=True)
        assert background.status in {ExecutionStatus.QUEUED, ExecutionStatus.RUNNING}
        assert wb.wait(background).status is ExecutionStatus.COMPLETED

        original = wb.run_bash("cat; echo $K", stdin="in\n", secret_env={"K": "hidden"})
        assert original.secret_env_names == ["K"] and original.status is ExecutionStatus.COMPLETED
        with pytest.raises(InvalidRequest):
            wb.rerun(original)
        again = wb.rerun(original, secret_env={"K": "again"})
        assert again.rerun_of == original.execution_id and again.status is ExecutionStatus.COMPLETED
        output = "".join(e.output_delta or "" for e in wb.events(again) if e.event_type == "output")
        assert output == "in\nagain\n"
        changed = wb.rerun(original, command="echo changed", secret_env={"K": "x"}, background=True)
        assert changed.command == "echo changed"
        assert wb.wait(changed).status is ExecutionStatus.COMPLETED
        reruns = {e.execution_id for e in wb.list(rerun_of=original)}
        assert reruns == {again.execution_id, changed.execution_id}
        assert list(wb.events(again, after=again.last_sequence)) == [], "a 204 ends the follow"


async def ascenario(url: str) -> None:
    async with AsyncClient(url, TOKEN) as wb:
        batch = await wb.run_batch(ITEMS[:1] + ITEMS[2:])
        assert batch.status is ExecutionStatus.COMPLETED
        original = await wb.run_code("sh", "cat", stdin="twice\n")
        again = await wb.rerun(original.execution_id, idempotency_key="again-1")
        assert again.rerun_of == original.execution_id
        same = await wb.rerun(original.execution_id, idempotency_key="again-1")
        assert same.execution_id == again.execution_id
        assert [e async for e in wb.events(again, after=again.last_sequence)] == []
        assert [e.execution_id for e in await wb.list(rerun_of=original)] == [again.execution_id]


async def test_batches_and_reruns_with_the_blocking_client(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(scenario, wb.url)


async def test_batches_and_reruns_with_the_async_client_on_trio(wb: DaemonHandle) -> None:
    await ascenario(wb.url)


async def test_batches_and_reruns_with_the_async_client_on_asyncio(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(lambda: asyncio.run(ascenario(wb.url)))
