"""Warm starts on the `sandbox` image: a pre-started sandbox, given its execution's files by the
shim, is what a cold start of that execution would be.

Each test runs the same code cold (the pool off) and warm (a pre-started sandbox of the same
session waiting), and compares what the two processes saw of themselves and of the filesystem.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from tests.e2e.test_sandbox_image import REASON
from tests.e2e.test_warm_start import PROBE, _alive, outcome, pool_ready, probe_of, run_code
from workbench.core.warm import MAX_KINDS

pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
    pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox is given its files by a root shim only"),
]

#: What the sandboxed process sees besides `PROBE`: its namespaces against the host's (given by
#: the test as HOST_NS), its privileges, its mounts (without their ids), the directories that
#: lead to its files, and what it may write.
BOX = r"""
import errno, json, os, sys
ID = os.environ["WORKBENCH_EXECUTION_ID"]
def masked(text):
    return text.replace(ID, "ID")
namespaces = {n: os.readlink(f"/proc/self/ns/{n}") == HOST_NS[n] for n in sorted(os.listdir("/proc/self/ns"))}
status = {}
for line in open("/proc/self/status"):
    key, _, value = line.partition(":")
    if key in ("Uid", "Gid", "Groups", "NoNewPrivs", "Seccomp") or key.startswith("Cap"):
        status[key] = value.split()
# Without the mount ids and the device numbers of the sandbox's own fresh tmpfs, proc and devpts.
mounts = [masked(" ".join(line.split()[2:])) for line in open("/proc/self/mountinfo")]
mounts = [("0:fresh " + m.partition(" ")[2]) if m.split()[0] not in HOST_DEVICES else m for m in mounts]
code = os.path.dirname(os.path.realpath(__file__))
walk = []
path = code
while path != "/":
    st = os.stat(path)
    walk.append([masked(path), oct(st.st_mode), st.st_uid, st.st_gid, [masked(n) for n in os.listdir(path)]])
    path = os.path.dirname(path)
def writes(path):
    try:
        with open(path, "a"):
            return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
access = {
    "root": writes("/usr/warm-probe"), "code": writes(__file__),
    "progress": writes(os.environ["WORKBENCH_PROGRESS"]), "workspace": writes("made-by-the-probe"),
    "tmp": sorted(os.listdir("/tmp")),
}
print(json.dumps({"namespaces": namespaces, "status": status, "mounts": mounts, "walk": walk,
                  "access": access, "pid": os.getpid(), "ppid": os.getppid()}, sort_keys=True))
"""


#: `PROBE` without its namespaces (against its parent's, which is root's here: `BOX` has them).
_NS = PROBE[PROBE.index("namespaces = {") : PROBE.index("limits = {")]
SANDBOX_PROBE = PROBE.replace(_NS, "namespaces = None\n")


def host_devices() -> set[str]:
    """The device numbers of the host's mounts: a sandbox's fresh file systems (tmpfs, proc,
    devpts) have others, new at each start."""
    with open("/proc/self/mountinfo") as f:
        return {line.split()[2] for line in f}


def host_namespaces() -> dict[str, str]:
    return {n: os.readlink(f"/proc/self/ns/{n}") for n in os.listdir("/proc/self/ns")}


async def cold_and_warm(wb: DaemonHandle, code: str, **body: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The record of `code` run cold, then warm, on the sandbox image in session s1."""
    body = {"image": "sandbox", "sessionId": "s1", **body}
    pool = wb.daemon.executor.warm
    size, pool.size = pool.size, 0
    cold = await run_code(wb, code, **body)
    pool.size = size
    if not any(pool.idle.values()):
        await run_code(wb, "pass", **body)  # the template of this kind of start
    return cold, await until_warm(wb, code, like=cold, **body)


async def until_warm(
    wb: DaemonHandle, code: str, like: dict[str, Any] | None = None, **body: Any
) -> dict[str, Any]:
    """The record of `code` once it started warm: a sandbox is claimed once it has started (a
    start before that is cold, and keeps it). Each cold one must have ended as `like` did (its
    outcome), or completed."""
    pool = wb.daemon.executor.warm
    await pool_ready(wb)
    with ceilings.within(20, "a warm start"):
        while True:
            before = dict(pool.starts)
            record = await run_code(wb, code, **body)
            if pool.starts["warm"] == before["warm"] + 1:
                return record
            if like is None:
                assert record["status"] == "completed", record
            else:
                assert outcome(record) == outcome(like), (record, like)
            await trio.sleep(0.05)


async def test_a_warm_sandbox_is_the_process_and_filesystem_a_cold_one_would_be(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    body = {"env": {"FOO": "bar", "ZED": "1"}, "stdin": "input line\n"}
    code = f"HOST_NS = {host_namespaces()!r}\nHOST_DEVICES = {host_devices()!r}\n" + BOX + SANDBOX_PROBE
    cold, warm = await cold_and_warm(wb, code, **body)
    assert cold["stderr"] == warm["stderr"] == "", (cold["stderr"], warm["stderr"])
    a, b = (r["stdout"].splitlines() for r in (cold, warm))
    box_a, box_b = json.loads(a[0]), json.loads(b[0])
    assert box_a["mounts"] == box_b["mounts"], "\n".join(
        difflib.unified_diff(box_a["mounts"], box_b["mounts"], lineterm="")
    )
    assert box_a == box_b
    probe = probe_of({"status": cold["status"], "stdout": a[1]})
    other = probe_of({"status": warm["status"], "stdout": b[1]})
    # The rlimits apart: a cold sandbox's leader (sh) may fork bubblewrap before the shim sets
    # its limits right after its exec (then only the soft NOFILE and FSIZE it inherited from the
    # shim hold); a warm one's interpreter has exactly its leader's, those a cold one is meant
    # to have.
    cold_limits, warm_limits = probe.pop("limits"), other.pop("limits")
    assert probe == other, json.dumps({k: (v, other[k]) for k, v in probe.items() if other.get(k) != v})
    inherited = ("RLIMIT_NOFILE", "RLIMIT_FSIZE")
    assert [cold_limits[k][0] for k in inherited] == [warm_limits[k][0] for k in inherited]
    image = wb.daemon.executor.images["sandbox"].limits
    wanted = {
        "RLIMIT_NPROC": image.max_processes,
        "RLIMIT_NOFILE": image.max_open_files,
        "RLIMIT_FSIZE": image.max_file_size_bytes,
    }
    assert {k: warm_limits[k] for k in wanted} == {k: [v, v] for k, v in wanted.items()}, warm_limits
    assert probe["env"]["FOO"] == "bar" and probe["stdin"] == "input line\n"
    assert "PWD" in probe["env"] and probe["envOrder"] == json.loads(b[1])["envOrder"]
    # What the comparison is worth: the sandbox is there, with its user, binds and limits.
    assert box_a["status"]["Uid"][0] == "65534" and box_a["status"]["CapEff"] == ["0000000000000000"]
    assert box_a["namespaces"]["mnt"] is False and box_a["namespaces"]["pid"] is False
    assert {k: v for k, v in box_a["access"].items() if k != "tmp"} == {
        "root": "EROFS",
        "code": "EROFS",
        "progress": "ok",
        "workspace": "ok",
    }, box_a["access"]
    assert any(m.endswith("/ID/code.py") or "/ID/code.py " in m for m in box_a["mounts"]), box_a["mounts"]
    assert (wb.data_dir / "workspaces").exists()


async def test_output_exit_codes_and_tracebacks_are_a_cold_sandboxs(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    cases = [
        "print('out'); import sys; print('err', file=sys.stderr); sys.exit(3)",
        "def f():\n    raise ValueError('boom')\nf()\n",
        "import os; os.kill(os.getpid(), 9)",
    ]
    for code in cases:
        cold, warm = await cold_and_warm(wb, code)
        assert outcome(cold) == outcome(warm), code


async def test_each_session_is_its_own_kind_and_a_context_is_unaffected(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    await run_code(wb, "pass", image="sandbox", sessionId="s1")
    await pool_ready(wb)
    # Another session's workspace: not the waiting sandbox (which binds s1's), a cold start.
    record = await run_code(wb, "import os; print(os.listdir('.'))", image="sandbox", sessionId="s2")
    assert record["status"] == "completed" and pool.starts["warm"] == 0, record
    assert len(pool.templates) == 2
    created = await wb.client.post(
        "/v1/contexts", json={"language": "python", "image": "sandbox", "sessionId": "s1"}
    )
    assert created.status_code == 201, created.text
    context_id = created.json()["contextId"]
    try:
        for cell, expected in (("x = 41", ""), ("print(x + 1)", "42\n")):
            record = await run_code(wb, cell, contextId=context_id)
            assert record["status"] == "completed" and record["stdout"] == expected, record
    finally:
        await wb.client.delete(f"/v1/contexts/{context_id}")
    assert pool.starts["warm"] == 0, "a context's cells are not warm starts"


async def test_a_workspace_made_again_is_not_the_one_a_waiting_sandbox_bound(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    await run_code(wb, "pass", image="sandbox", sessionId="s1")
    name = await pool_ready(wb)
    waiting_pid = wb.daemon.executor.supervisor.known()[name].info.pid
    workspace = wb.data_dir / "workspaces" / "admin" / "s1"
    shutil.rmtree(workspace)  # the waiting sandbox still binds the removed directory
    # Made again at once, with a file the removed one never had: a run in a sandbox bound to the
    # removed directory lists nothing. (A sandbox pre-started meanwhile binds the new one and may
    # rightly be claimed: counting warm starts here raced with that refill.)
    workspace.mkdir(mode=0o700)
    (workspace / "new-file").write_text("x")
    listing = "import os; print(sorted(os.listdir('.')))"
    with ceilings.within(20, "the sandbox bound to the removed workspace to be refused and killed"):
        while _alive(waiting_pid):
            record = await run_code(wb, listing, image="sandbox", sessionId="s1")
            assert record["status"] == "completed", record
            assert record["stdout"] == "['new-file']\n", "a sandbox bound to a removed workspace was used"
            await trio.sleep(0.05)
    before = pool.starts["warm"]
    record = await until_warm(wb, listing, image="sandbox", sessionId="s1")
    assert record["stdout"] == "['new-file']\n" and pool.starts["warm"] == before + 1, record


async def test_the_least_recently_used_kind_makes_way(make_daemon: Any) -> None:
    wb = await make_daemon(warm_pool=1)
    pool = wb.daemon.executor.warm
    known = wb.daemon.executor.supervisor.known
    sessions = [f"s{i}" for i in range(MAX_KINDS + 1)]
    await run_code(wb, "pass", image="sandbox", sessionId=sessions[0])
    first = known()[await pool_ready(wb)].info.pid
    for session in sessions[1:]:
        await run_code(wb, "pass", image="sandbox", sessionId=session)
    assert [box.cwd.rsplit("/", 1)[1] for box in pool.boxes.values()] == sessions[1:]
    with ceilings.within(20, "the waiting sandbox of the kind that made way to be killed"):
        while _alive(first):  # noqa: ASYNC110  # the pool has no event for it
            await trio.sleep(0.02)
    with ceilings.within(30, "the pool to fill for the kinds it keeps"):
        while sum(len(names) for names in pool.idle.values()) < MAX_KINDS:  # noqa: ASYNC110
            await trio.sleep(0.02)
    assert len(pool.idle) == MAX_KINDS
