"""Which store a data dir belongs to: `<data>/store` names it, and a start on another is refused.

A data dir's execution directories, artifacts, workspaces and the trees a `keep` shutdown left
running belong to the records of one store. Started on another (SQLite after PostgreSQL, the
other way round, or another PostgreSQL store) the daemon would see none of those records: its
recovery would kill the kept trees as unknown, and the records would stay `running` in a store
nobody reads. So the data dir notes its store (`sqlite`, or `postgresql` and the store's
identity, made once in its database), and a start on another store stops before it changes
anything. A data dir of an older Workbench, which noted nothing, is judged by what it holds.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from workbench.core.layout import Layout
from workbench.wire.errors import ConfigError

SQLITE = "sqlite"
POSTGRES = "postgresql"


@dataclass(frozen=True)
class StoreName:
    """A store as its data dir notes it, and as messages name it."""

    #: `sqlite`, or `postgresql <the store's identity>`.
    mark: str
    #: For messages: "the SQLite store", "the PostgreSQL store at host=... dbname=...".
    where: str


def claim(layout: Layout, sqlite_file: Path, store: StoreName) -> None:
    """Note `store` as the data dir's, unless the data dir was last used with another one.

    Call with the data dir locked, before anything in it is changed.

    Raises:
        ConfigError: the data dir belongs to another store (nothing was changed).
    """
    path = layout.store_mark
    try:
        noted = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        noted = _inferred(layout, sqlite_file)
    if noted and noted != store.mark and not (noted == POSTGRES and store.mark.startswith(POSTGRES + " ")):
        raise ConfigError(_refusal(layout.data_dir, noted, store))
    if noted != store.mark:
        staging = path.with_name(path.name + ".new")
        staging.write_text(store.mark + "\n", encoding="utf-8")
        os.replace(staging, path)


def _inferred(layout: Layout, sqlite_file: Path) -> str:
    """The store of a data dir that notes none (an older Workbench's): SQLite when its file has
    records; PostgreSQL (which one is not known) when it has no such file but executions' files;
    else none."""
    if sqlite_file.exists():
        return SQLITE if _has_records(sqlite_file) else ""
    executions = layout.executions_dir
    if executions.is_dir() and any(entry.name.startswith("ex_") for entry in executions.iterdir()):
        return POSTGRES
    return ""


def _has_records(sqlite_file: Path) -> bool:
    try:
        conn = sqlite3.connect(f"file:{sqlite_file}?mode=ro", uri=True)
    except sqlite3.Error:
        return True  # a file that cannot be read is not taken for an empty one
    try:
        found = conn.execute("SELECT EXISTS (SELECT 1 FROM executions)").fetchone()
        return bool(found is None or found[0])
    except sqlite3.OperationalError as exc:
        return "no such table" not in str(exc)
    except sqlite3.Error:
        return True
    finally:
        conn.close()


def _refusal(data_dir: Path, noted: str, store: StoreName) -> str:
    if noted == SQLITE:
        earlier, again = "the SQLite store (its workbench.db)", "without WORKBENCH_STORE_URL"
    elif store.mark == SQLITE:
        earlier, again = "a PostgreSQL store", "with that store's WORKBENCH_STORE_URL"
    else:
        identity = noted.partition(" ")[2]
        earlier, again = f"another PostgreSQL store (id {identity})", "with that store's WORKBENCH_STORE_URL"
    return (
        f"the data dir {data_dir} was last used with {earlier}, not {store.where}: its executions, "
        f"files and any trees it kept running belong to that store. Start it {again}, or start "
        "this store with a fresh data dir (--data-dir)"
    )
