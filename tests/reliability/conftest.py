"""Reliability tests run the daemon as a real process, SIGKILL it, and start it again."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import pg
from tests.conftest import TOKEN
from tests.ports import free_port
from workbench.client.base import no_certificates


class DaemonProcess:
    """`workbench serve` as a child process on a fixed port and data dir, across restarts."""

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
        self.env.update({"WORKBENCH_TOKEN": TOKEN, "WORKBENCH_DATA_DIR": str(data_dir)})
        if pg.current is not None:
            self.env["WORKBENCH_STORE_URL"] = pg.current.url_for(data_dir)
        self.env.update(env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"daemon-{self.port}.log"
        #: What its certificate is verified with once it serves HTTPS (`use_tls`).
        # (Over plain HTTP, a context loading no certificates: httpx would read the system's store
        # for every client, about 30 ms of CPU, and `wait_healthy` makes one per try.)
        self.verify: Any = no_certificates()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60, verify=self.verify
        )

    def use_tls(self, cert: Path, key: Path, ca: Path) -> None:
        """Serve HTTPS with `cert`/`key`; verify it (and other nodes) against `ca`."""
        self.env.update(WORKBENCH_TLS_CERT=str(cert), WORKBENCH_TLS_KEY=str(key), WORKBENCH_TLS_CA=str(ca))
        self.url = f"https://127.0.0.1:{self.port}"
        self.verify = ssl.create_default_context(cafile=str(ca))
        self.client.close()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60, verify=self.verify
        )

    def start(self, *, wait: bool = True) -> subprocess.Popen[bytes]:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "workbench", "serve", "--bind", f"127.0.0.1:{self.port}"],
                env=self.env,
                stdout=log,
                stderr=log,
            )
        if wait:
            self.wait_healthy()
        return self.proc

    def wait_healthy(self, within_s: float = 30.0) -> None:
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"the daemon exited with {self.proc.returncode}: {self.log_text()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=1, verify=self.verify).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        raise AssertionError(f"the daemon did not become healthy: {self.log_text()}")

    def kill9(self) -> None:
        """SIGKILL the daemon (only the daemon: its supervisor and executions live on)."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self.client.close()
        self.client = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60, verify=self.verify
        )

    def stop(self, within_s: float = 30.0) -> int:
        """SIGTERM: a graceful stop; returns the exit status."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=within_s)

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    # -- API helpers ---------------------------------------------------------------------

    def start_bash(self, command: str, **body: Any) -> dict[str, Any]:
        response = self.client.post(
            "/v1/executions/workbench_bash", json={"command": command, "background": True, **body}
        )
        assert response.status_code == 202, response.text
        record: dict[str, Any] = response.json()
        return record

    def get(self, execution_id: str) -> dict[str, Any]:
        record: dict[str, Any] = self.client.get(f"/v1/executions/{execution_id}").json()
        return record

    def wait(self, execution_id: str, wait_ms: int = 60_000) -> dict[str, Any]:
        # The client's own timeout (60 s) must not end a longer wait before the daemon answers it.
        response = self.client.post(
            f"/v1/executions/{execution_id}/wait",
            json={"waitTimeoutMs": wait_ms},
            timeout=max(60.0, wait_ms / 1000 + 15),
        )
        assert response.status_code == 200, response.text
        record: dict[str, Any] = response.json()["execution"]
        return record

    def events(self, execution_id: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after = 0
        while True:
            page = self.client.get(f"/v1/executions/{execution_id}/events", params={"after": after}).json()
            out.extend(page["events"])
            if page["nextAfter"] == after:
                return out
            after = page["nextAfter"]

    def output(self, execution_id: str, stream: str = "stdout") -> str:
        return "".join(
            e["outputDelta"]
            for e in self.events(execution_id)
            if e["eventType"] == "output" and e["stream"] == stream
        )

    def close(self) -> None:
        self.begin_close()
        self.end_close()

    def begin_close(self) -> None:
        """Close the client and tell the daemon to stop (SIGTERM), without waiting for it."""
        self.client.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def end_close(self) -> None:
        """Wait for the daemon `begin_close` told to stop; SIGKILL it after 30 s."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture
def daemon_process(tmp_path: Path) -> Iterator[Any]:
    """A factory of daemon processes on data dirs under tmp_path; everything is stopped at the end."""
    made: list[DaemonProcess] = []

    def make(data_dir: Path | None = None, **env: str) -> DaemonProcess:
        handle = DaemonProcess(data_dir or tmp_path / "data", **env)
        made.append(handle)
        return handle

    yield make
    # A graceful stop (WORKBENCH_SHUTDOWN_MODE=kill, the default) ends every tree and the
    # supervisor: the leak check then finds nothing of this test alive. All are told first, so
    # that the daemons of a test stop side by side.
    for handle in made:
        handle.begin_close()
    for handle in made:
        handle.end_close()


def kill_supervisor(data_dir: Path) -> None:
    """SIGKILL the sandbox supervisor of a data dir (it outlives a killed daemon by design)."""
    pid_file = data_dir / "run" / "shim.pid"
    pid = int(pid_file.read_text().strip())
    os.kill(pid, signal.SIGKILL)
