"""`prune` and `stats` of the Python client, against a real daemon."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, BadRequest


async def test_prune_and_stats(wb: DaemonHandle) -> None:
    async with AsyncClient(wb.url, TOKEN) as client:
        await client.run_bash("exit 4")
        await client.run_bash("true")
        await client.run_bash("true")
        stats = await client.stats()
        assert stats.executions["completed"] == 2 and stats.executions["failed"] == 1
        assert stats.store_bytes > 0 and stats.retention_ms is None
        assert await client.prune(before=datetime.now(UTC) - timedelta(hours=1)) == 0
        assert await client.prune(status="failed") == 1
        assert await client.prune(status=["completed"], before="0s") == 2
        assert await client.prune(before=0) == 0
        assert (await client.stats()).executions == {s: 0 for s in stats.executions}
        with pytest.raises(ValueError):
            await client.prune()
        with pytest.raises(BadRequest):
            await client.prune(status="running")
