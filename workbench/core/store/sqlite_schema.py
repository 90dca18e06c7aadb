"""The SQLite engine's schema: connections with Workbench's pragmas, and numbered migrations.

The schema version is `PRAGMA user_version`; `sql/sqlite/NNNN_name.sql` are the migrations, applied
in order, each in one transaction, before the store serves anything.
"""

from __future__ import annotations

import logging
import os
import sqlite3
from importlib import resources
from pathlib import Path

from workbench.wire.errors import ConfigError

log = logging.getLogger("workbench.core.store")


def migrations() -> list[tuple[int, str, str]]:
    """The numbered migration files, in order: (version, name, sql)."""
    found = []
    for entry in resources.files("workbench.core.store.sql.sqlite").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append((int(name[:4]), name, entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migration files are not numbered 1..n: {versions}")
    return found


SCHEMA_VERSION = len(migrations())
_SQLITE_FULL = 13


def connect(path: Path) -> sqlite3.Connection:
    """A connection with the pragmas every Workbench connection uses."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 10000")
    conn.execute("PRAGMA foreign_keys = ON")
    # FULL: a commit is on disk before it is acknowledged, so no committed event is ever lost.
    conn.execute("PRAGMA synchronous = FULL")
    return conn


def prepare(path: Path) -> None:
    """Open (or create) the database file, check it, and migrate it to the current schema.

    Raises:
        ConfigError: the file is damaged, not a database, or newer than this Workbench.
    """
    try:
        # The store holds every principal's commands and output: only this user may read it.
        # SQLite gives its -wal and -shm files the database file's mode.
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        os.chmod(path, 0o600)
        conn = connect(path)
        try:
            _incremental_vacuum(conn, path)
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if mode != "wal":
                raise ConfigError(f"the store {path} cannot use WAL mode (got {mode!r})")
            check = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
            if check != ["ok"]:
                raise ConfigError(
                    f"the store {path} is damaged ({'; '.join(check[:3])}); move it aside to start "
                    "with an empty store, or restore it from a backup"
                )
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise ConfigError(
                    f"the store {path} has schema version {version}, newer than this Workbench "
                    f"({SCHEMA_VERSION}); upgrade Workbench"
                )
            # Off while migrating (it cannot change inside a transaction): making a table again
            # drops the old one, which would otherwise delete its events through the cascade.
            conn.execute("PRAGMA foreign_keys = OFF")
            for number, name, sql in migrations():
                if number <= version:
                    continue
                log.info("store: applying migration %s", name)
                conn.execute("BEGIN IMMEDIATE")
                try:
                    for statement in _split_sql(sql):
                        conn.execute(statement)
                    broken = conn.execute("PRAGMA foreign_key_check").fetchall()
                    if broken:
                        raise ConfigError(f"migration {name} broke {len(broken)} references; store unchanged")
                    conn.execute(f"PRAGMA user_version = {number}")
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:  # SQLite rolls back by itself on a full disk
                        conn.execute("ROLLBACK")
                    raise
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF == _SQLITE_FULL:
            raise ConfigError(
                f"the disk holding the store {path} is full: free some space and start again"
            ) from None
        raise ConfigError(
            f"the store {path} cannot be opened: {exc}; if the file is damaged, move it aside to "
            "start with an empty store"
        ) from None


def _incremental_vacuum(conn: sqlite3.Connection, path: Path) -> None:
    """Make the store one that gives deleted space back (`auto_vacuum = INCREMENTAL`).

    A new file takes it before its first table, at no cost. A store made before (auto_vacuum
    NONE) is rewritten once with VACUUM, which is the only way to switch it: that takes time in
    proportion to its size and room for a copy; when it fails (a full disk) the store goes on
    as it is, reusing freed pages without shrinking, and the next start tries again.
    """
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
        return
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
        return  # a new file: set before any table exists
    size = path.stat().st_size
    log.warning("store: rewriting %s (%d bytes) once so that deleted space is given back", path, size)
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError as exc:
        log.warning("store: could not rewrite the store (%s); freed space is reused, not given back", exc)


def _split_sql(script: str) -> list[str]:
    """Statements of a migration file (no triggers with inner semicolons are used)."""
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
