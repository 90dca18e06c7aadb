"""Starting and serving: what `workbench serve` says when it cannot serve, and how `scripts/serve`
starts for a user without root."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOKEN
from tests.ports import free_port
from workbench.client.base import no_certificates

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


def _path_without(tmp_path: Path, *missing: str) -> str:
    """A PATH of one directory linking every program of the usual ones, except `missing`."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for directory in ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            link = bindir / name
            if name in missing or link.exists() or link.is_symlink():
                continue
            target = os.path.join(directory, name)
            if os.access(target, os.X_OK) and not os.path.isdir(target):
                link.symlink_to(target)
    return str(bindir)


def _as_unprivileged_user() -> list[str]:
    """A prefix that runs a command as uid 1000 with no capability (a user namespace), or skips.

    `runuser -u nobody` cannot reach this checkout's interpreter (under /root, mode 0700); a user
    namespace mapping uid 1000 to the caller keeps file access and drops root and every capability.
    """
    prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    try:
        probe = subprocess.run([*prefix, "id", "-u"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        probe = None
    if probe is None or probe.returncode != 0 or probe.stdout.strip() != "1000":
        pytest.skip("cannot run a command as an unprivileged user here (no user namespaces)")
    return prefix


def test_scripts_serve_without_root_sudo_or_bubblewrap_serves_the_host_image(tmp_path: Path) -> None:
    """`scripts/serve` for a user with neither root nor sudo, where bubblewrap is missing and apt-get
    is there: the set-up says what it cannot install and goes on; the daemon serves `host` and says
    `sandbox` is unavailable."""
    root = Path(__file__).resolve().parents[2]
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(
        {
            "PATH": _path_without(tmp_path, "bwrap", "sudo"),
            "HOME": str(home),
            "WORKBENCH_TOKEN": TOKEN,
        }
    )
    assert shutil.which("apt-get", path=env["PATH"]), "the case to test: apt-get there, no root to run it"
    log = tmp_path / "serve.log"
    command = [
        str(root / "scripts" / "serve"),
        "--bind",
        f"127.0.0.1:{port}",
        "--data-dir",
        str(tmp_path / "data"),
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen([*_as_unprivileged_user(), *command], env=env, stdout=out, stderr=out)
    url = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, f"scripts/serve exited with {proc.returncode}: {log.read_text()}"
            assert time.monotonic() < deadline, f"the daemon did not become healthy: {log.read_text()}"
            try:
                if httpx.get(url + "/healthz", timeout=1, verify=no_certificates()).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        images = {i["name"]: i for i in httpx.get(url + "/v1/images", headers=headers).json()["images"]}
        assert images["host"]["available"] is True
        assert (
            images["sandbox"]["available"] is False and "bubblewrap" in images["sandbox"]["unavailableReason"]
        )
        ran = httpx.post(
            url + "/v1/executions/workbench_bash",
            json={"command": "echo hello from $(id -u)", "waitTimeoutMs": 30_000},
            headers=headers,
            timeout=60,
        ).json()
        assert ran["status"] == "completed", ran
        events = httpx.get(f"{url}/v1/executions/{ran['executionId']}/events", headers=headers).json()
        output = "".join(e["outputDelta"] for e in events["events"] if e["eventType"] == "output")
        assert output == "hello from 1000\n", "it ran as the unprivileged user"
        assert "bubblewrap" in log.read_text(), "the set-up says what it could not install"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
