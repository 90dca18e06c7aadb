"""A real PostgreSQL server for the tests: `initdb` and `pg_ctl` in a temporary directory.

Debian's `postgresql` package provides the programs (scripts/test installs it when missing). The
server listens on 127.0.0.1 on a free port and on a socket in its directory; it trusts local
connections. As root it runs as the `postgres` user (PostgreSQL refuses to run as root).

Each daemon of a test gets a schema of its own in the one database, named after its data dir, so
that a daemon restarted on the same data dir finds its store again and tests never see each
other's executions.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ports import free_port

_START_S = 60
#: The server the tests' daemons use when the suite runs with `--store=postgres` (else None).
current: PostgresServer | None = None


def pg_bin() -> Path | None:
    """Where `initdb` and `pg_ctl` are, if PostgreSQL is installed."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(candidate, "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).parent if found else None


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """A server started for the `with` block and removed after it (the test skipped without
    PostgreSQL)."""
    if pg_bin() is None:
        pytest.skip("PostgreSQL is not installed (scripts/test installs it: apt-get install postgresql)")
    server = PostgresServer()
    try:
        yield server
    finally:
        server.close()


class PostgresServer:
    """One PostgreSQL server in a temporary directory; `stop` removes it."""

    def __init__(self, *, durable: bool = False) -> None:
        """`durable`: PostgreSQL's own defaults (fsync); else none of the syncing the tests need not."""
        bindir = pg_bin()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed (apt-get install postgresql)")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="wb-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        with open(self.data / "postgresql.conf", "a", encoding="utf-8") as conf:
            conf.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.root}'\nmax_connections = 300\n"
            )
            if not durable:
                # The tests need no durability across a power loss, and the machine is shared.
                conf.write("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        self.start()

    def _run(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self._as, str(self.bindir / program), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=_START_S,
        )

    def start(self) -> None:
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", str(_START_S), "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self) -> None:
        """Stop (every connection is cut) and start again on the same port."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "restart")

    @property
    def base_url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def url_for(self, data_dir: Path) -> str:
        """A store URL of its own for the daemon of `data_dir` (its schema made if missing)."""
        schema = "wb_" + hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        return f"{self.base_url}?options=-csearch_path%3D{schema}"

    def close(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


def store_rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    """The rows of `sql` (plain SQL both engines read alike) in the store of `data_dir`: its
    SQLite file, or its schema on the PostgreSQL server of a `--store=postgres` run."""
    if current is None:
        import sqlite3

        with sqlite3.connect(data_dir / "workbench.db") as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    import psycopg

    with psycopg.connect(current.url_for(data_dir)) as conn:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
