"""Killing whole trees under each containment, escapees included, and the SIGTERM grace."""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import Containment, ExitStatus, Supervisor
from tests.procs import PYTHON_ME, SHELL_ME, host_pid

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

# Each process records itself (one line each, `SHELL_ME`) in the file "pids" of the cwd, then
# sleeps; `host_pid` finds it on the host, also inside a pid namespace with its own /proc.
RECORD = SHELL_ME + '; echo "$me" >> pids; exec "$@"\n'
ESCAPEES = {
    "background child": "bash record sleep 300 &",
    "setsid child": "setsid bash record sleep 300 &",
    "double fork": "bash -c 'bash record sleep 300 &' &",
    "ignores SIGTERM": "bash -c 'trap \"\" TERM; exec bash record sleep 300' &",
    "python setsid": (
        "{python} -c 'import os, time; os.setsid(); me = "
        + PYTHON_ME
        + '; open("pids", "a").write(me + "\\n"); time.sleep(300)\' &'
    ),
}


def tree_script(python: str) -> str:
    lines = [line.format(python=python) for line in ESCAPEES.values()]
    leader = SHELL_ME + '; echo "$me" >> pids'
    return "\n".join([*lines, leader, "wait"])


async def test_sigkill_kills_every_escapee(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Cancel is hard: setsid, double fork, SIGTERM-ignoring and python setsid children all die."""
    spec = kit.spec("ex", ["bash", "-c", tree_script(kit.python)], containment)
    (kit.root / "ex" / "record").write_text(RECORD)
    await sup.spawn(spec)
    pids = [host_pid(p) for p in await kit.wait_lines(kit.root / "ex" / "pids", len(ESCAPEES) + 1)]
    assert all(kit.alive(pid) for pid in pids)
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
        await sup.wait_empty("ex")
    assert status.signal == signal.SIGKILL
    assert [pid for pid in pids if kit.alive(pid)] == []
    assert sup.known()["ex"].empty
    await sup.release("ex")
    assert "ex" not in sup.known()


async def test_sigterm_grace_runs_the_trap(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Cancel with grace: SIGTERM reaches the leader first and its trap runs, then it exits 0."""
    script = "trap 'echo bye >> log; exit 0' TERM; echo ready >> log; sleep 300 & wait"
    await sup.spawn(kit.spec("ex", ["bash", "-c", script], containment))
    await kit.wait_lines(kit.root / "ex" / "log", 1)
    await sup.signal("ex", signal.SIGTERM)
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
        await sup.wait_empty("ex")
    assert status == ExitStatus(0, None)
    assert (kit.root / "ex" / "log").read_text() == "ready\nbye\n"


async def test_tree_outliving_its_leader_is_waited(sup: Supervisor, kit: Kit) -> None:
    """Dead is judged by the containment: the leader's exit alone does not make the tree empty."""
    # The host's pid, from the host's /proc: in a pid namespace (cgroup, pidns) $$ is its own.
    script = f"setsid bash -c '{SHELL_ME}; echo $me >> pids; exec sleep 300' & sleep 0.05; echo $$ >> pids"
    await sup.spawn(kit.spec("ex", ["bash", "-c", script]))
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
    assert not sup.known()["ex"].empty
    escapee = host_pid((await kit.wait_lines(kit.root / "ex" / "pids", 2))[0])
    assert kit.alive(escapee)
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("ex")
    assert not kit.alive(escapee)


async def test_signal_after_the_end_is_harmless(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Terminal is final: signalling a finished tree changes nothing."""
    await sup.spawn(kit.spec("ex", ["true"], containment))
    with trio.fail_after(10):
        await sup.wait_empty("ex")
    await sup.signal("ex", signal.SIGKILL)
    await sup.signal("ex", signal.SIGTERM)
    assert sup.known()["ex"].status == ExitStatus(0, None)


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


async def test_a_process_leaving_its_cgroup_dies_with_the_tree(sup: Supervisor, kit: Kit) -> None:
    """Cancel is hard: a (root) process that writes itself into another cgroup's cgroup.procs
    is still in the tree's pid namespace, killed with its keeper; the shim is out of its reach."""
    import os

    from sandbox._cgroups import find_hierarchies

    caps = kit.caps
    v2, _ = find_hierarchies(_read("/proc/self/mountinfo"))
    if not (caps.cgroup and caps.pidns and v2 is not None and os.geteuid() == 0):
        pytest.skip("needs cgroup v2 and pid namespaces, as root")
    script = (
        f"(echo $BASHPID > {v2.mountpoint}/cgroup.procs; {SHELL_ME};"
        " echo $me >> pids; exec sleep 300) & echo $PPID >> ppid; sleep 300"
    )
    info = await sup.spawn(kit.spec("ex", ["bash", "-c", script], Containment.CGROUP))
    assert info.pidns and info.keeper is not None
    escapee = host_pid((await kit.wait_lines(kit.root / "ex" / "pids", 1))[0])
    assert (await kit.wait_lines(kit.root / "ex" / "ppid", 1)) == ["0"]  # the shim is not in reach
    assert f"0::{v2.root}\n" in _read(f"/proc/{escapee}/cgroup")  # it left the execution's cgroup
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("ex")
    assert not kit.alive(escapee)


async def test_under_cgroup_the_leader_is_no_init_and_orphans_leave_no_zombies(
    sup: Supervisor, kit: Kit
) -> None:
    """Exit statuses stay exact with a pid namespace: the keeper is its init, the leader a child of
    the shim beside it, so a signal the leader sends itself ends it; orphans are reaped at once."""
    if not (kit.caps.cgroup and kit.caps.pidns):
        pytest.skip("needs cgroup v2 and pid namespaces")
    info = await sup.spawn(kit.spec("self", ["bash", "-c", "kill -TERM $$"], Containment.CGROUP))
    assert info.keeper is not None and info.pidns
    first = info.keeper[0]
    with trio.fail_after(10):
        assert await sup.wait_exited("self") == ExitStatus(None, signal.SIGTERM)
        await sup.wait_empty("self")
    # Alone in its namespace, it need not be waited for: killed, it is gone a moment later.
    await kit.wait_until(lambda: not kit.alive(first))
    script = "for i in 1 2 3 4 5; do (sleep 0.01 &); done; echo go > started; sleep 300"
    info = await sup.spawn(kit.spec("orphans", ["bash", "-c", script], Containment.CGROUP))
    assert info.keeper is not None
    await kit.wait_lines(kit.root / "orphans" / "started", 1)
    keeper = info.keeper[0]

    def children() -> str:
        with open(f"/proc/{keeper}/task/{keeper}/children") as f:
            return f.read()

    await kit.wait_until(lambda: children() == "")  # their parents died: reparented, then reaped
    await sup.signal("orphans", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("orphans")
    await kit.wait_until(lambda: not kit.alive(keeper))
