"""Keepers under ``cgroup`` as root: a burst beyond those held ready waits for the factory's (the
shim stays free meanwhile), when the factory is gone the shim starts its own, and a keeper the
shim took outlives the shim and its factory."""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING

import psutil
import pytest
import trio

from sandbox import UNKNOWN_EXIT, Containment, ExitStatus, Supervisor, open_supervisor
from sandbox._factory import READY
from tests import procs
from tests.sandbox.test_shim_lifecycle import wait_process_gone

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

#: Waits for the file "go", then says what its pid 1 is (the keeper, in the tree's own /proc).
SCRIPT = "until [ -e ../go ]; do sleep 0.01; done; cat /proc/1/comm"


def _needs_keepers(kit: Kit) -> None:
    if not (kit.caps.cgroup and kit.caps.pidns and os.geteuid() == 0):
        pytest.skip("needs cgroups and pid namespaces, as root")


async def _burst(sup: Supervisor, kit: Kit, count: int) -> None:
    """`count` spawns at once; each tree has a keeper of its own and sees it as its pid 1."""
    keepers: set[int] = set()

    async def one(i: int) -> None:
        info = await sup.spawn(kit.spec(f"ex{i}", ["bash", "-c", SCRIPT], Containment.CGROUP))
        assert info.keeper is not None
        keepers.add(info.keeper[0])

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for i in range(count):
                nursery.start_soon(one, i)
        assert len(keepers) == count
        (kit.root / "go").touch()
        for i in range(count):
            assert await sup.wait_exited(f"ex{i}") == ExitStatus(0, None)
            await sup.wait_empty(f"ex{i}")
            assert kit.out(f"ex{i}") == "workbench-keepe\n"
            await sup.release(f"ex{i}")


async def test_a_burst_beyond_the_ready_keepers_waits_for_the_factory(sup: Supervisor, kit: Kit) -> None:
    _needs_keepers(kit)
    await _burst(sup, kit, READY * 10)


def factory_of(sup: Supervisor, kit: Kit) -> int:
    factories: list[int] = [
        p.pid
        for p in psutil.Process(sup.shim_pid).children()
        if "sandbox._factory" in p.cmdline() and str(kit.run_dir) in p.cmdline()
    ]
    (factory,) = factories
    return factory


async def test_without_the_factory_the_shim_starts_the_keepers(sup: Supervisor, kit: Kit) -> None:
    _needs_keepers(kit)
    factory = factory_of(sup, kit)
    os.kill(factory, signal.SIGKILL)
    await wait_process_gone(factory)
    await _burst(sup, kit, READY * 2)
    log = (kit.run_dir / "shim.log").read_text()
    assert "the keeper factory is gone" in log


async def test_a_keeper_taken_just_before_the_shim_died_keeps_its_tree(kit: Kit) -> None:
    """The factory, ending with its shim, kills the keepers no tree took. One the shim took just
    before it died, before the factory heard so, holds a live tree: it lives on (else its whole
    pid namespace, the tree, dies with it), and the next shim takes the tree back."""
    _needs_keepers(kit)
    async with open_supervisor(kit.run_dir, python=kit.python, replace_dead_shim=True) as sup:
        factory = factory_of(sup, kit)
        made = psutil.Process(factory).children
        await procs.eventually(lambda: len(made()) >= READY, within_s=20)  # ready in the shim
        os.kill(factory, signal.SIGSTOP)  # it will hear of the take only after the shim's death
        try:
            info = await sup.spawn(kit.spec("live", ["sleep", "300"], Containment.CGROUP))
            assert info.keeper is not None and psutil.Process(info.keeper[0]).ppid() == factory
            old = sup.shim_pid
            os.kill(old, signal.SIGKILL)
            await wait_process_gone(old)
        finally:
            os.kill(factory, signal.SIGCONT)
        await wait_process_gone(factory)
        with trio.fail_after(20):
            # The next request starts a replacement shim, which takes the tree back.
            await sup.spawn(kit.spec("after", ["true"], Containment.CGROUP))
            assert sup.replacements == 1
            assert procs.alive(info.pid) and procs.alive(info.keeper[0])
            assert not sup.known()["live"].empty
            await sup.signal("live", signal.SIGKILL)
            assert await sup.wait_exited("live") == UNKNOWN_EXIT
            for name in ("live", "after"):
                await sup.wait_empty(name)
                await sup.release(name)
            await sup.shutdown()
