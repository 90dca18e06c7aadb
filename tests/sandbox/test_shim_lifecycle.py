"""The shim outlives its client: reconnecting, being refused, dying, adopting, exiting when idle."""

from __future__ import annotations

import os
import signal
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import (
    UNKNOWN_EXIT,
    Containment,
    ExitStatus,
    NotEmpty,
    SandboxError,
    ShimRefused,
    Supervisor,
    SupervisorLost,
    open_supervisor,
    process_alive,
    read_proc_file,
    read_status_file,
)
from tests.procs import SHELL_ME, host_pid
from tests.sandbox.conftest import PYTHON

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit


async def wait_process_gone(pid: int) -> None:
    """Wait (without polling) until `pid` has exited."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        with trio.fail_after(10):
            await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


async def test_reconnect_learns_an_exit_that_happened_meanwhile(kit: Kit) -> None:
    """A restart is not a failure: an exit while no daemon was connected is reported after."""
    async with open_supervisor(kit.run_dir, python=kit.python, idle_linger=0.3) as sup:
        shim = sup.shim_pid
        info = await sup.spawn(kit.spec("ex", ["bash", "-c", "sleep 0.3; exit 5"]))
        await sup.spawn(kit.spec("holder", ["sleep", "300"]))  # keeps the shim from going idle
    # No client now: the execution ends meanwhile.
    await kit.wait_until(lambda: read_status_file(info.dir) is not None)
    assert read_status_file(info.dir, info) == ExitStatus(5, None)
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        assert sup.shim_pid == shim
        known = sup.known()
        assert known["ex"].info == info
        assert known["ex"].status == ExitStatus(5, None)
        assert known["ex"].empty
        assert await sup.wait_exited("ex") == ExitStatus(5, None)
        await sup.release("ex")
        await sup.signal("holder", signal.SIGKILL)
        await sup.wait_empty("holder")
        await sup.release("holder")
    # Idle and without a client: the shim exits by itself after its linger time.
    await wait_process_gone(shim)
    assert not (kit.run_dir / "shim.sock").exists()
    assert not (kit.run_dir / "shim.pid").exists()


async def test_a_second_client_is_refused(sup: Supervisor, kit: Kit) -> None:
    """The shim serves one daemon at a time and says so."""
    with pytest.raises(ShimRefused, match="another daemon"):
        async with open_supervisor(kit.run_dir, python=kit.python):
            pass
    await sup.spawn(kit.spec("ex", ["true"]))  # the first client is unaffected
    with trio.fail_after(10):
        await sup.wait_empty("ex")


async def test_shutdown_needs_every_tree_dead(sup: Supervisor, kit: Kit) -> None:
    """The shim exits on request only once nothing it holds is alive."""
    await sup.spawn(kit.spec("ex", ["sleep", "300"]))
    with pytest.raises(SandboxError, match="still run"):
        await sup.shutdown()
    with pytest.raises(NotEmpty):
        await sup.release("ex")
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("ex")
    shim = sup.shim_pid
    await sup.shutdown()
    await wait_process_gone(shim)


async def cancelled_then_shut_down(
    opened: Callable[[], AbstractAsyncContextManager[Supervisor]],
    first: Callable[[Supervisor], Awaitable[object]],
) -> None:
    """Open a supervisor, do `first`, then cancel the block around it (as a failed daemon start
    does: its reader of the shim's answers ends with it) and, on the way out (shielded), ask for
    a shutdown: it must raise SupervisorLost, not wait for an answer nothing reads."""
    with trio.CancelScope() as outer:
        async with opened() as supervisor:
            try:
                await first(supervisor)
                outer.cancel()
                await trio.sleep_forever()
            finally:
                with trio.CancelScope(shield=True), trio.fail_after(10), pytest.raises(SupervisorLost):
                    await supervisor.shutdown()
    assert outer.cancelled_caught


async def test_a_call_after_the_reader_was_cancelled_fails_instead_of_waiting(kit: Kit) -> None:
    """A call made on the way out of a cancelled block fails instead of waiting."""

    async def nothing(_: Supervisor) -> None:
        await trio.lowlevel.checkpoint()

    await cancelled_then_shut_down(
        lambda: open_supervisor(kit.run_dir, python=PYTHON, idle_linger=0.2), nothing
    )


async def test_a_call_while_a_dead_shim_cannot_be_replaced_fails_once_the_reader_ends(kit: Kit) -> None:
    """The same while the shim is being replaced (it died, and no new one can start): the calls
    that wait for the replacement fail too once the reader ends, instead of waiting for it."""
    async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=30) as first:
        shim = first.shim_pid

    async def replacement_failed(supervisor: Supervisor) -> None:
        os.kill(shim, signal.SIGKILL)
        with trio.fail_after(10):
            for _ in iter(int, 1):
                if "cannot be replaced yet" in (supervisor.degraded or ""):
                    return
                await trio.sleep(0.01)

    # The lingering shim is found; a replacement would need this interpreter, which is none.
    no_python = str(kit.root / "no-python")
    await cancelled_then_shut_down(
        lambda: open_supervisor(kit.run_dir, python=no_python, replace_dead_shim=True), replacement_failed
    )


async def test_killed_shim_fails_pending_waits(kit: Kit) -> None:
    """Connections are not runs: a lost shim makes waits raise instead of hanging."""
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        await sup.spawn(kit.spec("ex", ["sleep", "300"]))
        lost: list[BaseException] = []

        async def waiter() -> None:
            try:
                await sup.wait_exited("ex")
            except SupervisorLost as e:
                lost.append(e)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(waiter)
            await trio.sleep(0.05)
            os.kill(sup.shim_pid, signal.SIGKILL)
            with trio.fail_after(10):
                await wait_process_gone(sup.shim_pid)
        assert len(lost) == 1
        with pytest.raises(SupervisorLost):
            await sup.signal("ex", signal.SIGKILL)
        with pytest.raises(SupervisorLost):
            await sup.wait_empty("ex")
    # Clean up the orphaned tree through a new shim (the adoption test covers this fully).
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        old = read_proc_file(str(kit.root / "ex"))
        assert old is not None
        assert await sup.adopt(old)
        await sup.signal("ex", signal.SIGKILL)
        with trio.fail_after(10):
            await sup.wait_empty("ex")


async def test_adopt_a_tree_after_the_shim_died(kit: Kit, containment: Containment) -> None:
    """A restart is not a failure: a new shim adopts a running tree by identity and kills it."""
    script = (
        f"setsid bash -c '{SHELL_ME}; echo $me >> pids; exec sleep 300' &\n"
        f"{SHELL_ME}; echo $me >> pids; sleep 300 & wait"
    )
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        info = await sup.spawn(kit.spec("ex", ["bash", "-c", script], containment))
        pids = [host_pid(p) for p in await kit.wait_lines(kit.root / "ex" / "pids", 2)]
        os.kill(sup.shim_pid, signal.SIGKILL)
        await wait_process_gone(sup.shim_pid)
    assert all(kit.alive(pid) for pid in pids)
    async with open_supervisor(kit.run_dir, python=kit.python, idle_linger=0.2) as sup:
        assert sup.known() == {}
        assert await sup.adopt(info)
        assert await sup.adopt(info)  # already held: confirmed
        assert not sup.known()["ex"].empty
        await sup.signal("ex", signal.SIGKILL)
        with trio.fail_after(10):
            assert await sup.wait_exited("ex") == UNKNOWN_EXIT
            await sup.wait_empty("ex")
        assert [pid for pid in pids if kit.alive(pid)] == []
        assert not process_alive(info.pid, info.start_time)
        await sup.release("ex")
        assert not await sup.adopt(info)  # gone now


async def test_adopt_reports_a_status_the_old_shim_recorded(kit: Kit) -> None:
    """A restart is not a failure: a leader that exited before its shim died keeps its code."""
    script = "setsid sleep 300 & exit 4"
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        info = await sup.spawn(kit.spec("ex", ["bash", "-c", script], Containment.AUTO))
        with trio.fail_after(10):
            assert await sup.wait_exited("ex") == ExitStatus(4, None)
        os.kill(sup.shim_pid, signal.SIGKILL)
        await wait_process_gone(sup.shim_pid)
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        assert await sup.adopt(info)
        assert sup.known()["ex"].status == ExitStatus(4, None)
        await sup.signal("ex", signal.SIGKILL)
        with trio.fail_after(10):
            await sup.wait_empty("ex")


async def test_racing_clients_start_one_shim(kit: Kit) -> None:
    """Two daemons starting at once on one run dir get one shim: the lock decides, one is refused."""
    outcomes: list[str] = []
    release = trio.Event()

    async def client() -> None:
        try:
            async with open_supervisor(kit.run_dir, python=kit.python, idle_linger=0.2) as sup:
                outcomes.append(f"connected to {sup.shim_pid}")
                await release.wait()
        except ShimRefused:
            outcomes.append("refused")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(client)
        nursery.start_soon(client)
        with trio.fail_after(10):
            await kit.wait_until(lambda: len(outcomes) == 2)
        release.set()
    assert sorted(outcomes)[1] == "refused"
    assert outcomes.count("refused") == 1
    assert len(kit.shims()) == 1


async def test_another_protocol_version_is_refused(kit: Kit) -> None:
    """The hello exchange checks the protocol version, and says which one the shim speaks."""
    async with open_supervisor(kit.run_dir, python=kit.python, idle_linger=0.2) as sup:
        await sup.spawn(kit.spec("holder", ["sleep", "300"]))  # keeps the shim from going idle
    stream = await trio.open_unix_socket(str(kit.run_dir / "shim.sock"))
    async with stream:
        await stream.send_all(b'{"id": 0, "op": "hello", "protocol": 999}\n')
        with trio.fail_after(5):
            answer = await stream.receive_some(4096)
    assert b'"refused"' in answer
    assert b"speaks protocol 1" in answer
    async with open_supervisor(kit.run_dir, python=kit.python) as sup:
        await sup.signal("holder", signal.SIGKILL)
        with trio.fail_after(10):
            await sup.wait_empty("holder")


async def test_a_dead_shim_is_replaced_and_takes_its_trees_back(kit: Kit, containment: Containment) -> None:
    """A dead shim is replaced at once: waits go on, trees are held by identity, spawns work."""
    async with open_supervisor(kit.run_dir, python=kit.python, replace_dead_shim=True) as sup:
        await sup.spawn(kit.spec("ended", ["bash", "-c", "exit 3"], containment))
        with trio.fail_after(10):
            assert await sup.wait_exited("ended") == ExitStatus(3, None)
            await sup.wait_empty("ended")
        await sup.spawn(kit.spec("live", ["bash", "-c", "setsid sleep 300 & sleep 300"], containment))
        old = sup.shim_pid
        os.kill(old, signal.SIGKILL)
        await wait_process_gone(old)
        with trio.fail_after(10):
            # Asked during the replacement: answered by the new shim, which holds the tree.
            info = await sup.spawn(kit.spec("after", ["bash", "-c", "exit 5"], containment))
            assert sup.problem is None and sup.replacements == 1 and sup.shim_pid != old
            assert await sup.wait_exited("after") == ExitStatus(5, None)
            assert info.name == "after"
            assert not sup.known()["live"].empty
            await sup.signal("live", signal.SIGKILL)
            assert await sup.wait_exited("live") == UNKNOWN_EXIT
            await sup.wait_empty("live")
            for name in ("ended", "live", "after"):
                await sup.release(name)
            assert sup.known() == {}
            await sup.shutdown()


def problem(sup: Supervisor) -> str | None:
    """`sup.problem`, read anew (not narrowed by an earlier check: another task changes it)."""
    return sup.problem


async def test_problem_says_why_while_no_shim_can_be_started(kit: Kit) -> None:
    """While the dead shim cannot be replaced (its lock taken here), `problem` says so and
    calls wait; once a shim can start, they are answered."""
    import fcntl

    async with open_supervisor(kit.run_dir, python=kit.python, replace_dead_shim=True) as sup:
        await sup.spawn(kit.spec("ex", ["sleep", "300"], Containment.AUTO))
        lock = os.open(kit.run_dir / "shim.lock", os.O_RDWR)
        try:
            os.kill(sup.shim_pid, signal.SIGKILL)
            await wait_process_gone(sup.shim_pid)
            fcntl.flock(lock, fcntl.LOCK_EX)
            with trio.fail_after(10):
                while problem(sup) is None:  # noqa: ASYNC110 - the reader notices asynchronously
                    await trio.sleep(0.01)
            degraded = problem(sup)
            assert degraded is not None and "shim" in degraded
        finally:
            os.close(lock)
        with trio.fail_after(20):
            await sup.signal("ex", signal.SIGKILL)
            await sup.wait_empty("ex")
        assert problem(sup) is None
        await sup.release("ex")
        await sup.shutdown()
