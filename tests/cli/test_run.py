"""`workbench run`, `code` and `rerun` through a real subprocess against a real daemon."""

from __future__ import annotations

import json
import signal
import subprocess
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
    assert timed.error.startswith("workbench: timeout: ex_") and timed.error.count("\n") == 1
    killed = await cli("run", "--", "kill -TERM $$")
    assert killed.code == 128 + signal.SIGTERM, killed
    assert "SIGTERM" in killed.error


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
    assert reused.code == 1 and reused.error.startswith("workbench: idempotency_key_reused: ")


async def test_detach_starts_detached_and_returns(cli: Cli, wb: DaemonHandle) -> None:
    ran = await cli.ok("run", "--detach", "--", "sleep 0.1")
    record = await wb.wait(ran.text.strip())
    assert record["detached"] is True


async def test_sigint_cancels_the_execution_and_exits_130(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 3 at the CLI: Ctrl-C cancels the whole execution, waits for its end, exits 130."""
    process = await trio.lowlevel.open_process(
        cli.argv("run", "--", "echo started; sleep 30; echo never"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli.env(),
    )
    assert process.stdout is not None and process.stderr is not None
    with trio.fail_after(20):
        seen = b""
        while b"started\n" not in seen:
            seen += await process.stdout.receive_some()
        process.send_signal(signal.SIGINT)
        rest = b""
        while chunk := await process.stdout.receive_some():
            rest += chunk
        await process.wait()
    assert process.returncode == 130
    assert b"never" not in seen + rest
    records = (await wb.client.get("/v1/executions")).json()["executions"]
    assert records[0]["status"] == "cancelled"
    assert records[0]["cancelReason"] == "interrupted (Ctrl-C)"


async def test_code_from_a_file_and_from_stdin(cli: Cli, tmp_path: Path) -> None:
    source = tmp_path / "prog.py"
    source.write_text("import sys\nprint(6 * 7)\nsys.exit(4)\n")
    ran = await cli("code", "-l", "python", str(source))
    assert (ran.code, ran.out) == (4, b"42\n")
    piped = await cli.ok("code", "--language", "bash", "-", stdin=b"echo from stdin\n")
    assert piped.out == b"from stdin\n"
    bad = await cli("code", "-l", "cobol", str(source))
    assert bad.code == 1 and bad.error.startswith("workbench: unsupported_language: ")


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
