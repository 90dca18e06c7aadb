"""`workbench session ls|rm`."""

from __future__ import annotations

import json

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle


async def test_session_ls_and_rm(cli: Cli, wb: DaemonHandle) -> None:
    assert (await cli.ok("session", "ls")).text.split() == [
        "SESSION",
        "SIZE",
        "QUOTA",
        "CHANGED",
        "RUNNING",
        "CONTEXTS",
    ]
    await cli.ok("cp", "-", "build:out.txt", stdin=b"x" * 2048)
    await cli.ok("run", "--session", "web", "--", "true")  # its workspace is made when it starts
    running = (await cli.ok("run", "-b", "--session", "web", "--", "sleep 30")).text.strip()
    table = (await cli.ok("session", "ls")).text.splitlines()
    assert table[0].split() == ["SESSION", "SIZE", "QUOTA", "CHANGED", "RUNNING", "CONTEXTS"], table
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["build"][1] == "2.0K" and rows["build"][4:] == ["0", "0"], rows
    assert rows["web"][4:] == ["1", "0"], rows
    listed = json.loads((await cli.ok("session", "ls", "--json")).text)["sessions"]
    assert [(s["sessionId"], s["sizeBytes"]) for s in listed] == [("build", 2048), ("web", 0)]

    # One held, one not: the other is removed all the same, and the exit status says it failed.
    some = await cli("session", "rm", "web", "build")
    assert some.code == 125 and some.text == "build\n", some
    assert "conflict" in some.error and "cancel the executions" in some.error, some
    gone = await cli("session", "rm", "build")
    assert gone.code == 125 and "not_found" in gone.error, gone
    held = await cli("session", "rm", "--all")
    assert held.code == 125 and "web" in held.error, held
    await cli.ok("cancel", running)
    await cli("wait", running)
    await cli.ok("session", "rm", "--all")
    assert json.loads((await cli.ok("session", "ls", "--json")).text) == {"sessions": []}


async def test_session_rm_takes_ids_or_all(cli: Cli, wb: DaemonHandle) -> None:
    for args in (("session", "rm"), ("session", "rm", "--all", "web")):
        refused = await cli(*args)
        assert refused.code == 2 and "name the sessions, or --all" in refused.error, refused


async def test_an_empty_or_dot_id_is_a_usage_error_and_removes_nothing(cli: Cli, wb: DaemonHandle) -> None:
    """`workbench session rm "$ID"` with ID unset must not reach the bulk delete; nor `context rm`."""
    await cli.ok("run", "--session", "kept", "--", "true")
    for args in (
        ("session", "rm", ""),
        ("session", "rm", "."),
        ("session", "rm", ".."),
        ("context", "rm", ""),
    ):
        refused = await cli(*args)
        assert refused.code == 2 and refused.text == "", (args, refused)
    listed = json.loads((await cli.ok("session", "ls", "--json")).text)["sessions"]
    assert [s["sessionId"] for s in listed] == ["kept"]
    # A context id is one segment of the path, whatever it holds.
    odd = await cli("context", "rm", "cx_a?b=1#c")
    assert odd.code == 125 and "no context" in odd.error and "cx_a?b=1#c" in odd.error, odd
