"""Running the real `workbench` command line in a subprocess against an in-process daemon, with pipes
or on a real pseudo-terminal (its controlling terminal: Ctrl-C, the window size, a hang-up)."""

from __future__ import annotations

import fcntl
import os
import re
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle

# How long one CLI command may take (the longest any test runs is a wait of a few seconds).
EXIT_S = 60
# How long a test waits for a screen to show what it expects.
SCREEN_S = 20
#: Makes the pseudo-terminal the controlling terminal of a new session, then becomes the CLI.
LAUNCH = (
    "import fcntl, os, sys, termios; os.setsid(); fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.executable, [sys.executable, '-m', 'workbench', *sys.argv[1:]])"
)


class Ran:
    """A finished CLI process: its exit status and its stdout and stderr bytes."""

    def __init__(self, code: int, out: bytes, err: bytes) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def text(self) -> str:
        return self.out.decode()

    @property
    def error(self) -> str:
        return self.err.decode()

    def __repr__(self) -> str:
        return f"Ran(code={self.code}, out={self.out[:300]!r}, err={self.err[:300]!r})"


class Cli:
    """`python -m workbench ...` with WORKBENCH_URL and WORKBENCH_TOKEN pointing at a daemon."""

    def __init__(self, url: str, home: Path, token: str | None = TOKEN) -> None:
        self.url, self.home, self.token = url, home, token

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
        # A data dir of its own: no token file of the machine's is ever found by accident.
        env.update(WORKBENCH_URL=self.url, WORKBENCH_DATA_DIR=str(self.home), PYTHONUNBUFFERED="1")
        if self.token is not None:
            env["WORKBENCH_TOKEN"] = self.token
        env.update(extra)
        return env

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "workbench", *args]

    async def __call__(
        self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None, cwd: Path | None = None
    ) -> Ran:
        with ceilings.within(EXIT_S, f"`workbench {' '.join(args)}` to exit"):
            result = await trio.run_process(
                self.argv(*args),
                stdin=stdin,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                env=env or self.env(),
                cwd=cwd,
            )
        return Ran(result.returncode, result.stdout, result.stderr)

    async def ok(self, *args: str, stdin: bytes = b"", cwd: Path | None = None) -> Ran:
        """Run and expect exit status 0."""
        ran = await self(*args, stdin=stdin, cwd=cwd)
        assert ran.code == 0, ran
        return ran

    async def open(self, *args: str, **kw: Any) -> trio.Process:
        """Start the CLI with pipes for stdout and stderr (no stdin: it is not piped)."""
        return await trio.lowlevel.open_process(
            self.argv(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(),
            **kw,
        )

    async def typing(
        self, args: list[str], first: bytes, answered: bytes, then: bytes, between: Any = None
    ) -> tuple[int, bytes, bytes]:
        """Run the CLI with a piped stdin: type `first`, wait for `answered` on its stdout, await
        `between(nursery)` if given, type `then` and close stdin; (exit status, stdout, stderr)."""
        process = await trio.lowlevel.open_process(
            self.argv(*args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env(),
        )
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        out, err = bytearray(), bytearray()
        seen = trio.Event()

        async def read_all(stream: Any, into: bytearray) -> None:
            while chunk := await stream.receive_some():
                into += chunk
                if answered in out:
                    seen.set()

        with ceilings.within(60, f"`workbench {' '.join(args)}` typed into"):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_all, process.stdout, out)
                nursery.start_soon(read_all, process.stderr, err)
                await process.stdin.send_all(first)
                await seen.wait()
                if between is not None:
                    await between(nursery)
                await process.stdin.send_all(then)
                await process.stdin.aclose()
                code = await process.wait()
        return code, bytes(out), bytes(err)

    async def terminal(self, *args: str, rows: int = 30, cols: int = 100) -> Terminal:
        """Start the CLI on a pseudo-terminal of `rows` x `cols`."""
        main, child = os.openpty()
        fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        try:
            process = await trio.lowlevel.open_process(
                [sys.executable, "-c", LAUNCH, *args],
                stdin=child,
                stdout=child,
                stderr=child,
                env=self.env(TERM="xterm", COLUMNS=str(cols), LINES=str(rows)),
            )
        finally:
            os.close(child)
        os.set_blocking(main, False)
        return Terminal(main, process)


class Terminal:
    """A process on a pseudo-terminal: what it shows (`screen`, every byte), keys to it, a hang-up."""

    def __init__(self, main: int, process: trio.Process) -> None:
        self.main: int | None = main
        self.process = process
        self.screen = bytearray()

    async def _read(self) -> bool:
        assert self.main is not None
        await trio.lowlevel.wait_readable(self.main)
        try:
            data = os.read(self.main, 65536)
        except BlockingIOError:
            return True
        except OSError:  # EIO: nothing holds the other side any more
            return False
        self.screen.extend(data)
        return bool(data)

    async def expect(
        self, pattern: bytes | str, what: str = "", seconds: float = SCREEN_S
    ) -> re.Match[bytes]:
        """Read until the screen (since the start) matches `pattern` (a regex)."""
        regex = re.compile(pattern.encode() if isinstance(pattern, str) else pattern)
        with ceilings.within(
            seconds, what or f"the terminal to show {regex.pattern!r}: {bytes(self.screen)[-400:]!r}"
        ):
            while (match := regex.search(self.screen)) is None:
                if not await self._read():
                    raise AssertionError(
                        f"the terminal closed without {regex.pattern!r}: {bytes(self.screen)!r}"
                    )
            return match

    def type(self, keys: bytes) -> None:
        assert self.main is not None
        os.write(self.main, keys)

    async def finish(self, seconds: float = EXIT_S) -> int:
        """Read everything until the process exits; its exit status (-N: killed by signal N)."""
        with ceilings.within(seconds, "the process on the terminal to exit"):
            if self.main is not None:
                while await self._read():
                    pass
            return await self.process.wait()

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does: its session gets SIGHUP."""
        if self.main is not None:
            os.close(self.main)
            self.main = None

    def close(self) -> None:
        self.hang_up()
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)


@pytest.fixture
def cli(wb: DaemonHandle, tmp_path: Path) -> Cli:
    return Cli(wb.url, tmp_path / "client-home")
