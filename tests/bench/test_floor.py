"""Row 1's floor: two durable commits around `bash -c true`, as the bench measures it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from bench.rows_latency import durable_floor


async def test_each_measure_commits_a_row_and_then_its_end(tmp_path: Path) -> None:
    path = tmp_path / "floor.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        measure = durable_floor(db)
        times = [await measure(), await measure()]
    assert all(t > 0 for t in times)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT status FROM runs ORDER BY id").fetchall() == [("completed",)] * 2
