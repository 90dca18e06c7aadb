"""The public surface of `workbench`, pinned; and what importing it (or running the CLI) loads."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import trio

import workbench
from tests import ceilings
from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle

PUBLIC = [
    "Artifact", "ArtifactList", "AsyncClient", "BadRequest", "CancelResult", "Capabilities", "Client",
    "Conflict", "DetachResult", "ErrorInfo", "Event", "EventPage", "Execution", "ExecutionKind",
    "ExecutionList", "ExecutionStatus", "Exit", "ExitList", "Forbidden", "Health",
    "IdempotencyKeyReused", "Image", "ImageIsolation", "ImageList", "ImageUnavailable",
    "InputBacklog", "InvalidRequest", "ItemStatus", "LiveEvent", "NodeUnavailable", "NotFound",
    "OnWaitTimeout", "OutputInfo",
    "PayloadTooLarge", "PreconditionFailed", "Preview", "PreviewFormat", "Progress", "QuotaExceeded",
    "StatusName",
    "StorageFull", "StreamName", "TooManyExecutions", "Unauthorized", "Unavailable", "UnknownImage",
    "UnsupportedLanguage", "Usage", "WaitResult", "WorkbenchError",
]  # fmt: skip

#: What the CLI must not load for a client command: the daemon side, and the client's own heavy imports.
HEAVY = ("trio", "quart", "quart_trio", "hypercorn", "sqlite3", "httpx", "pydantic", "http.client", "typing")


def test_the_public_surface_is_pinned() -> None:
    assert workbench.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(workbench, name) is not None
    from workbench.wire.errors import BY_CODE

    for cls in BY_CODE.values():
        if cls.code != "config_error":  # the daemon's own: a client never meets it
            assert getattr(workbench, cls.__name__) is cls
    assert set(dir(workbench)) >= set(PUBLIC)


def loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(out.split())


def test_importing_workbench_loads_nothing_heavy() -> None:
    loaded = loaded_after("import workbench, workbench.cli")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
    assert {"httpx", "pydantic"} <= loaded_after("from workbench import Client")


async def test_the_cli_run_path_stays_light(wb: DaemonHandle, tmp_path: Path) -> None:
    """`workbench run -- true` starts a new interpreter each time: it loads neither daemon nor client."""
    cli = Cli(wb.url, tmp_path / "client-home")
    probe = (
        "import atexit, sys\n"
        "atexit.register(lambda: print(' '.join(sorted(sys.modules)), file=sys.stderr))\n"
        "from workbench.cli import main\n"
        "main(['run', '--', 'echo light'])\n"
    )
    with ceilings.within(60, "`workbench run -- echo light` to exit"):
        result = await trio.run_process(
            [sys.executable, "-c", probe],
            stdin=b"",  # `run` reads a piped stdin to its end
            capture_stdout=True,
            capture_stderr=True,
            env=cli.env(),
            check=False,
        )
    assert result.returncode == 0 and result.stdout == b"light\n", result.stderr[-500:]
    loaded = set(result.stderr.decode().split())
    assert not loaded & set(HEAVY), loaded & set(HEAVY)
