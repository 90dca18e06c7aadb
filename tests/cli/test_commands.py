"""The CLI's reading and managing commands, `--json`, `--help`, and its errors, against a real daemon."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.cli.conftest import Cli
from tests.cli.test_run import BIG, BIG_ERR, BIG_OUT
from tests.conftest import DaemonHandle
from tests.ports import free_port

COMMANDS = [
    "serve", "run", "code", "ls", "show", "logs", "events", "wait", "cancel", "artifacts", "rerun", "exits",
    "rm", "images", "detach", "batch",
]  # fmt: skip


async def test_ls_prints_an_aligned_table_and_json(cli: Cli, wb: DaemonHandle) -> None:
    ok = await wb.run("echo fine")
    failed = await wb.run("exit 5")
    running = await wb.start("sleep 30")
    ran = await cli.ok("ls", "--limit", "10")
    lines = ran.text.splitlines()
    assert lines[0].split() == ["ID", "KIND", "STATUS", "EXIT", "AGE", "DURATION", "COMMAND"]
    ids = [running["executionId"], failed["executionId"], ok["executionId"]]
    shown = [line.split()[0] for line in lines[1:]]
    assert all(
        full.startswith(short) and len(short) < len(full) for full, short in zip(ids, shown, strict=True)
    )
    starts = {line.index(word) for line in lines for word in ("bash",) if word in line}
    assert len(starts) == 1, "the KIND column is aligned"
    assert "failed     5" in lines[2] and lines[3].endswith("echo fine")
    whole = await cli.ok("ls", "--no-trunc")
    assert [line.split()[0] for line in whole.text.splitlines()[1:]] == ids
    as_json = json.loads((await cli.ok("ls", "--json")).out)
    assert [r["executionId"] for r in as_json["executions"]] == ids and as_json["nextCursor"] is None
    only = json.loads((await cli.ok("ls", "--status", "failed", "--kind", "bash", "--json")).out)
    assert [r["executionId"] for r in only["executions"]] == [failed["executionId"]]
    one = await cli.ok("ls", "--limit", "1", "--json")
    assert len(json.loads(one.out)["executions"]) == 1 and json.loads(one.out)["nextCursor"] == ids[0]
    assert "there are more" in one.error
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])


async def test_ls_quiet_all_several_statuses_and_running(cli: Cli, wb: DaemonHandle) -> None:
    empty = await cli.ok("ls")
    assert empty.text.split() == ["ID", "KIND", "STATUS", "EXIT", "AGE", "DURATION", "COMMAND"], (
        "a header alone"
    )
    done = [(await wb.run(f"exit {i % 2}"))["executionId"] for i in range(5)]
    running = (await wb.start("sleep 30"))["executionId"]
    newest_first = [running, *reversed(done)]
    quiet = await cli.ok("ls", "-q", "--limit", "3")
    assert quiet.text.split() == newest_first[:3] and "there are more" in quiet.error
    every = await cli.ok("ls", "-q", "--all", "--limit", "1")
    assert every.text.split() == newest_first and every.error == ""
    several = await cli.ok("ls", "-q", "--status", "completed,running")
    assert several.text.split() == [running, done[4], done[2], done[0]]
    repeated = await cli.ok("ls", "-q", "--status", "failed", "--status", "running", "--limit", "2")
    assert repeated.text.split() == [running, done[3]] and "there are more" in repeated.error
    assert (await cli.ok("ls", "-q", "--running")).text.split() == [running]
    await wb.client.post(f"/v1/executions/{running}/cancel", json={})
    await wb.wait(running)


async def test_ids_by_prefix_in_any_case_and_at_last(cli: Cli, wb: DaemonHandle) -> None:
    first = (await wb.run("exit 3"))["executionId"]
    last = (await wb.run("exit 4"))["executionId"]
    for text in (first[:20], first[3:20].lower(), first.lower()):
        shown = json.loads((await cli.ok("show", "--json", text)).out)
        assert shown["executionId"] == first, text
    assert json.loads((await cli.ok("show", "--json", "@last")).out)["executionId"] == last
    assert (await cli("wait", "@last")).code == 4
    common = next(i for i in range(30) if first[i] != last[i])
    ambiguous = await cli("show", first[:common])
    assert ambiguous.code == 2 and ambiguous.error.count("\n") == 1 and "more than one" in ambiguous.error
    assert first in ambiguous.error and last in ambiguous.error
    bad = await cli("logs", "ex_not-an-id!")
    assert bad.code == 2 and "not an execution id" in bad.error
    missing = await cli("show", "ex_7ZZZZZ")
    assert missing.code == 125 and missing.error == "workbench: not_found: no execution ex_7ZZZZZ\n"


async def test_ls_cuts_the_command_to_the_terminal_width(cli: Cli, wb: DaemonHandle) -> None:
    await wb.run("echo " + "x" * 300)
    ran = await cli("ls", env=cli.env(COLUMNS="100"))
    assert all(len(line) <= 100 for line in ran.text.splitlines()), ran.text
    assert ran.text.splitlines()[1].endswith("…")


async def test_show_and_its_json(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("exit 7", metadata={"k": "v"})
    shown = await cli.ok("show", record["executionId"])
    assert re.search(r"^status:\s+failed$", shown.text, re.M) and re.search(r"^exit:\s+7$", shown.text, re.M)
    assert json.loads((await cli.ok("show", "--json", record["executionId"])).out) == record


async def test_show_and_ls_give_a_runs_latest_progress(cli: Cli, wb: DaemonHandle) -> None:
    """The record's `progress` (its latest progress line): `show` gives it whole, `ls` its share
    beside a running status."""
    record = await wb.start('echo "3/10 building" >> "$WORKBENCH_PROGRESS"; exec sleep 30')
    execution_id = record["executionId"]
    with ceilings.within(20, "the progress line to reach the record"):
        while (await wb.client.get(f"/v1/executions/{execution_id}")).json()["progress"] is None:  # noqa: ASYNC110 - a test's look
            await trio.sleep(0.02)
    shown = await cli.ok("show", execution_id)
    assert re.search(r"^progress:\s+3/10 \(30%\) building$", shown.text, re.M), shown.text
    listed = await cli.ok("ls", "--limit", "1")
    assert listed.text.splitlines()[1].split()[2:4] == ["running", "30%"], listed.text
    await wb.client.post(f"/v1/executions/{execution_id}/cancel", json={})
    await wb.wait(execution_id)
    quiet = await cli.ok("show", (await wb.run("true"))["executionId"])
    assert "progress:" not in quiet.text


async def test_events_lists_the_journal_and_json_lines(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("echo one; echo two >&2")
    human = await cli.ok("events", record["executionId"])
    assert "queued" in human.text and 'stdout "one\\n"' in human.text and "completed exit=0" in human.text
    lines = (await cli.ok("events", "--json", record["executionId"])).text.splitlines()
    events = [json.loads(line) for line in lines]
    assert [e["sequence"] for e in events] == list(range(1, record["lastSequence"] + 1))
    assert events == await wb.events(record["executionId"])


async def test_logs_of_a_big_output_is_byte_exact(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    """Promise 1: `logs` writes every byte, from the artifacts where the events hold less."""
    script = tmp_path / "big.py"
    script.write_text(BIG)
    record = await wb.run(f"{sys.executable} {script}")
    assert record["output"]["truncated"] is True
    both = await cli.ok("logs", record["executionId"])
    assert both.out == BIG_OUT and both.err == BIG_ERR
    only_out = await cli.ok("logs", "--stdout", record["executionId"])
    assert hashlib.sha256(only_out.out).digest() == hashlib.sha256(BIG_OUT).digest() and only_out.err == b""
    only_err = await cli.ok("logs", "--stderr", record["executionId"])
    assert (only_err.out, only_err.err) == (b"", BIG_ERR)


async def test_logs_from_events_and_follow(cli: Cli, wb: DaemonHandle) -> None:
    small = await wb.run("echo out; printf 'e\\xff' >&2")
    logs = await cli.ok("logs", small["executionId"])
    assert (logs.out, logs.err) == (b"out\n", b"e\xff")
    running = await wb.start("for i in 1 2 3; do echo line $i; sleep 0.2; done; echo bye >&2")
    followed = await cli.ok("logs", "-f", running["executionId"])
    assert (followed.out, followed.err) == (b"line 1\nline 2\nline 3\n", b"bye\n")
    trace = await cli.ok("events", "-f", "--json", (await wb.start("sleep 0.3; echo z"))["executionId"])
    events = [json.loads(line) for line in trace.text.splitlines()]
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["status"] == "completed"


async def test_wait_exits_like_the_execution_and_times_out_harmlessly(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 5: a wait that times out changes nothing."""
    quick = await wb.start("sleep 0.2; exit 9")
    done = await cli("wait", quick["executionId"])
    assert (done.code, done.out, done.err) == (9, b"", b"")
    slow = await wb.start("sleep 30")
    timed = await cli("wait", "--timeout", "200ms", slow["executionId"])
    assert timed.code == 75 and "still running" in timed.error
    as_json = await cli("wait", "--json", "--timeout", "0s", slow["executionId"])
    assert json.loads(as_json.out)["status"] == "running"
    cancelled = await cli.ok("cancel", "--reason", "test says so", slow["executionId"])
    assert cancelled.text == f"{slow['executionId']} cancelled\n"
    record = await wb.wait(slow["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "test says so"
    after = await cli("wait", slow["executionId"])
    assert after.code == 130
    again = json.loads((await cli.ok("cancel", "--json", slow["executionId"])).out)
    assert again["cancelled"] is False and again["execution"]["status"] == "cancelled"


async def test_cancel_with_grace_waits_for_the_end(cli: Cli, wb: DaemonHandle) -> None:
    running = await wb.start("trap 'echo bye; exit 0' TERM; sleep 30 & wait")
    ran = await cli.ok("cancel", "--grace", "2s", "--json", running["executionId"])
    record = json.loads(ran.out)["execution"]
    assert record["status"] in {"cancelled", "completed"}


async def test_artifacts_list_and_download(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    record = await wb.run("printf 'a\\xffb'; echo fine >&2")
    listing = await cli.ok("artifacts", record["executionId"])
    assert listing.text.splitlines()[0].split() == ["NAME", "SIZE", "SHA256"]
    assert listing.text.splitlines()[1].split()[:2] == ["stdout", "3"]
    as_json = json.loads((await cli.ok("artifacts", "--json", record["executionId"])).out)
    assert as_json == {"artifacts": record["artifacts"]}
    raw = await cli.ok("artifacts", record["executionId"], "stdout")
    assert raw.out == b"a\xffb"
    target = tmp_path / "saved"
    await cli.ok("artifacts", record["executionId"], "stdout", "-o", str(target))
    assert target.read_bytes() == b"a\xffb"
    missing = await cli("artifacts", record["executionId"], "stderr")
    assert missing.code == 125 and missing.error.startswith("workbench: not_found: ")


async def test_rm_images_and_detach(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("true")
    assert (await cli.ok("rm", record["executionId"])).text == record["executionId"] + "\n"
    gone = await cli("show", record["executionId"])
    assert gone.code == 125 and gone.error == f"workbench: not_found: no execution {record['executionId']}\n"
    images = json.loads((await cli.ok("images", "--json")).out)
    assert "host" in {i["name"] for i in images["images"]}
    assert (await cli.ok("images")).text.startswith("NAME")
    running = await wb.start("sleep 30")
    busy = await cli("rm", running["executionId"])
    assert busy.code == 125 and busy.error.startswith("workbench: conflict: ")
    detached = json.loads((await cli.ok("detach", "--json", running["executionId"])).out)
    assert detached["detached"] is True
    await cli.ok("cancel", running["executionId"])


async def test_exits_reads_without_hiding_and_acks_what_it_printed(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("echo out", detached=True)
    looked = json.loads((await cli.ok("exits", "--json", "--wait", "5s")).out)
    mine = [e for e in looked["exits"] if e["executionId"] == record["executionId"]]
    assert mine and mine[0]["status"] == "completed" and mine[0]["stdoutTail"] == "out\n"
    again = await cli.ok("exits")
    lines = again.text.splitlines()
    assert lines[0].split()[:2] == ["DELIVERY", "EXECUTION"], "a look hides nothing"
    assert record["executionId"].startswith(lines[1].split()[1])
    acked = json.loads((await cli.ok("exits", "--json", "--ack")).out)
    assert [e["executionId"] for e in acked["exits"]] == [record["executionId"]]
    later = json.loads((await cli.ok("exits", "--json")).out)
    assert record["executionId"] not in {e["executionId"] for e in later["exits"]}


async def test_errors_are_one_line_with_the_api_code(cli: Cli, wb: DaemonHandle) -> None:
    missing = await cli("show", "ex_01JD0000000000000000000000")
    assert missing.code == 125 and missing.out == b""
    assert missing.error == "workbench: not_found: no execution ex_01JD0000000000000000000000\n"
    usage = await cli("run", "--timeout", "soon", "--", "true")
    assert usage.code == 2 and usage.error.count("\n") == 1 and "bad duration" in usage.error
    unknown = await cli("nonsense")
    assert unknown.code == 2 and unknown.error.count("\n") == 1
    invalid = await cli("run", "--cwd", "/does/not/exist", "--", "true")
    assert invalid.code == 125 and invalid.error.startswith("workbench: invalid_request: ")
    wrong = await cli("ls", env=cli.env(WORKBENCH_TOKEN="wrong-token-0123456789"))
    assert wrong.code == 125 and wrong.error.startswith("workbench: unauthorized: ")
    down = await cli("ls", env=cli.env(WORKBENCH_URL=f"http://127.0.0.1:{free_port()}"))
    assert down.code == 125 and down.error.startswith("workbench: unavailable: cannot reach the daemon")
    assert down.error.count("\n") == 1


async def test_the_token_file_of_the_data_dir_is_found(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    home = tmp_path / "home-with-token"
    home.mkdir()
    env = cli.env(WORKBENCH_DATA_DIR=str(home))
    del env["WORKBENCH_TOKEN"]
    none = await cli("ls", env=env)
    assert none.code == 125 and "no token found" in none.error
    (home / "token").write_text(cli.token or "")
    assert (await cli("ls", env=env)).code == 0
    flag = await cli("ls", "--token", cli.token or "", env={**env, "WORKBENCH_DATA_DIR": str(tmp_path)})
    assert flag.code == 0


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import main

    def helped(*args: str) -> str:
        with pytest.raises(SystemExit) as exited:
            main([*args, "--help"])
        assert exited.value.code == 0
        return capsys.readouterr().out

    top = helped()
    for name in COMMANDS:
        assert name in top
        assert helped(name).startswith("usage: workbench " + name), name
    assert "secretEnv values are never kept" in " ".join(helped("rerun").split())
