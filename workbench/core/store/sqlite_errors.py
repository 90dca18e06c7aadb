"""How the SQLite engine tells its errors apart: the disk under the store (full, or failing) from
one job's statement, and what an error becomes outside the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from workbench.core.store.health import free_bytes
from workbench.wire.errors import Unavailable

#: SQLite's primary result codes for a full disk and an I/O error (the low byte of extended ones).
_SQLITE_FULL = 13
_SQLITE_IOERR = 10
#: An I/O error on a disk with less room than this is taken for a full disk.
_NEARLY_FULL = 1024 * 1024


def is_storage(exc: sqlite3.Error) -> bool:
    """An error of the disk under the store, not of one job's statement."""
    return getattr(exc, "sqlite_errorcode", 0) & 0xFF in (_SQLITE_FULL, _SQLITE_IOERR)


def is_full(exc: sqlite3.Error, path: Path) -> bool:
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    # SQLite says FULL for ENOSPC on most writes, but a failed write of its shared-memory file
    # or a failed sync is an I/O error: a disk with next to no room left is the likely cause.
    return code == _SQLITE_FULL or (code == _SQLITE_IOERR and free_bytes(path.parent) < _NEARLY_FULL)


def translated(exc: Exception) -> Exception:
    """What a job's error becomes outside the store: SQLite's own errors become Workbench errors."""
    if isinstance(exc, sqlite3.Error):
        return Unavailable(f"the store failed: {exc}")
    return exc
