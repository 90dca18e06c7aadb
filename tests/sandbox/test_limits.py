"""Limits: fork and memory bombs are stopped (where the machine has the controllers) and killable."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import LIMIT_CPU, LIMIT_FILE_SIZE, LIMIT_OOM, Containment, Limits, SpawnError, Supervisor
from sandbox._cgroups import read_keyed

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

# The leader forks a sleep before the bomb and waits for it, so that it stays alive without
# forking (as a pid namespace's init, its exit would end the bomb before the limit is hit).
FORK_BOMB = "sleep 300 & s=$!; :(){ :|:& };:; wait $s"
MEMORY_BOMB = "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))\n"


def tasks_in(pids_dir: str) -> int:
    """How many tasks a pids cgroup counts now."""
    with open(os.path.join(pids_dir, "pids.current")) as f:
        return int(f.read())


async def test_fork_bomb_is_capped_and_killable(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Cancel is hard: a fork bomb stays under max_processes and dies with the whole tree."""
    if kit.caps.pids is None:
        pytest.skip(f"no pids controller: {kit.caps.reasons.get('pids')}")
    limits = Limits(max_processes=40)
    info = await sup.spawn(kit.spec("bomb", ["bash", "-c", FORK_BOMB], containment, limits=limits))
    pids_dir = info.pids_cgroup or info.cgroup
    assert pids_dir is not None
    events = os.path.join(pids_dir, "pids.events")
    await kit.wait_until(lambda: read_keyed(events).get("max", 0) > 0)  # the bomb hit the limit
    assert tasks_in(pids_dir) <= 40
    await sup.signal("bomb", signal.SIGKILL)
    with trio.fail_after(15):
        await sup.wait_empty("bomb")
    assert kit.tagged() == []
    await sup.release("bomb")
    assert not kit.exists(pids_dir)


async def test_memory_bomb_is_oom_killed(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """A memory bomb is stopped by the memory limit, and the status says the OOM killer did it."""
    if kit.caps.memory is None:
        pytest.skip(f"no memory controller: {kit.caps.reasons.get('memory')}")
    limits = Limits(memory_bytes=100 << 20)
    await sup.spawn(kit.spec("bomb", [kit.python, "-c", MEMORY_BOMB], containment, limits=limits))
    with trio.fail_after(20):
        status = await sup.wait_exited("bomb")
        await sup.wait_empty("bomb")
    assert status.signal == signal.SIGKILL
    assert status.limit == LIMIT_OOM
    assert status.oom_kills is not None and status.oom_kills >= 1
    assert status.memory_peak_bytes is not None and status.memory_peak_bytes <= 100 << 20


async def test_memory_bomb_under_a_shell_is_reported(sup: Supervisor, kit: Kit) -> None:
    """The OOM kill of a child is reported even when the leader (a shell) exits with 137."""
    if kit.caps.memory is None:
        pytest.skip(f"no memory controller: {kit.caps.reasons.get('memory')}")
    script = f"{kit.python} -c '{MEMORY_BOMB}'; exit $?"
    await sup.spawn(kit.spec("bomb", ["bash", "-c", script], limits=Limits(memory_bytes=100 << 20)))
    with trio.fail_after(20):
        status = await sup.wait_exited("bomb")
    assert (status.exit_code, status.limit) == (128 + signal.SIGKILL, LIMIT_OOM)


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("exec head -c 100000 /dev/zero > big", (None, signal.SIGXFSZ)),
        ("head -c 100000 /dev/zero > big; exit $?", (128 + signal.SIGXFSZ, None)),
    ],
    ids=["leader", "child-of-shell"],
)
async def test_file_size_limit(
    sup: Supervisor, kit: Kit, script: str, expected: tuple[int | None, int | None]
) -> None:
    """RLIMIT_FSIZE stops a writer, and the status names the file size limit."""
    limits = Limits(max_file_size_bytes=4096)
    await sup.spawn(kit.spec("ex", ["bash", "-c", script], limits=limits))
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
    assert (status.exit_code, status.signal) == expected
    assert status.limit == LIMIT_FILE_SIZE
    assert (kit.root / "ex" / "big").stat().st_size == 4096


async def test_cpu_limit(sup: Supervisor, kit: Kit) -> None:
    """RLIMIT_CPU stops a spinning process with SIGXCPU, and the status names the cpu limit."""
    await sup.spawn(kit.spec("ex", ["bash", "-c", "while :; do :; done"], limits=Limits(cpu_seconds=1)))
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
    assert (status.signal, status.limit) == (signal.SIGXCPU, LIMIT_CPU)


async def test_open_files_limit(sup: Supervisor, kit: Kit) -> None:
    """RLIMIT_NOFILE is applied to the process."""
    await sup.spawn(kit.spec("ex", ["bash", "-c", "ulimit -n; ulimit -c"], limits=Limits(max_open_files=64)))
    with trio.fail_after(10):
        await sup.wait_exited("ex")
    assert kit.out("ex") == "64\n0\n"


async def test_impossible_memory_limit_fails_the_spawn_cleanly(sup: Supervisor, kit: Kit) -> None:
    """Bad input changes nothing: a limit cgroup v1 refuses ends the spawn, leaving nothing."""
    if kit.caps.memory != "v1":
        pytest.skip("only cgroup v1 refuses a memory limit below the usage (v2 OOM-kills instead)")
    spec = kit.spec("ex", ["sleep", "300"], limits=Limits(memory_bytes=4096))
    with pytest.raises(SpawnError, match="cannot set the memory limit to 4096 bytes"):
        await sup.spawn(spec)
    assert "ex" not in sup.known()
    assert kit.tagged() == []
