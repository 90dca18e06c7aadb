"""A tree in a pid namespace of its own sees a /proc of that namespace: `$$`, `ps`, `pgrep` and
`pkill` name its own processes by the numbers its `kill` understands, as in a container."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import Containment, ExitStatus, Supervisor
from tests.procs import host_pid

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

VIEW = (
    'read -r me _ < /proc/self/stat; echo "self $me $$"\n'
    "sleep 300 & s=$!\n"
    # Forked at once, but a busy machine may run pgrep before the child has become sleep.
    'until read -r c < /proc/$s/comm && [ "$c" = sleep ]; do sleep 0.01; done\n'
    'echo "pgrep $(pgrep -x sleep) $s"\n'
    'echo "pid1 $(cat /proc/1/comm)"\n'
    'echo "ns $(readlink /proc/self/ns/pid) $s"\n'
    "until [ -e go ]; do sleep 0.01; done\n"
    'pkill -x sleep; wait $s; echo "pkill $?"\n'
)


async def test_a_cgroup_tree_sees_its_own_pids_in_its_own_proc(sup: Supervisor, kit: Kit) -> None:
    if not (kit.caps.cgroup and kit.caps.pidns and os.geteuid() == 0):
        pytest.skip("needs cgroups and pid namespaces, as root")
    info = await sup.spawn(kit.spec("ex", ["bash", "-c", VIEW], Containment.CGROUP))
    assert info.keeper is not None
    lines = await kit.wait_lines(kit.root / "ex" / "stdout", 4)
    words = dict((line.split(" ", 1)[0], line.split(" ", 1)[1]) for line in lines)
    me, dollar = words["self"].split()
    assert me == dollar  # /proc/self is the namespace's, as $$ is
    found, started = words["pgrep"].split()
    assert found == started  # pgrep sees the tree's sleep (not the keeper, nor the host's)
    assert words["pid1"] == "workbench-keepe"  # the keeper, named (comm keeps 15 characters)
    # The pids inside are the host's processes of that namespace.
    sleeper = host_pid(words["ns"])
    assert os.readlink(f"/proc/{sleeper}/exe").endswith("sleep")
    (kit.root / "ex" / "go").touch()
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
        await sup.wait_empty("ex")
    assert kit.out("ex").splitlines()[-1] == "pkill 143"  # its pkill killed its own sleep
