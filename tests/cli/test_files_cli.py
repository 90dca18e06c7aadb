"""`workbench cp`, `workbench files ls`, `workbench run --service` and `workbench ls --services`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import httpx

from tests import ceilings, procs
from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle
from tests.ports import free_port


async def test_cp_a_file_and_a_tree_in_and_out(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    local = tmp_path / "local"
    (local / "src" / "pkg").mkdir(parents=True)
    (local / "src" / "main.py").write_text("print('hi')\n")
    (local / "src" / "pkg" / "data.bin").write_bytes(bytes(range(256)))
    os.symlink("main.py", local / "src" / "link")
    ws = wb.settings.layout.workspace("admin", "s")

    await cli.ok("cp", str(local / "src" / "main.py"), "s:app/main.py")
    assert (ws / "app" / "main.py").read_text() == "print('hi')\n"
    await cli.ok("cp", str(local / "src" / "main.py"), "s:app")  # into the directory, by its name
    assert sorted(os.listdir(ws / "app")) == ["main.py"]
    await cli.ok("cp", "-", "s:app/from-stdin.txt", stdin=b"piped\n")
    assert (ws / "app" / "from-stdin.txt").read_bytes() == b"piped\n"

    await cli.ok("cp", str(local / "src"), "s:")  # a tree into the workspace: lands as src/
    assert (ws / "src" / "pkg" / "data.bin").read_bytes() == bytes(range(256))
    assert os.readlink(ws / "src" / "link") == "main.py"
    await cli.ok("cp", str(local / "src"), "s:copy")  # copy/ does not exist: it becomes the tree
    assert (ws / "copy" / "main.py").exists()

    out = tmp_path / "out"
    out.mkdir()
    await cli.ok("cp", "s:src", str(out))  # into an existing directory, by its name
    assert (out / "src" / "pkg" / "data.bin").read_bytes() == bytes(range(256))
    await cli.ok("cp", "s:app/main.py", str(out / "m.py"))
    assert (out / "m.py").read_text() == "print('hi')\n"
    shown = await cli.ok("cp", "s:app/from-stdin.txt", "-")
    assert shown.out == b"piped\n"

    missing = await cli("cp", "s:nope.txt", str(out))
    assert missing.code == 125 and "not_found" in missing.error
    escape = await cli("cp", str(local / "src" / "main.py"), "s:../outside.txt")
    assert escape.code == 125 and "invalid_request" in escape.error
    both_local = await cli("cp", str(local), str(out))
    assert both_local.code == 2 and "usage" in both_local.error


async def test_files_ls(cli: Cli, wb: DaemonHandle) -> None:
    await wb.client.put("/v1/sessions/s/files/a/b.txt", content=b"bb")
    listed = await cli.ok("files", "ls", "s")
    assert "a/" in listed.text and "b.txt" not in listed.text
    deep = await cli.ok("files", "ls", "s", "--depth", "3")
    assert "a/b.txt" in deep.text
    inside = json.loads((await cli.ok("files", "ls", "s:a", "--json")).text)
    assert [e["path"] for e in inside["entries"]] == ["a/b.txt"]
    nothing = await cli("files", "ls", "nosuch")
    assert nothing.code == 125 and "not_found" in nothing.error


async def test_run_service_returns_once_ready_and_ls_shows_services(cli: Cli, wb: DaemonHandle) -> None:
    port = free_port()
    started = await cli.ok(
        "run",
        "--service",
        "--ready-port",
        str(port),
        "--",
        f"{sys.executable} -m http.server {port} --bind 127.0.0.1",
    )
    execution_id = started.text.strip()
    record = (await wb.client.get(f"/v1/executions/{execution_id}")).json()
    assert record["service"] is True and record["ready"] is True and record["status"] == "running"
    async with httpx.AsyncClient() as plain:
        assert (await plain.get(f"http://127.0.0.1:{port}/")).status_code == 200
    await cli.ok("run", "--", "true")
    services = await cli.ok("ls", "--services", "--json")
    assert [e["executionId"] for e in json.loads(services.text)["executions"]] == [execution_id]
    tree = procs.processes_mentioning(execution_id)
    await cli.ok("cancel", execution_id)
    await procs.eventually(lambda: not any(procs.alive(p) for p in tree), within_s=10)

    # Ready once it runs: `run --service` returns then (its start is a background one; a
    # foreground start would wait for an end that a service never reaches).
    with ceilings.within(15, "run --service of a service that is ready at once to return"):
        at_once = await cli.ok("run", "--service", "--", "sleep 600")
    await cli.ok("cancel", at_once.text.strip())
    never = await cli(
        "run", "--service", "--ready-log", "never", "--ready-timeout", "300ms", "--", "sleep 30"
    )
    assert never.code == 124, never
    # One line says why: not two (the error, then that it ended before it was ready).
    message = "not ready within readyTimeoutMs (300 ms); the tree was killed"
    assert never.error.splitlines() == [f"workbench: ready_timeout: {never.text.strip()}: {message}"], never
    ended = await cli("run", "--service", "--ready-log", "never", "--", "exit 3")
    assert ended.code == 3, ended
    assert ended.error.splitlines() == [
        f"workbench: {ended.text.strip()} ended before it was ready: failed (exit 3)"
    ]
    refused = await cli("run", "--ready-port", "80", "--", "true")
    assert refused.code == 2 and "--service" in refused.error
