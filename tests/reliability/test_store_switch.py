"""A data dir belongs to one store: a start on another (SQLite for PostgreSQL, or another
PostgreSQL store) is refused with one line, and nothing of the data dir, its records or the trees
it kept running is touched. A store that cannot be reached is one line too, before anything is
made in a new data dir."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests import pg, procs
from tests.conftest import TOKEN
from tests.reliability.conftest import DaemonProcess

Factory = Callable[..., DaemonProcess]


def _refused(daemon: DaemonProcess) -> str:
    """Start `daemon`, which must be refused with exit status 2: the refusal's line."""
    before = daemon.log_text()
    assert daemon.start(wait=False).wait(timeout=30) == 2, daemon.log_text()
    lines = daemon.log_text()[len(before) :].splitlines() if before else daemon.log_text().splitlines()
    said = [line for line in lines if line.startswith("workbench: ")]
    assert len(said) == 1, lines
    return said[0]


def _on_sqlite(daemon: DaemonProcess) -> None:
    daemon.env.pop("WORKBENCH_STORE_URL", None)


def test_a_sqlite_data_dir_is_refused_on_postgresql_and_its_kept_tree_lives(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """Even one an older Workbench left without saying its store: its workbench.db has records."""
    data = tmp_path / "q"
    d = daemon_process(data, WORKBENCH_SHUTDOWN_MODE="keep")
    _on_sqlite(d)
    d.start()
    eid = d.start_bash("sleep 25")["executionId"]
    assert d.stop() == 0
    for marker in data.glob("store*"):
        marker.unlink()  # as an older Workbench left it
    d.env["WORKBENCH_STORE_URL"] = postgres_server.url_for(tmp_path / "cluster")
    line = _refused(d)
    assert "SQLite" in line and "data dir" in line, line
    assert procs.processes_mentioning(eid), "the refused start killed nothing"
    _on_sqlite(d)
    d.env["WORKBENCH_SHUTDOWN_MODE"] = "kill"
    d.start()
    assert d.get(eid)["status"] == "running", "the SQLite start adopts the tree it kept"
    d.client.post(f"/v1/executions/{eid}/cancel", json={})
    assert d.wait(eid)["status"] == "cancelled"


def test_a_postgresql_data_dir_is_refused_on_sqlite_and_on_another_store(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    data = tmp_path / "node"
    url = postgres_server.url_for(tmp_path / "cluster")
    d = daemon_process(data, WORKBENCH_STORE_URL=url, WORKBENCH_NODE_ID="A", WORKBENCH_SHUTDOWN_MODE="keep")
    d.start()
    eid = d.start_bash("sleep 25")["executionId"]
    assert d.stop() == 0
    _on_sqlite(d)
    line = _refused(d)
    assert "PostgreSQL" in line and "data dir" in line, line
    assert not (data / "workbench.db").exists()
    d.env["WORKBENCH_STORE_URL"] = postgres_server.url_for(tmp_path / "another")
    line = _refused(d)
    assert "another PostgreSQL store" in line, line
    assert procs.processes_mentioning(eid), "the refused starts killed nothing"
    d.env.update(WORKBENCH_STORE_URL=url, WORKBENCH_SHUTDOWN_MODE="kill")
    d.start()
    assert d.get(eid)["status"] == "running", "its own store's start adopts the tree it kept"
    d.client.post(f"/v1/executions/{eid}/cancel", json={})
    assert d.wait(eid)["status"] == "cancelled"


def test_a_store_that_cannot_be_reached_is_one_line_and_makes_no_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "new"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(
        WORKBENCH_TOKEN=TOKEN,
        WORKBENCH_DATA_DIR=str(data),
        WORKBENCH_STORE_URL="postgresql://postgres@127.0.0.1:1/postgres",
    )
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "serve", "--bind", "127.0.0.1:0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("workbench: the store at "), said
    assert "cannot be reached" in said[0]
    assert not data.exists()
