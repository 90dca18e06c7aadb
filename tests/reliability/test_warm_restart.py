"""Pre-started interpreters never outlive their daemon: a SIGKILL of it (the shim kills them), or of
it and the shim (they read the end of their stdin, a pre-started sandbox's the end of its socket,
and exit), and the next daemon starts fresh."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

import sandbox
from tests import procs
from tests.e2e.test_sandbox_image import REASON as SANDBOX_REASON
from tests.reliability.conftest import DaemonProcess, kill_supervisor


def run_python(daemon: DaemonProcess, code: str, image: str = "host") -> dict[str, Any]:
    body = {"language": "python", "code": code, "waitTimeoutMs": 60_000, "image": image}
    response = daemon.client.post("/v1/executions/workbench_code", json=body)
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record


def waiting_interpreters(data_dir: Path, count: int, *, host: bool = True) -> list[int]:
    """The pids of `count` pre-started interpreters once they wait (their proc.json files), and
    on the `host` image once their start-up is over (their started files)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = []
        for proc in (data_dir / "warm").glob("warm-*/proc.json"):
            if host and not (proc.parent / "started").exists():
                continue
            try:
                pids.append(int(proc.read_text().split('"pid":')[1].split(",")[0]))
            except (OSError, IndexError, ValueError):
                pass
        if len(pids) >= count:
            return pids
        time.sleep(0.02)
    raise AssertionError("the pool did not fill")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


def test_a_killed_daemons_pool_dies_and_the_next_daemon_warms_again(daemon_process: Any) -> None:
    daemon: DaemonProcess = daemon_process(WORKBENCH_WARM_POOL="2")
    daemon.start()
    assert run_python(daemon, "print(1)")["status"] == "completed"
    pids = waiting_interpreters(daemon.data_dir, 2)
    daemon.kill9()
    assert gone_within(pids, 10), "the pre-started interpreters of a killed daemon lived on"
    daemon.start()
    record = run_python(daemon, "import os; print(os.getpid())")
    assert record["status"] == "completed"
    new = waiting_interpreters(daemon.data_dir, 2)
    assert not set(new) & set(pids)
    # A warm run (named like any execution once claimed) is adopted after a SIGKILL like a cold one.
    code = "import time; time.sleep(1.5); print('done')"
    body = {"language": "python", "code": code, "background": True}
    response = daemon.client.post("/v1/executions/workbench_code", json=body)
    assert response.status_code == 202, response.text
    eid = response.json()["executionId"]
    deadline = time.monotonic() + 20
    while daemon.get(eid)["status"] != "running" and time.monotonic() < deadline:
        time.sleep(0.02)
    metrics = daemon.client.get("/metrics").text
    assert 'workbench_warm_starts_total{start="warm"} 1.0' in metrics, metrics
    daemon.kill9()
    daemon.start()
    record = daemon.wait(eid)
    assert record["status"] == "completed" and daemon.output(eid) == "done\n", record


def _tree(pids: list[int]) -> list[int]:
    """`pids` and all their descendants (those still there)."""
    found: list[int] = []
    for pid in pids:
        try:
            top = psutil.Process(pid)
            found += [top.pid, *(p.pid for p in top.children(recursive=True))]
        except psutil.NoSuchProcess:
            continue
    return list(dict.fromkeys(found))


@pytest.mark.parametrize("image", ["host", "sandbox"])
def test_a_pool_whose_daemon_and_shim_were_killed_exits(daemon_process: Any, image: str) -> None:
    if image == "sandbox" and (SANDBOX_REASON is not None or os.geteuid() != 0):
        pytest.skip(SANDBOX_REASON or "a sandbox is warmed under a root daemon only")
    daemon: DaemonProcess = daemon_process(WORKBENCH_WARM_POOL="1")
    daemon.start()
    assert run_python(daemon, "pass", image)["status"] == "completed"
    pids = waiting_interpreters(daemon.data_dir, 1, host=image == "host")
    if image == "sandbox":  # the whole tree: sh, bubblewrap (twice) and the interpreter
        # Looked at until it is whole: the tree of a pool's refill may still be starting.
        deadline = time.monotonic() + 20
        while len(pids := _tree(pids)) < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(pids) >= 4, pids
    # Stopped first, so that the shim dies before its client leaves (which would kill them).
    assert daemon.proc is not None
    os.kill(daemon.proc.pid, signal.SIGSTOP)
    kill_supervisor(daemon.data_dir)
    daemon.kill9()
    assert gone_within(pids, 10), "a pre-started interpreter outlived its daemon and shim"
    assert not any(alive(p) for p in pids) and os.path.isdir(daemon.data_dir / "warm")
    # Their keepers (the inits of their pid namespaces) are left alone while no shim runs: the
    # next shim on the data dir kills them as it starts.
    lone = procs.processes_mentioning(str(daemon.data_dir / "run" / "workbench-keeper"))
    caps = sandbox.detect()
    assert lone or not (caps.cgroup and caps.pidns), "the interpreter's keeper was not left"
    daemon.start()
    assert gone_within(lone, 10), "a keeper whose tree ended outlived the next shim's start"
