"""`workbench batch`, `ls --wide`, usage in `show`, and `--secret-env` through a real subprocess."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle

SECRET = "cli-secret-4b1d2c"


async def test_batch_of_commands_exits_like_its_outcome(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    lines = b"# a comment\necho one\n\nexit 3\necho three\n"
    ran = await cli("batch", "--bash", "--concurrency", "2", "-", stdin=lines)
    assert ran.code == 1, ran
    printed = ran.text.splitlines()
    assert len(printed) == 3 and sum("failed (exit 3)" in line for line in printed) == 1
    assert re.fullmatch(r"workbench: ex_\w+ partial_failed: 2 of 3 items completed\n", ran.error), ran
    batch = (await wb.client.get("/v1/executions", params={"kind": "batch"})).json()["executions"][0]
    assert [i["executionKind"] for i in batch["items"]] == ["workbench_bash"] * 3
    assert batch["concurrency"] == 2


async def test_batch_of_start_bodies_with_json_and_background(
    cli: Cli, wb: DaemonHandle, tmp_path: Path
) -> None:
    source = tmp_path / "items.jsonl"
    source.write_text(
        json.dumps({"command": "echo bash", "env": {"X": "1"}})
        + "\n"
        + json.dumps({"language": "sh", "code": "echo code"})
        + "\n"
    )
    ran = await cli.ok("batch", "--json", "--fail-fast", str(source))
    record = json.loads(ran.out)
    assert record["status"] == "completed" and record["failFast"] is True
    assert [i["executionKind"] for i in record["items"]] == ["workbench_bash", "workbench_code"]
    background = await cli.ok("batch", "-b", "--bash", "-", stdin=b"true\n")
    assert background.text.strip().startswith("ex_")
    await wb.wait(background.text.strip())
    bad = await cli("batch", str(tmp_path / "missing.jsonl"))
    assert bad.code == 2 and "cannot read" in bad.error
    source.write_text("not json\n")
    assert (await cli("batch", str(source))).code == 2
    empty = await cli("batch", "--bash", "-", stdin=b"\n# nothing\n")
    assert empty.code == 2 and "no item" in empty.error
    refused = await cli("batch", "--bash", "--concurrency", "0", "-", stdin=b"true\n")
    assert refused.code == 2 and "--concurrency" in refused.error
    too_many = await cli("batch", "--bash", "-", stdin=b"true\n" * 1001)
    assert too_many.code == 125 and too_many.error.startswith("workbench: invalid_request:")


async def test_ls_wide_and_show_tell_the_usage(cli: Cli, wb: DaemonHandle) -> None:
    record = await wb.run("head -c 3000000 /dev/zero | md5sum")
    wide = await cli.ok("ls", "--wide", "--no-trunc")
    header, row = wide.text.splitlines()[:2]
    assert header.split()[:8] == ["ID", "KIND", "STATUS", "EXIT", "AGE", "DURATION", "CPU", "PEAK"]
    assert row.split()[0] == record["executionId"] and row.split()[7] != "-"
    shown = await cli.ok("show", record["executionId"])
    assert "usage:" in shown.text and "peak memory" in shown.text and "version:" in shown.text


async def test_secret_env_is_passed_and_never_shown(cli: Cli, wb: DaemonHandle) -> None:
    env = cli.env(MY_SECRET=SECRET)
    digest = hashlib.sha256(SECRET.encode()).hexdigest()
    check = f'[ "$(printf %s "$MY_SECRET" | sha256sum | cut -c1-64)" = "{digest}" ] && echo ok'
    ran = await cli("run", "--secret-env", "MY_SECRET", "--", check, env=env)
    assert (ran.code, ran.out) == (0, b"ok\n")
    record = (await wb.client.get("/v1/executions")).json()["executions"][0]
    assert record["secretEnvNames"] == ["MY_SECRET"] and SECRET not in json.dumps(record)
    shown = await cli.ok("show", record["executionId"])
    assert any(line.split() == ["secret", "env:", "MY_SECRET"] for line in shown.text.splitlines())
    assert SECRET not in shown.text
    refused = await cli("rerun", record["executionId"])
    assert refused.code == 125 and "MY_SECRET" in refused.error and SECRET not in refused.error
    again = await cli("rerun", "--secret-env", f"MY_SECRET={SECRET}", record["executionId"])
    assert (again.code, again.out) == (0, b"ok\n")
    missing = await cli("run", "--secret-env", "NOT_SET_HERE_X", "--", "true")
    assert missing.code == 2 and "NOT_SET_HERE_X" in missing.error


async def test_wait_on_a_batch_exits_like_batch_does(cli: Cli, wb: DaemonHandle) -> None:
    """A batch whose items did not all complete is 1 for `wait` as for `batch`, not the CLI's 125."""
    cases = (
        ((), b"true\nexit 3\n", "partial_failed"),
        ((), b"exit 3\n", "failed"),
        (("--fail-fast",), b"exit 3\nsleep 30\n", "failed"),  # error.code fail_fast
    )
    for flags, lines, status in cases:
        started = await cli.ok("batch", "-b", *flags, "--bash", "-", stdin=lines)
        batch_id = started.text.strip()
        waited = await cli("wait", batch_id)
        assert waited.code == 1, waited
        assert (await wb.wait(batch_id))["status"] == status
        assert (await cli("wait", batch_id, batch_id)).code == 1


async def test_a_bad_line_is_located_in_stdin_or_in_the_file_it_is_in(cli: Cli, tmp_path: Path) -> None:
    piped = await cli("batch", "-", stdin=b'{"command": "true"}\nnot json\n')
    assert piped.code == 2 and "stdin line 2: not JSON" in piped.error and "FILE" not in piped.error, piped
    listed = await cli("batch", "-", stdin=b"[1]\n")
    assert listed.code == 2 and "stdin line 1: a start body must be a JSON object" in listed.error, listed
    source = tmp_path / "items.jsonl"
    source.write_text("# first\nnot json\n")
    in_file = await cli("batch", str(source))
    assert in_file.code == 2 and f"{source} line 2: not JSON" in in_file.error, in_file
    empty = await cli("batch", "-", stdin=b"# nothing\n")
    assert empty.code == 2 and "stdin holds no item" in empty.error, empty
