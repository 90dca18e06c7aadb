"""`workbench prune` and `workbench stats`: bulk deletes on the daemon, and what its store holds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle
from tests.e2e.test_security import RUNNER, Principals, principals  # noqa: F401 (a fixture)


async def test_prune_deletes_on_the_daemon_and_says_how_much_is_left(cli: Cli, wb: DaemonHandle) -> None:
    failed = await wb.run("exit 1")
    done = [await wb.run("echo hi") for _ in range(2)]
    running = await wb.start("sleep 30")
    stats = json.loads((await cli.ok("stats", "--json")).out)
    assert stats["executions"]["completed"] == 2 and stats["executions"]["running"] == 1
    shown = (await cli.ok("stats")).text
    assert "completed 2" in shown and "failed 1" in shown and "retention: keep everything" in shown

    young = await cli.ok("prune", "--status", "completed", "--before", "1h")
    assert young.text.startswith("deleted 0 executions; store ")
    pruned = json.loads((await cli.ok("prune", "--json", "--status", "completed")).out)
    assert pruned["deleted"] == 2 and pruned["stats"]["executions"]["completed"] == 0
    for record in done:
        assert (await wb.client.get(f"/v1/executions/{record['executionId']}")).status_code == 404
    last = await cli.ok("prune", "--before", "2999-01-01")
    assert last.text.startswith("deleted 1 execution; ")
    assert (await wb.client.get(f"/v1/executions/{failed['executionId']}")).status_code == 404
    assert (await wb.client.get(f"/v1/executions/{running['executionId']}")).json()["status"] == "running"
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])


async def test_prune_refuses_what_it_cannot_mean(cli: Cli, wb: DaemonHandle) -> None:
    await wb.run("true")
    for argv in (("prune",), ("prune", "--status", "running"), ("prune", "--before", "soon")):
        refused = await cli(*argv)
        assert refused.code == 2, (argv, refused.error)
        assert refused.error.startswith("workbench: usage: ")
    assert (await cli.ok("stats", "--json")).out.count(b'"completed": 1') == 1


async def test_a_when_past_what_a_date_holds_is_a_usage_error(cli: Cli, wb: DaemonHandle) -> None:
    """`prune --before`, `rm --before` and `logs --since` take durations up to 100 years."""
    await wb.run("true")
    for argv in (
        ("prune", "--before", "99999999999d"),
        ("prune", "--before", "9" * 400),
        ("rm", "--before", "36501d"),
        ("logs", "--since", "99999999999d", "@last"),
    ):
        refused = await cli(*argv)
        assert refused.code == 2, (argv, refused.error)
        assert refused.error == (
            f"workbench: usage: {argv[1]} {argv[2]!r}: longer than 100 years (36500d), the longest duration\n"
        ), refused.error
    assert (await cli.ok("prune", "--before", "36500d")).text.startswith("deleted 0 executions; ")
    assert (await cli.ok("stats", "--json")).out.count(b'"completed": 1') == 1


async def test_prune_with_a_token_that_may_delete_but_not_read_stats(
    principals: Principals,  # noqa: F811
    tmp_path: Path,
) -> None:
    """`tools:execute` is what a delete needs; the store's sizes need `logs:read`. Without it,
    prune says what it deleted and that the sizes are not for this token, and exits 0."""
    runner = Cli(principals.wb.url, tmp_path / "home", token=RUNNER)
    for _ in range(2):
        await runner.ok("run", "--", "true")
    pruned = await runner.ok("prune", "--before", "0s")
    assert pruned.text.startswith("deleted 2 executions"), pruned
    assert "logs:read" in pruned.text, pruned
    again = json.loads((await runner.ok("prune", "--json", "--before", "0s")).out)
    assert again == {"deleted": 0, "stats": None}, again
