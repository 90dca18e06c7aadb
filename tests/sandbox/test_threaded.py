"""Threaded v2 cgroups: the spawn's thread-only move, killing and listing such a cgroup, and
the shim leaving nothing behind.

On a machine whose cgroup v2 hierarchy holds none of the limits' controllers (they are on v1
beside it) a root shim makes its trees' v2 cgroups threaded (`sandbox._tree_cgroups`). These
tests need such a machine (and root); elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from sandbox import Containment, Supervisor, open_supervisor
from sandbox import _cgroups as cg
from sandbox._tree_cgroups import THREADED_SUFFIX
from tests.sandbox.conftest import PYTHON, Kit, capabilities


def _hybrid_reason() -> str | None:
    caps = capabilities()
    if os.geteuid() != 0:
        return "needs root"
    if not (caps.cgroup and caps.pidns):
        return "no cgroup v2 containment with pid namespaces here"
    if cg.V2 in (caps.memory, caps.pids):
        return "the limits' controllers are on cgroup v2 here (threaded cgroups cannot hold memory)"
    return None


hybrid = pytest.mark.skipif(_hybrid_reason() is not None, reason=_hybrid_reason() or "")


@pytest.fixture
def threaded_cgroup() -> Iterator[str]:
    """A threaded cgroup (and its threaded domain) of the test's own, removed at the end."""
    v2_parent = capabilities().v2_parent
    assert v2_parent is not None
    domain = os.path.join(v2_parent, f"workbench-test-{os.getpid()}-{os.urandom(3).hex()}")
    child = os.path.join(domain, "t")
    os.mkdir(domain)
    os.mkdir(child)
    cg.make_threaded(child)
    yield child
    for pid in cg.procs(domain):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for directory in (child, domain):
        with contextlib.suppress(OSError):
            cg.write_file(os.path.join(directory, "cgroup.freeze"), "0")
    cg.remove_tree(domain)


def _start_in(cgroup: str, script: str, tmp: Path) -> subprocess.Popen[bytes]:
    """Start `script` (python) and move it into the threaded `cgroup` before it goes on."""
    go = tmp / "go"
    code = f"import os, time\nwhile not os.path.exists({str(go)!r}): time.sleep(0.005)\n{script}"
    proc = subprocess.Popen([PYTHON, "-c", code], cwd=tmp, start_new_session=True)
    domain = os.path.dirname(cgroup)
    cg.write_file(os.path.join(domain, "cgroup.procs"), str(proc.pid))
    cg.write_file(os.path.join(cgroup, "cgroup.threads"), str(proc.pid))
    go.touch()
    return proc


@hybrid
async def test_kill_of_a_threaded_cgroup_kills_a_forking_tree(threaded_cgroup: str, tmp_path: Path) -> None:
    """Cancel is hard: a threaded cgroup has no cgroup.kill, yet `kill` ends every process of it,
    a tree still forking (children born while it is frozen and killed) and setsid escapees."""
    script = (
        "import subprocess\n"
        "for _ in range(8):\n"
        "    subprocess.Popen(['setsid', 'sleep', '300'])\n"
        "while True:\n"
        "    subprocess.Popen(['sleep', '300'])\n"
        "    time.sleep(0.001)\n"
    )
    proc = _start_in(threaded_cgroup, script, tmp_path)
    await Kit.wait_until(lambda: len(cg.procs(threaded_cgroup)) >= 20)
    with pytest.raises(OSError):  # what the fallback is for
        cg.write_file(os.path.join(threaded_cgroup, "cgroup.kill"), "1")
    cg.kill(threaded_cgroup)
    await Kit.wait_until(lambda: cg.populated(threaded_cgroup) is False)
    assert proc.wait(10) == -signal.SIGKILL


@hybrid
async def test_procs_lists_each_process_of_a_threaded_cgroup_once(
    threaded_cgroup: str, tmp_path: Path
) -> None:
    """Its cgroup.procs cannot be read; `procs` names each process once, threads or not."""
    with pytest.raises(OSError):
        cg.read_file(os.path.join(threaded_cgroup, "cgroup.procs"))
    script = (
        "import threading\n"
        "for _ in range(3):\n"
        "    threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\n"
        "open('started', 'w').close()\n"
        "time.sleep(300)\n"
    )
    proc = _start_in(threaded_cgroup, script, tmp_path)
    try:
        await Kit.wait_until(lambda: (tmp_path / "started").exists())
        assert len((cg.read_file(os.path.join(threaded_cgroup, "cgroup.threads")) or "").split()) == 4
        assert cg.procs(threaded_cgroup) == [proc.pid]
        assert cg.procs(os.path.dirname(threaded_cgroup)) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()


@hybrid
async def test_a_tree_is_born_in_a_threaded_cgroup_and_the_shim_stays_out(sup: Supervisor, kit: Kit) -> None:
    """The spawn moves the shim's thread alone: the tree's cgroup is threaded, the shim's own is
    the threaded domain's `shim`, and nothing of the tree is in it."""
    await sup.spawn(kit.spec("ex", ["sleep", "300"], Containment.CGROUP))
    info = sup.known()["ex"].info
    assert info.cgroup is not None
    assert cg.read_file(os.path.join(info.cgroup, "cgroup.type")) == "threaded\n"
    domain = os.path.dirname(info.cgroup)
    assert domain.endswith(THREADED_SUFFIX)
    shim_cgroup = cg.read_file(f"/proc/{sup.shim_pid}/cgroup") or ""
    assert shim_cgroup.splitlines()[-1].endswith(f"{THREADED_SUFFIX}/shim")
    # Beside the shim, only keepers it started itself (none of the tree's processes).
    assert sup.shim_pid in cg.procs(os.path.join(domain, "shim"))
    assert info.pid not in cg.procs(os.path.join(domain, "shim"))
    assert cg.procs(info.cgroup) == [info.pid]
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("ex")
    await sup.release("ex")


@hybrid
async def test_a_shim_that_exits_leaves_no_cgroup_behind(kit: Kit) -> None:
    """The shim's threaded domain, its own cgroup in it and the trees' go when it exits,
    although helpers it started (the keeper factory) outlive its last moment."""
    v2_parent = capabilities().v2_parent
    assert v2_parent is not None
    domain = os.path.join(v2_parent, cg.base_name(str(kit.run_dir)) + THREADED_SUFFIX)
    async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=0.2) as sup:
        await sup.spawn(kit.spec("ex", ["true"], Containment.CGROUP))
        with trio.fail_after(10):
            await sup.wait_empty("ex")
        await sup.release("ex")
        assert Kit.exists(domain)
        shim = sup.shim_pid
        await sup.shutdown()
    await Kit.wait_until(lambda: not kit.alive(shim))
    # Removed once the helpers the shim started have gone too: more than 10 s once, on a
    # machine busy with the whole suite.
    await Kit.wait_until(lambda: not os.path.exists(domain), within_s=40)
