"""Running the real `workbench` command line in a subprocess against an in-process daemon."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle

# How long one CLI command may take (the longest any test runs is a wait of a few seconds).
EXIT_S = 60


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

    async def __call__(self, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> Ran:
        with ceilings.within(EXIT_S, f"`workbench {' '.join(args)}` to exit"):
            result = await trio.run_process(
                self.argv(*args),
                stdin=stdin,
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                env=env or self.env(),
            )
        return Ran(result.returncode, result.stdout, result.stderr)

    async def ok(self, *args: str, stdin: bytes = b"") -> Ran:
        """Run and expect exit status 0."""
        ran = await self(*args, stdin=stdin)
        assert ran.code == 0, ran
        return ran


@pytest.fixture
def cli(wb: DaemonHandle, tmp_path: Path) -> Cli:
    return Cli(wb.url, tmp_path / "client-home")
