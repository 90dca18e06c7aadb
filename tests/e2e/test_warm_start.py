"""Warm starts of stateless python code: a pre-started interpreter is what a cold start would be.

Each test runs the same code cold (the pool emptied and off) and warm (a pre-started interpreter
waiting), and compares what the two processes saw of themselves and what the API recorded.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from tests.e2e.test_metrics import samples
from tests.procs import host_pid
from workbench.core.warm import STARTED

#: What the process sees of itself; the two per-execution variables and its own ids are masked.
PROBE = r"""
import json, os, resource, signal, sys
ID = os.environ["WORKBENCH_EXECUTION_ID"]
own = {ID, os.environ["WORKBENCH_PROGRESS"]}
env = {k: v for k, v in os.environ.items() if v not in own}
cgroups = []
for line in open("/proc/self/cgroup").read().splitlines():
    number, controllers, path = line.split(":", 2)
    parent, leaf = os.path.split(path)
    cgroups.append([number, controllers, parent, leaf == ID or leaf.startswith("warm-")])
    v2 = "unified" if os.path.isdir("/sys/fs/cgroup/unified") else ""
    files = {"memory": ["memory.limit_in_bytes"], "pids": ["pids.max"]}
    # A threaded v2 cgroup (beside v1 controllers) lists its threads only: this one has one.
    v2_files = ["memory.max", "pids.max", "cgroup.procs", "cgroup.threads"]
    for name in files.get(controllers, v2_files if number == "0" else []):
        mount = v2 if number == "0" else controllers
        try:
            value = open(os.path.join("/sys/fs/cgroup", mount, path.lstrip("/"), name)).read()
        except OSError:
            continue
        # In its own pid namespace: its own pid, alone.
        own = name in ("cgroup.procs", "cgroup.threads") and value.split() == [str(os.getpid())]
        cgroups.append([name, "only this process" if own else value])
# Which namespaces it shares with pid 1 of the /proc it sees (the tree's keeper where the tree
# has a /proc of its own, else the host's init), and what that pid 1 is.
namespaces = {
    n: os.readlink(f"/proc/self/ns/{n}") == os.readlink(f"/proc/1/ns/{n}")
    for n in sorted(os.listdir("/proc/self/ns"))
}
namespaces["pid 1"] = os.path.basename(open("/proc/1/cmdline", "rb").read().split(b"\0")[0].decode())
limits = {n: resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")}
signals = {
    int(s): str(signal.getsignal(s))
    for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)
}
stdio = [
    (repr(s), s.seekable(), s.line_buffering, s.errors, type(s.buffer).__name__)
    for s in (sys.stdin, sys.stdout, sys.stderr)
]
umask = os.umask(0)
os.umask(umask)
ids = [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()]
print(json.dumps({
    "env": env, "envOrder": list(os.environ), "cwd": os.getcwd(), "ids": ids,
    "session": [os.getsid(0) == os.getpid(), os.getpgrp() == os.getpid()], "pid1": os.getpid() == 1,
    "cgroups": cgroups, "namespaces": namespaces, "limits": limits, "signals": signals,
    "umask": umask, "argv": [a.replace(ID, "ID") for a in sys.argv],
    "path": [p.replace(ID, "ID") for p in sys.path], "flags": list(sys.flags),
    "modules": sorted(sys.modules), "main": sorted(globals()), "file": __file__.replace(ID, "ID"),
    "stdio": stdio, "fds": sorted(os.listdir("/proc/self/fd")), "stdin": sys.stdin.read(),
    "importers": [k.replace(ID, "ID") for k in sys.path_importer_cache],
}, sort_keys=True))
"""


async def pool_ready(wb: DaemonHandle, *, started: bool = True) -> str:
    """Wait until an interpreter waits in the pool, its start-up over (`started`: on the host,
    where the pool looks for the file its driver makes; a sandbox's is the supervisor's to
    check); its name."""
    pool = wb.daemon.executor.warm
    with ceilings.within(20, "a pre-started interpreter to wait in the pool"):
        while True:
            for kind, names in pool.idle.items():
                for name in names:
                    if not started or kind in pool.boxes or (pool.directory / name / STARTED).exists():
                        return str(name)
            await trio.sleep(0.01)


async def run_code(wb: DaemonHandle, code: str, **body: Any) -> dict[str, Any]:
    response = await wb.client.post(
        "/v1/executions/workbench_code",
        json={"language": "python", "code": code, "waitTimeoutMs": 60_000, **body},
    )
    assert response.status_code == 201, response.text
    record: dict[str, Any] = response.json()
    return record | await streams(wb, record["executionId"])


async def streams(wb: DaemonHandle, execution_id: str) -> dict[str, str]:
    text = {"stdout": "", "stderr": ""}
    for event in await wb.events(execution_id):
        if event["eventType"] == "output":
            text[event["stream"]] += event["outputDelta"]
    return text


def outcome(record: dict[str, Any]) -> str:
    """What a run ended with (status, exit, error, output), its own id masked."""
    keys = ("status", "exitCode", "signal", "error", "stdout", "stderr")
    return json.dumps({k: record.get(k) for k in keys}).replace(record["executionId"], "")


async def cold_and_warm(wb: DaemonHandle, code: str, **body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record of `code` run cold, then warm (a pre-started interpreter claimed)."""
    pool = wb.daemon.executor.warm
    size, pool.size = pool.size, 0
    cold = await run_code(wb, code, **body)
    pool.size = size
    if not any(pool.idle.values()):
        await run_code(wb, "pass", **body)  # the template of this kind of start
    await pool_ready(wb)
    before = dict(pool.starts)
    warm = await run_code(wb, code, **body)
    assert pool.starts["warm"] == before["warm"] + 1, "the second run was not a warm start"
    return cold, warm


def probe_of(record: dict[str, Any]) -> dict[str, Any]:
    assert record["status"] == "completed", record
    result: dict[str, Any] = json.loads(record["stdout"])
    return result


async def test_a_warm_start_is_the_process_a_cold_start_would_be(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    body = {"env": {"FOO": "bar", "ZED": "1"}, "stdin": "input line\n", "sessionId": "s1"}
    cold, warm = await cold_and_warm(wb, PROBE, **body)
    a, b = probe_of(cold), probe_of(warm)
    assert a == b
    assert a["env"]["FOO"] == "bar" and a["stdin"] == "input line\n"
    if wb.daemon.executor.supervisor.capabilities.memory is not None:  # the image's limits, read back
        assert any(entry[0] in ("memory.limit_in_bytes", "memory.max") for entry in a["cgroups"]), a
    if wb.daemon.executor.context.containment.value == "cgroup":
        alone = (["cgroup.procs", "only this process"], ["cgroup.threads", "only this process"])
        assert any(entry in a["cgroups"] for entry in alone), a["cgroups"]
    assert a["namespaces"]["pid"] is False or wb.daemon.executor.context.containment.value != "pidns"
    assert cold["stderr"] == warm["stderr"] == ""


async def test_output_exit_codes_and_exceptions_are_a_cold_starts(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    cases = [
        "print('out'); import sys; print('err', file=sys.stderr); sys.exit(3)",
        "def f():\n    raise ValueError('boom')\nf()\n",
        "x = (\n",
        "import sys; sys.exit('a message')",
        "raise KeyboardInterrupt",
        "import os; os.kill(os.getpid(), 9)",
        "print(1)\n",
    ]
    for code in cases:
        cold, warm = await cold_and_warm(wb, code)
        assert outcome(cold) == outcome(warm), code


async def _tree_pids(wb: DaemonHandle, execution_id: str) -> list[int]:
    with ceilings.within(20, "the execution to print its pids"):
        while True:
            words = (await streams(wb, execution_id))["stdout"].split()
            if len(words) >= 3:
                return [host_pid(f"{words[0]} {pid}") for pid in words[1:3]]
            await trio.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


#: Prints its pid namespace, its own and its child's pids there (`host_pid` finds them).
TREE = (
    "import os, subprocess, sys, time\n"
    "child = subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
    "me = open('/proc/self/stat').read().split()[0]\n"
    "kids = open(f'/proc/self/task/{me}/children').read().split() or ['0']\n"
    "print(os.readlink('/proc/self/ns/pid'), me, kids[0], flush=True)\n"
    "time.sleep(300)\n"
)


async def test_cancel_and_deadline_kill_a_warm_runs_whole_tree(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    await run_code(wb, "pass")
    pool = wb.daemon.executor.warm
    for how in ("cancel", "deadline"):
        await pool_ready(wb)
        warm_before = pool.starts["warm"]
        extra = {"timeoutMs": 1500} if how == "deadline" else {}
        body = {"language": "python", "code": TREE, "background": True, **extra}
        response = await wb.client.post("/v1/executions/workbench_code", json=body)
        assert response.status_code == 202, response.text
        eid = response.json()["executionId"]
        pids = await _tree_pids(wb, eid)
        assert pool.starts["warm"] == warm_before + 1
        if how == "cancel":
            await wb.client.post(f"/v1/executions/{eid}/cancel", json={})
        record = await wb.wait(eid)
        assert record["status"] == ("cancelled" if how == "cancel" else "timed_out"), record
        assert not any(_alive(p) for p in pids), f"{how}: the tree {pids} outlived its execution"


async def test_each_interpreter_is_used_once_and_an_empty_pool_starts_cold(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    known = wb.daemon.executor.supervisor.known
    # Which interpreter ran: each tree has a pid namespace of its own (cgroup, pidns).
    tree_code = "import os; print(os.readlink('/proc/self/ns/pid'))"
    assert (await run_code(wb, tree_code))["status"] == "completed"
    assert pool.starts == {"warm": 0, "cold": 1}
    name = await pool_ready(wb)
    waiting_pid = known()[name].info.pid
    waiting = os.readlink(f"/proc/{waiting_pid}/ns/pid")
    warm = await run_code(wb, tree_code)
    assert pool.starts == {"warm": 1, "cold": 1} and warm["stdout"].strip() == waiting
    assert not _alive(waiting_pid), "a used interpreter was kept"
    # The pool refills, with a new interpreter; one taken away leaves it empty: the start is cold.
    (kind,) = pool.idle
    name = await pool_ready(wb)
    refilled = known()[name].info.pid
    assert refilled != waiting_pid and _alive(refilled)
    taken = pool.idle[kind].pop()
    try:
        cold = await run_code(wb, tree_code)
    finally:
        pool.idle[kind].append(taken)  # the pool kills it at the end
    assert pool.starts == {"warm": 1, "cold": 2} and cold["status"] == "completed"
    # Not the pooled interpreter (alive, its namespace held). Those of trees that ended are not
    # compared: the kernel gives a freed namespace's number to a new one.
    assert _alive(refilled) and cold["stdout"].strip() != os.readlink(f"/proc/{refilled}/ns/pid")
    got = samples((await wb.client.get("/metrics")).text)
    assert got[("workbench_warm_starts_total", (("start", "warm"),))] == 1
    assert got[("workbench_warm_starts_total", (("start", "cold"),))] == 2


async def test_the_pool_is_off_with_zero_and_for_other_starts(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=0)
    for _ in range(2):
        assert (await run_code(wb, "pass"))["status"] == "completed"
    pool = wb.daemon.executor.warm
    assert pool.starts == {"warm": 0, "cold": 2} and pool.templates == {}
    wb = await make_daemon(tmp_data(wb), warm_pool=1)
    pool = wb.daemon.executor.warm
    await run_code(wb, "pass")
    await pool_ready(wb)
    # A start-up variable of its own, an open stdin, another language: cold, the pool untouched.
    idle = {k: list(v) for k, v in pool.idle.items()}
    await run_code(wb, "pass", env={"PYTHONHASHSEED": "1"})
    await run_code(wb, "echo hi", language="bash")
    assert pool.starts["warm"] == 0 and {k: list(v) for k, v in pool.idle.items() if k in idle} == idle


def tmp_data(wb: DaemonHandle) -> Any:
    return wb.data_dir.parent / "data2"


async def test_stopping_the_daemon_kills_the_pool(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=2)
    await run_code(wb, "pass")
    pool = wb.daemon.executor.warm
    with ceilings.within(20, "the pool to fill"):
        while sum(len(n) for n in pool.idle.values()) < 2:  # noqa: ASYNC110  # the pool has no event
            await trio.sleep(0.01)
    known = wb.daemon.executor.supervisor.known()
    pids = [known[name].info.pid for names in pool.idle.values() for name in names]
    assert all(_alive(p) for p in pids)
    wb.shutdown.set()
    with ceilings.within(20, "the pool's interpreters to die with the daemon, their directories too"):
        while any(_alive(p) for p in pids) or any(os.scandir(wb.data_dir / "warm")):  # noqa: ASYNC110
            await trio.sleep(0.02)


async def test_an_interpreter_that_writes_while_starting_is_not_used(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    env = {"PYTHONWARNINGS": "bogus"}  # start-up writes a warning to stderr
    for _ in range(3):
        record = await run_code(wb, "print(1)", env=env)
        assert record["stdout"] == "1\n" and "Invalid -W option ignored" in record["stderr"], record
        await pool_ready(wb)
    assert pool.starts == {"warm": 0, "cold": 3}


async def test_an_interpreter_still_starting_is_not_claimed(make_daemon: Any, tmp_path: Any) -> None:
    """One whose start-up is slow and writes at its end is claimed only once it has started:
    what it wrote while starting would have gone to the pool's files, not the execution's."""
    site = tmp_path / "site"
    site.mkdir()
    # Slow in a pre-started interpreter only (run as `python -c DRIVER`): a cold start is not.
    (site / "sitecustomize.py").write_text(
        "import sys, time\nif sys.argv[:1] == ['-c']: time.sleep(3)\nsys.stderr.write('started\\n')\n"
    )
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    env = {"PYTHONPATH": str(site)}
    for _ in range(3):
        record = await run_code(wb, "print(1)", env=env)
        assert (record["stdout"], record["stderr"]) == ("1\n", "started\n"), record
        await pool_ready(wb, started=False)  # waiting in the pool, and still in its start-up
    assert pool.starts == {"warm": 0, "cold": 3}


async def test_an_interpreter_that_died_while_starting_is_discarded(make_daemon: Any, tmp_path: Any) -> None:
    """Not kept waiting for a start-up that will never end: the pool makes another."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import sys, time\nif sys.argv[:1] == ['-c']: time.sleep(60)\n")
    wb = await make_daemon(warm_pool=1)
    pool, known = wb.daemon.executor.warm, wb.daemon.executor.supervisor.known
    env = {"PYTHONPATH": str(site)}
    assert (await run_code(wb, "print(1)", env=env))["stdout"] == "1\n"
    name = await pool_ready(wb, started=False)  # in its start-up for a minute
    os.kill(known()[name].info.pid, signal.SIGKILL)
    with ceilings.within(20, "the supervisor to see the pre-started interpreter die"):
        while known()[name].status is None:  # noqa: ASYNC110
            await trio.sleep(0.01)
    assert (await run_code(wb, "print(2)", env=env))["stdout"] == "2\n"
    assert name not in [n for names in pool.idle.values() for n in names]
