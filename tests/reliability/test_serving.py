"""Starting and serving: what `workbench serve` says when it cannot serve, and how `scripts/serve`
starts for a user without root."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import TOKEN

#: A log line of the daemon (`logging`'s format in api/serve.py), as opposed to a message of its own.
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} [A-Z]+ ")


def _messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip() and not _LOG_LINE.match(line)]


def test_a_busy_port_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """Promise 7 at start: a bind that fails is one line naming the address, and exit status 2."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
        env.update({"WORKBENCH_TOKEN": TOKEN, "WORKBENCH_DATA_DIR": str(tmp_path / "data")})
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "serve", "--bind", f"127.0.0.1:{port}"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    messages = _messages(done.stderr)
    assert len(messages) == 1, done.stderr
    assert f"127.0.0.1:{port}" in messages[0] and "in use" in messages[0], messages
