"""The PostgreSQL engine's schema: connections and numbered migrations.

The schema version is the one row of `workbench_schema`; `sql/postgres/NNNN_name.sql` are the
migrations, applied in order, each in one transaction, under an advisory lock: daemons that start
together on one database migrate it once.
"""

from __future__ import annotations

import hashlib
import logging
import time
from importlib import resources
from typing import Any

import psycopg

from workbench.wire.errors import ConfigError

log = logging.getLogger("workbench.core.store")

#: The advisory lock that migrations of this schema hold (any fixed number: "wb" + "schema").
_MIGRATION_LOCK = 0x7762_5343


def migrations() -> list[tuple[int, str, str]]:
    """The numbered migration files, in order: (version, name, sql)."""
    found = []
    for entry in resources.files("workbench.core.store.sql.postgres").iterdir():
        name = entry.name
        if name.endswith(".sql") and name[:4].isdigit():
            found.append((int(name[:4]), name, entry.read_text(encoding="utf-8")))
    found.sort()
    versions = [v for v, _, _ in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migration files are not numbered 1..n: {versions}")
    return found


SCHEMA_VERSION = len(migrations())


def connect(url: str, *, autocommit: bool = False) -> psycopg.Connection[Any]:
    """A connection as the engine uses them (rows as tuples), with a bounded wait for the server."""
    conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=10)
    # A statement stuck behind a lock for long is a bug: fail it instead of hanging the writer.
    conn.execute("SET lock_timeout = '30s'")
    if not autocommit:
        conn.commit()
    return conn


#: How long a start waits for the sessions of this node's earlier run to end (`fence`).
FENCE_WAIT_MS = 10_000


def node_url(url: str, node_id: str) -> str:
    """`url` with a name for its sessions (application_name) that says this node of this store,
    so that its next start can find the sessions this run leaves behind (`fence`). Two stores
    may share a database (a schema each, by `options=-csearch_path=...`), and their nodes their
    names: the name has a hash of the store's address and the node's name."""
    digest = hashlib.sha256(f"{node_id}\0{redacted(url)}\0{_options(url)}".encode()).hexdigest()[:12]
    return psycopg.conninfo.make_conninfo(url, application_name=f"workbench {node_id[:38]} {digest}")


def _options(url: str) -> str:
    try:
        return str(psycopg.conninfo.conninfo_to_dict(url).get("options") or "")
    except psycopg.ProgrammingError:
        return ""


def fence(url: str) -> int:
    """End the sessions an earlier run of this node left on the server, and wait until none is
    left; returns how many there were. Blocking; call before reading anything at a start. Raises
    ConfigError when the server cannot be reached.

    A daemon killed while its COMMIT was on the way leaves a session whose transaction the server
    may still commit after the daemon's next start has read the store: recovery would then go on
    from a state that a moment later is not the store's (an adoption written twice, output
    resumed from offsets already passed). Once its session is gone, its last transaction has
    committed or rolled back for good.
    """
    try:
        return _fence(url)
    except psycopg.Error as exc:
        raise ConfigError(f"the store at {redacted(url)} cannot be reached: {one_line(exc)}") from None


def _fence(url: str) -> int:
    conn = connect(url, autocommit=True)
    try:
        found = conn.execute("SHOW application_name").fetchone()
        name = found[0] if found else ""
        earlier = _sessions(conn, name)
        # pg_terminate_backend(pid) with no timeout (the form every server has) only asks; a
        # session is gone, its transaction settled, once the server no longer lists it.
        for pid in earlier:
            conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + FENCE_WAIT_MS / 1000
        left = earlier
        while left and time.monotonic() < deadline:
            time.sleep(0.005)
            left = [pid for pid in _sessions(conn, name) if pid in earlier]
        if left:
            log.warning("store: the sessions %s of this node's earlier run did not end", left)
        return len(earlier)
    finally:
        conn.close()


def _sessions(conn: psycopg.Connection[Any], name: str) -> list[int]:
    """The pids of the other sessions named `name` in this database."""
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND pid <> pg_backend_pid()"
        " AND datname = current_database()",
        (name,),
    ).fetchall()
    return [int(pid) for (pid,) in rows]


def claim_node(url: str, node_id: str, data_dir_id: str, lease_ms: int) -> None:
    """Take the node id `node_id` for the data dir `data_dir_id` (blocking; before `fence`, whose
    ending of that node's sessions would cut off a living node of that id).

    Raises:
        ConfigError: a node of that id beats within its lease from another data dir, or the
            server cannot be reached.
    """
    try:
        with connect(url, autocommit=True) as conn:
            taken = conn.execute(
                "INSERT INTO nodes (node_id, lease_ms, data_dir_id) VALUES (%s, %s, %s) "
                "ON CONFLICT (node_id) DO UPDATE SET data_dir_id = excluded.data_dir_id "
                "WHERE nodes.data_dir_id IS NULL OR nodes.data_dir_id = excluded.data_dir_id "
                "OR nodes.heartbeat_at < clock_timestamp() - nodes.lease_ms * interval '1 millisecond' "
                "RETURNING node_id",
                (node_id, lease_ms, data_dir_id),
            ).fetchone()
            if taken is not None:
                return
            found = conn.execute(
                "SELECT (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::bigint, lease_ms "
                "FROM nodes WHERE node_id = %s",
                (node_id,),
            ).fetchone()
    except psycopg.Error as exc:
        raise ConfigError(f"the store at {redacted(url)} cannot be reached: {exc}".strip()) from None
    age, lease = found if found is not None else ("?", "?")
    raise ConfigError(
        f"WORKBENCH_NODE_ID {node_id!r} is taken: a node of that id on another data dir beat its "
        f"heart {age} ms ago (lease {lease} ms) on the store at {redacted(url)}; give this daemon "
        "a WORKBENCH_NODE_ID of its own, or stop that node and start this one after its lease"
    )


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(an unparsable store URL)"
    info.pop("password", None)
    return " ".join(f"{k}={v}" for k, v in info.items() if k in ("host", "port", "dbname", "user"))


def one_line(exc: BaseException) -> str:
    """The server's or libpq's message on one line (libpq adds hints on lines of their own)."""
    return "; ".join(part.strip() for part in str(exc).splitlines() if part.strip())


def prepare(url: str) -> str:
    """Connect, check the schema's version, and migrate it to the current one; returns the store's
    identity (made once with it: a data dir notes the store it was used with).

    Raises:
        ConfigError: the server cannot be reached, or its schema is newer than this Workbench.
    """
    try:
        conn = connect(url)
    except psycopg.Error as exc:
        raise ConfigError(f"the store at {redacted(url)} cannot be reached: {one_line(exc)}") from None
    try:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS workbench_schema (version INTEGER NOT NULL)")
            found = conn.execute("SELECT version FROM workbench_schema").fetchone()
            if found is None:
                conn.execute("INSERT INTO workbench_schema (version) VALUES (0)")
                version = 0
            else:
                version = int(found[0])
            if version > SCHEMA_VERSION:
                raise ConfigError(
                    f"the store at {redacted(url)} has schema version {version}, newer than this "
                    f"Workbench ({SCHEMA_VERSION}); upgrade Workbench"
                )
            for number, name, sql in migrations():
                if number <= version:
                    continue
                log.info("store: applying migration postgres/%s", name)
                with conn.transaction():
                    conn.execute(sql.encode())
                    conn.execute("UPDATE workbench_schema SET version = %s", (number,))
            identity = conn.execute("SELECT id FROM workbench_store").fetchone()
    except psycopg.Error as exc:
        raise ConfigError(f"the store at {redacted(url)} cannot be migrated: {one_line(exc)}") from None
    finally:
        conn.close()
    if identity is None:
        raise ConfigError(f"the store at {redacted(url)} has lost its identity (workbench_store is empty)")
    return str(identity[0])
