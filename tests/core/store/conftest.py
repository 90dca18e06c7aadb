"""The store's tests share a fresh SQLite store; a module needing another (PostgreSQL, a small
disk) defines its own `db`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from workbench.core.store import sqlite_schema as schema
from workbench.core.store.sqlite import SQLiteStore


@pytest.fixture
async def db(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    """A SQLite store in a new file, its threads running; closed after the test."""
    path = tmp_path / "workbench.db"
    schema.prepare(path)
    handle = SQLiteStore(path)
    handle.start()
    yield handle
    await handle.aclose()
