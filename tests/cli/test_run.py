"""`workbench run`, `code` and `rerun` through a real subprocess against a real daemon."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from pathlib import Path

import trio

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle

#: 7 MB of numbered lines on stdout (past the 5 MiB event budget), then bytes that are not UTF-8 on stderr.
BIG = (
    "import sys\n"
    "out = sys.stdout.buffer\n"
    "for i in range(70000):\n"
    "    out.write(b'%07d ' % i + b'x' * 91 + b'\\n')\n"
    "out.flush()\n"
    "sys.stderr.buffer.write(b'err \\xff\\xfe tail\\n')\n"
)
BIG_OUT = b"".join(b"%07d " % i + b"x" * 91 + b"\n" for i in range(70000))
BIG_ERR = b"err \xff\xfe tail\n"


async def test_run_streams_stdout_and_stderr_apart_and_exits_with_the_code(cli: Cli) -> None:
    """Promise 1 at the CLI: the command's own exit code, stdout and stderr kept apart, nothing extra."""
    ran = await cli("run", "--", "echo out; echo err >&2; exit 3")
    assert (ran.code, ran.out, ran.err) == (3, b"out\n", b"err\n")
    ok = await cli("run", "--", "true")
    assert (ok.code, ok.out, ok.err) == (0, b"", b"")


async def test_several_words_are_quoted_one_by_one(cli: Cli) -> None:
    ran = await cli.ok("run", "--", "printf", "%s|", "a b", "$HOME", "c")
    assert ran.out == b"a b|$HOME|c|"


async def test_timed_out_exits_124_and_a_signal_128_plus_n(cli: Cli, wb: DaemonHandle) -> None:
    timed = await cli("run", "--timeout", "300ms", "--", "sleep 30")
    assert timed.code == 124, timed
    # The lines docs/cli.md shows: `workbench: CODE: ID: MESSAGE`.
    assert re.fullmatch(r"workbench: timeout: ex_\w+: the deadline of 300 ms passed\n", timed.error), timed
    killed = await cli("run", "--", "kill -TERM $$")
    assert killed.code == 128 + signal.SIGTERM, killed
    assert re.fullmatch(r"workbench: signal: ex_\w+: killed by SIGTERM\n", killed.error), killed


async def test_output_past_the_budget_and_not_utf8_is_byte_exact(cli: Cli, tmp_path: Path) -> None:
    """Promise 1: 7 MB on stdout and invalid UTF-8 on stderr reach the terminal byte for byte."""
    script = tmp_path / "big.py"
    script.write_text(BIG)
    ran = await cli("run", "--", f"{sys.executable} {script}")
    assert ran.code == 0, ran.err[-300:]
    assert len(ran.out) == len(BIG_OUT) and ran.out == BIG_OUT
    assert ran.err == BIG_ERR


async def test_invalid_utf8_mid_stream_then_valid_text(cli: Cli) -> None:
    ran = await cli.ok("run", "--", "printf 'ok \\xff\\xfe then'; sleep 0.1; printf ' more\\n'; echo e >&2")
    assert ran.out == b"ok \xff\xfe then more\n"
    assert ran.err == b"e\n"


async def test_a_real_replacement_character_is_kept(cli: Cli) -> None:
    """U+FFFD written by the process is valid UTF-8: no artifact, and the journal text is exact."""
    ran = await cli.ok("run", "--", "printf 'a \\xef\\xbf\\xbd b\\n'")
    assert ran.out == "a \ufffd b\n".encode()


async def test_options_reach_the_execution(cli: Cli, tmp_path: Path) -> None:
    stdin = tmp_path / "in.txt"
    stdin.write_text("from a file\n")
    ran = await cli.ok(
        "run",
        "--cwd",
        str(tmp_path),
        "--env",
        "GREETING=hi there",
        "-e",
        "OTHER=2",
        "--stdin",
        str(stdin),
        "--session",
        "s-1",
        "--metadata",
        '{"ticket": 7}',
        "--",
        'read line; echo "$line|$PWD|$GREETING|$OTHER"',
    )
    assert ran.out == f"from a file|{tmp_path}|hi there|2\n".encode()
    piped = await cli.ok("run", "--stdin", "-", "--", "cat", stdin=b"piped\n")
    assert piped.out == b"piped\n"
    listing = json.loads((await cli.ok("ls", "--session", "s-1", "--json")).out)
    (record,) = listing["executions"]
    assert record["metadata"] == {"ticket": 7} and record["env"]["GREETING"] == "hi there"


async def test_background_prints_the_id_and_idempotency_key_replays(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 8 at the CLI: the same --idempotency-key returns the same execution."""
    first = await cli.ok("run", "--background", "--idempotency-key", "k-1", "--", "sleep 0.2; echo done")
    again = await cli.ok("run", "-b", "--idempotency-key", "k-1", "--", "sleep 0.2; echo done")
    execution_id = first.text.strip()
    assert execution_id.startswith("ex_") and len(execution_id) == 29
    assert again.text.strip() == execution_id
    record = await wb.wait(execution_id)
    assert record["status"] == "completed"
    reused = await cli("run", "-b", "--idempotency-key", "k-1", "--", "echo other")
    assert reused.code == 125 and reused.error.startswith("workbench: idempotency_key_reused: ")


async def test_detach_starts_detached_and_returns(cli: Cli, wb: DaemonHandle) -> None:
    ran = await cli.ok("run", "--detach", "--", "sleep 0.1")
    record = await wb.wait(ran.text.strip())
    assert record["detached"] is True


async def test_code_from_a_file_and_from_stdin(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "prog.py"
    source.write_text("import sys\nprint(6 * 7)\nsys.exit(4)\n")
    ran = await cli("code", "-l", "python", str(source))
    assert (ran.code, ran.out) == (4, b"42\n")
    piped = await cli.ok("code", "--language", "bash", "-", stdin=b"echo from stdin\n")
    assert piped.out == b"from stdin\n"
    bad = await cli("code", "-l", "cobol", str(source))
    assert bad.code == 125 and bad.error.startswith("workbench: unsupported_language: ")


async def test_rerun_starts_the_same_spec_again(cli: Cli, wb: DaemonHandle, tmp_path: Path) -> None:
    first = await cli(
        "run",
        "--cwd",
        str(tmp_path),
        "-e",
        "X=1",
        "--metadata",
        '{"m": 1}',
        "--timeout",
        "5m",
        "--",
        'echo "$X $PWD"; exit 2',
    )
    assert first.code == 2
    old = (await wb.client.get("/v1/executions")).json()["executions"][0]
    again = await cli("rerun", old["executionId"])
    assert (again.code, again.out) == (2, f"1 {tmp_path}\n".encode())
    new = (await wb.client.get("/v1/executions")).json()["executions"][0]
    assert new["executionId"] != old["executionId"] and new["rerunOf"] == old["executionId"]
    for key in ("command", "cwd", "env", "metadata", "timeoutMs", "image", "sessionId"):
        assert new[key] == old[key], key
    shown = await cli.ok("show", old["executionId"])
    assert "reruns:" in shown.text and new["executionId"] in shown.text
    trace = await cli.ok("events", new["executionId"])
    assert f"rerun of {old['executionId']}" in trace.text.splitlines()[0]
    background = await cli.ok("rerun", "--background", old["executionId"])
    assert background.text.strip().startswith("ex_")
    await wb.wait(background.text.strip())


async def test_it_runs_where_it_is_called_when_the_daemon_is_local(cli: Cli, tmp_path: Path) -> None:
    """The caller's working directory, unless --cwd or --session choose another."""
    here = tmp_path / "project"
    here.mkdir()
    (here / "marker").write_text("x")
    ran = await cli.ok("run", "--", "pwd; ls", cwd=here)
    assert ran.out == f"{here}\nmarker\n".encode()
    code = await cli.ok("code", "-l", "python", "-", stdin=b"import os; print(os.getcwd())", cwd=here)
    assert code.out == f"{here}\n".encode()
    elsewhere = await cli.ok("run", "--cwd", str(tmp_path), "--", "pwd", cwd=here)
    assert elsewhere.out == f"{tmp_path}\n".encode()
    session = await cli.ok("run", "--session", "s-2", "--", "pwd", cwd=here)
    assert session.text.rstrip().endswith("/s-2") and str(here) not in session.text
    record = json.loads((await cli.ok("show", "--json", "@last")).out)
    assert record["cwd"] == session.text.rstrip()


async def test_a_caller_in_a_removed_directory_runs_in_the_workspace(cli: Cli, tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    argv = " ".join(cli.argv("run", "--", "pwd"))
    # bash removes the directory it is in, then becomes the CLI, whose getcwd() then fails.
    script = f'cd "{gone}" && rmdir "{gone}" && exec {argv}'
    with trio.fail_after(60):
        done = await trio.run_process(
            ["bash", "-c", script],
            stdin=b"",
            capture_stdout=True,
            capture_stderr=True,
            env=cli.env(),
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().rstrip().endswith("/default")


async def test_the_environment_is_clean_unless_asked_for(cli: Cli) -> None:
    """--env-from-shell passes the caller's variables, never a WORKBENCH_* one (the token)."""
    env = cli.env(MY_SETTING="from the shell", PATH="/opt/mine:" + os.environ["PATH"])
    show = 'echo "${MY_SETTING:-unset}|${WORKBENCH_TOKEN:-none}|${PATH%%:*}"'
    clean = await cli("run", "--", show, env=env)
    assert clean.code == 0 and clean.text.split("|")[:2] == ["unset", "none"], clean
    passed = await cli("run", "--env-from-shell", "--", show, env=env)
    assert passed.code == 0 and passed.out == b"from the shell|none|/opt/mine\n", passed
    over = await cli("run", "--env-from-shell", "-e", "MY_SETTING=flag", "--", show, env=env)
    assert over.out.startswith(b"flag|none|"), over


async def test_piped_stdin_is_fed_unless_refused(cli: Cli) -> None:
    piped = await cli.ok("run", "--", "cat; echo end", stdin=b"hi\n")
    assert piped.out == b"hi\nend\n"
    refused = await cli.ok("run", "--no-stdin", "--", "cat; echo end", stdin=b"hi\n")
    assert refused.out == b"end\n"
    binary = await cli("run", "--", "cat", stdin=b"\xff\xfe")
    assert binary.code == 2 and binary.error.count("\n") == 1 and "--no-stdin" in binary.error
    too_much = await cli("run", "--", "wc -c", stdin=b"a" * 2_000_000)
    assert too_much.code == 125 and too_much.error.startswith("workbench: payload_too_large: ")
    assert "--no-stdin" in too_much.error
    both = await cli("run", "--stdin", "-", "--no-stdin", "--", "cat")
    assert both.code == 2 and "--no-stdin" in both.error


async def test_node_pins_the_run_and_show_names_it(cli: Cli, wb: DaemonHandle) -> None:
    """`--node` reaches the start (a single daemon refuses another node's id); `show` says the node."""
    here = (await wb.run("true"))["nodeId"]
    ran = await cli.ok("run", "--node", here, "--", "echo pinned")
    assert ran.text == "pinned\n"
    started = (await cli.ok("run", "-b", "--node", here, "--", "true")).text.strip()
    record = await wb.wait(started)
    assert record["nodeId"] == here and record["cwd"] != str(Path.cwd())
    shown = (await cli.ok("show", started)).text
    assert any(line.split() == ["node:", here] for line in shown.splitlines()), shown
    refused = await cli("run", "--node", "no-such-node", "--", "true")
    assert refused.code == 125 and "invalid_request" in refused.error and "no-such-node" in refused.error
