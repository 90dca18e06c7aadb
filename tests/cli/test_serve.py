"""`workbench serve` as a subprocess: its banner says what a client must export, a bad WORKBENCH_BIND
is refused even under --bind, and its help lists the daemon's variables."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.cli.conftest import Cli
from workbench.core.settings import Settings

SERVE = [sys.executable, "-m", "workbench", "serve"]


async def banner(process: trio.Process) -> str:
    """What `serve` wrote to stderr up to the end of its banner (the line of what to export)."""
    assert process.stderr is not None
    log = bytearray()
    with ceilings.within(60, "the daemon's banner"):
        while b"clients find it with" not in log or not log.endswith(b"\n"):
            chunk = await process.stderr.receive_some()
            assert chunk, log.decode()
            log += chunk
    return log.decode()


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """No WORKBENCH_* of the test runner reaches the daemon under test."""
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **extra}


async def test_the_banner_says_what_to_export_and_the_cli_takes_it(tmp_path: Path) -> None:
    data_dir, sock = tmp_path / "data", tmp_path / "wb.sock"
    args = [*SERVE, "--bind", "127.0.0.1:0", "--unix-socket", str(sock), "--data-dir", str(data_dir)]
    process = await trio.lowlevel.open_process(args, env=clean_env(tmp_path), stderr=subprocess.PIPE)
    try:
        text = await banner(process)
        listening = re.search(r"workbench: listening on (http://127\.0\.0\.1:\d+), (unix://\S+)\n", text)
        assert listening and listening[2] == f"unix://{sock}", text
        export = re.search(r"workbench: clients find it with: export (.*)\n", text)
        assert export and export[1] == f"WORKBENCH_URL={listening[1]} WORKBENCH_DATA_DIR={data_dir}", text
        # What it announces is what the CLI takes: the socket's URL, and the data dir's token.
        cli = Cli(listening[2], data_dir, token=None)
        ran = await cli.ok("run", "--", "echo over the socket")
        assert ran.out == b"over the socket\n"
    finally:
        process.send_signal(signal.SIGTERM)
        with ceilings.within(60, "the daemon to stop"):
            await process.wait()


async def test_a_bad_bind_variable_is_refused_even_with_the_flag(tmp_path: Path) -> None:
    env = clean_env(tmp_path, WORKBENCH_BIND="nowhere")
    with ceilings.within(60, "`workbench serve` to refuse its settings"):
        done = await trio.run_process(
            [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")],
            env=env,
            check=False,
            capture_stderr=True,
        )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "workbench: bad value for WORKBENCH_BIND: 'nowhere': expected HOST:PORT, e.g. 127.0.0.1:8787\n"
    )


async def test_the_daemon_keeps_its_start_up_out_of_full_collections(tmp_path: Path) -> None:
    """Once it listens, what start-up made is frozen (`gc.freeze`): a full collection walks only
    what came after, instead of stopping the event loop for tens of milliseconds each time."""
    site, out = tmp_path / "site", tmp_path / "frozen"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import atexit, gc\n"
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(str(gc.get_freeze_count())))\n"
    )
    args = [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")]
    env = clean_env(tmp_path, PYTHONPATH=str(site))
    process = await trio.lowlevel.open_process(args, env=env, stderr=subprocess.PIPE)
    assert process.stderr is not None
    log = bytearray()
    try:
        with ceilings.within(60, "the daemon's banner"):
            while b"listening on" not in log:
                chunk = await process.stderr.receive_some()
                assert chunk, log.decode()
                log += chunk
    finally:
        process.send_signal(signal.SIGTERM)
        with ceilings.within(60, "the daemon to stop"):
            assert await process.wait() == 0
    # Its modules, app and routes: tens of thousands of objects.
    assert int(out.read_text()) > 10_000


async def test_a_data_dir_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    """A regular file, or a place where no directory can be made: one line naming it, exit 2."""
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    for data_dir, reason in ((a_file, "File exists"), (a_file / "sub", "Not a directory")):
        with ceilings.within(60, "`workbench serve` to refuse its data dir"):
            done = await trio.run_process(
                [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(data_dir)],
                env=clean_env(tmp_path),
                check=False,
                capture_stderr=True,
            )
        assert done.returncode == 2, done.stderr.decode()
        assert done.stderr.decode() == (
            f"workbench: the data dir {data_dir} cannot be used: {reason} ({data_dir})\n"
        )
    assert a_file.read_text() == "not a directory\n"


async def test_relative_paths_are_taken_from_where_serve_starts(tmp_path: Path) -> None:
    """A relative data dir, workspaces dir or Unix socket means one under the directory `serve`
    starts in: the banner says the absolute path, and executions run (their files are there)."""
    (tmp_path / "here").mkdir()
    args = [*SERVE, "--bind", "127.0.0.1:0", "--unix-socket", "wb.sock"]
    env = clean_env(tmp_path, WORKBENCH_DATA_DIR="relq", WORKBENCH_WORKSPACES_DIR="../spaces")
    here = tmp_path / "here"
    process = await trio.lowlevel.open_process(args, env=env, cwd=here, stderr=subprocess.PIPE)
    try:
        text = await banner(process)
        assert f", unix://{here}/wb.sock\n" in text and f"workbench: data dir {here}/relq\n" in text, text
        cli = Cli(f"unix://{here}/wb.sock", here / "relq", token=None)
        ran = await cli.ok("run", "--session", "s1", "--", "pwd")
        assert ran.out.decode() == f"{tmp_path}/spaces/admin/s1\n"
    finally:
        process.send_signal(signal.SIGTERM)
        with ceilings.within(60, "the daemon to stop"):
            await process.wait()


def test_every_path_setting_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    names = ("WORKBENCH_DATA_DIR", "WORKBENCH_IMAGES_DIR", "WORKBENCH_TOKENS_FILE")
    environ = dict.fromkeys(names, "rel/x")
    environ["WORKBENCH_WORKSPACES_DIR"] = "../ws"
    settings = Settings.load(environ, unix_socket=Path("s.sock"))
    assert settings.data_dir == settings.images_dir == settings.tokens_file == tmp_path / "rel" / "x"
    assert settings.workspaces_dir == tmp_path.parent / "ws"
    assert settings.unix_socket == tmp_path / "s.sock"
    assert Settings(data_dir=Path("d")).data_dir == tmp_path / "d"


async def test_a_tokens_file_others_can_read_is_warned_about_once(tmp_path: Path) -> None:
    """A tokens file of mode 0644 gets one warning at start, not one for each time it is read (it
    is checked before the data dir is made, and read again with the data dir's token)."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text('[[tokens]]\ntoken = "alice-token-0123456789abcdef"\nprincipal = "a"\nscopes = []\n')
    tokens.chmod(0o644)
    args = [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(tmp_path / "data")]
    env = clean_env(tmp_path, WORKBENCH_TOKENS_FILE=str(tokens))
    process = await trio.lowlevel.open_process(args, env=env, stderr=subprocess.PIPE)
    try:
        text = await banner(process)
    finally:
        process.send_signal(signal.SIGTERM)
        with ceilings.within(60, "the daemon to stop"):
            await process.wait()
    warnings = [line for line in text.splitlines() if "can be read by other users" in line]
    assert len(warnings) == 1 and "make it mode 0600" in warnings[0], text


async def test_a_daemon_whose_stderr_is_closed_serves_and_stops(tmp_path: Path) -> None:
    """`workbench serve 2>&1 | head -1`: once its reader is gone, the daemon's writes to stderr
    fail (EPIPE). It serves all the same, writing its log nowhere, and SIGTERM stops it."""
    data_dir, sock = tmp_path / "data", tmp_path / "wb.sock"
    args = [*SERVE, "--bind", "127.0.0.1:0", "--unix-socket", str(sock), "--data-dir", str(data_dir)]
    process = await trio.lowlevel.open_process(args, env=clean_env(tmp_path), stderr=subprocess.PIPE)
    try:
        assert process.stderr is not None
        with ceilings.within(60, "the daemon's first line"):
            assert await process.stderr.receive_some(1)
        await process.stderr.aclose()  # as `head -1` exits
        token = None
        with ceilings.within(60, "the daemon to answer"):
            while token is None:
                await trio.sleep(0.05)
                assert process.returncode is None, "the daemon exited"
                if sock.exists() and (data_dir / "token").exists():
                    token = (data_dir / "token").read_text().strip()
        cli = Cli(f"unix://{sock}", data_dir, token=token)
        with ceilings.within(60, "a run through the daemon"):
            assert (await cli.ok("run", "--", "echo served")).out == b"served\n"
    finally:
        process.send_signal(signal.SIGTERM)
        with ceilings.within(30, "the daemon to stop on SIGTERM"):
            await process.wait()
    assert process.returncode == 0
