"""`Supervisor.claim`: a waiting pre-started leader becomes an execution, or is left as it was."""

from __future__ import annotations

import dataclasses
import json
import signal
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import WARM_PREFIX, NotReady, SpawnError, SpawnSpec, Supervisor, open_supervisor
from tests import ceilings
from tests.sandbox.conftest import PYTHON

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

#: Reads its stdin to the end, then writes it (to the stdout it was started with) and exits.
ECHO = "import sys; data = sys.stdin.buffer.read(); sys.stdout.buffer.write(data)"


async def test_a_claim_renames_the_leader_moves_its_record_and_sends_its_input(
    sup: Supervisor, kit: Kit
) -> None:
    warm = WARM_PREFIX + "1"
    spec = dataclasses.replace(kit.spec(warm, [PYTHON, "-c", ECHO]), open_stdin=True)
    started = await sup.spawn(spec)
    target = kit.spec("ex", ["unused"])
    info = await sup.claim(warm, target, b"the claim")
    assert (info.name, info.pid, info.start_time, info.dir) == (
        "ex",
        started.pid,
        started.start_time,
        target.dir,
    )
    assert info.cgroup == started.cgroup  # the containment it was started in is kept
    assert warm not in sup.known() and sup.known()["ex"].info == info
    assert json.loads((kit.root / "ex" / "proc.json").read_text())["name"] == "ex"
    assert not (kit.root / warm / "proc.json").exists()
    status = await sup.wait_exited("ex")
    assert status.exit_code == 0 and kit.out(warm) == "the claim"
    assert (kit.root / "ex" / "stdout").exists()  # created as a spawn would, for the claimed
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_a_refused_claim_changes_nothing(sup: Supervisor, kit: Kit) -> None:
    plain = await sup.spawn(dataclasses.replace(kit.spec("plain", ["sleep", "300"]), open_stdin=True))
    with pytest.raises(SpawnError, match="not a pre-started leader"):
        await sup.claim("plain", kit.spec("ex", ["unused"]), b"x")
    warm = WARM_PREFIX + "2"
    await sup.spawn(dataclasses.replace(kit.spec(warm, [PYTHON, "-c", ECHO]), open_stdin=True))
    missing = dataclasses.replace(kit.spec("ex", ["unused"]), cwd=str(kit.root / "nowhere"))
    with pytest.raises(SpawnError, match="cannot change directory"):
        await sup.claim(warm, missing, b"x")
    with pytest.raises(SpawnError, match="already exists"):
        await sup.claim(warm, kit.spec("plain", ["unused"]), b"x")
    assert not (kit.root / "ex" / "proc.json").exists()
    assert set(sup.known()) == {"plain", warm} and sup.known()[warm].status is None
    await sup.claim(warm, kit.spec("ex", ["unused"]), b"now")
    assert (await sup.wait_exited("ex")).exit_code == 0 and kit.out(warm) == "now"
    for name in ("plain", "ex"):
        await sup.signal(name, signal.SIGKILL)
        await sup.wait_empty(name)
        await sup.release(name)
    assert not kit.alive(plain.pid)


async def test_unclaimed_leaders_die_when_their_client_leaves(kit: Kit) -> None:
    async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=0.2) as sup:
        warm = await sup.spawn(
            dataclasses.replace(kit.spec(WARM_PREFIX + "3", ["sleep", "300"]), open_stdin=True)
        )
        other = await sup.spawn(kit.spec("kept", ["sleep", "300"]))
    await kit.wait_until(lambda: not kit.alive(warm.pid))
    assert kit.alive(other.pid)  # an execution outlives its daemon; only the pool does not
    async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=0.2) as sup:
        assert set(sup.known()) == {"kept"}
        await sup.signal("kept", signal.SIGKILL)
        await sup.wait_empty("kept")
        await sup.release("kept")


async def test_a_new_client_is_not_told_of_the_leaders_being_dropped(kit: Kit) -> None:
    # The shim forgets an unclaimed leader by itself once its tree is empty; a client that came
    # in between (its leader reaped, its tree not yet seen empty) must not hold it, or its
    # release of it would race the shim's. Each round reconnects as soon as the client left.
    for round_ in range(8):
        warm = WARM_PREFIX + f"r{round_}"
        async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=5) as sup:
            await sup.spawn(dataclasses.replace(kit.spec(warm, ["sleep", "300"]), open_stdin=True))
        async with open_supervisor(kit.run_dir, python=PYTHON, idle_linger=5) as sup:
            assert warm not in sup.known(), round_
    await kit.wait_until(lambda: not kit.tagged())


async def test_a_sandbox_claim_with_bad_binds_changes_nothing_and_one_outside_a_sandbox_is_killed(
    sup: Supervisor, kit: Kit
) -> None:
    with pytest.raises(ValueError, match="claim_socket"):
        dataclasses.replace(kit.spec("plain", ["true"]), claim_socket=True)
    # Says it is ready (a byte on its socket, as the driver does once started), then waits.
    ready = [PYTHON, "-c", "import os, time; os.write(0, b'r'); time.sleep(300)"]
    warm, starting = WARM_PREFIX + "4", WARM_PREFIX + "5"
    started = await sup.spawn(dataclasses.replace(kit.spec(warm, ready), claim_socket=True))
    waiting = await sup.spawn(dataclasses.replace(kit.spec(starting, ["sleep", "300"]), claim_socket=True))
    target = kit.spec("ex", ["unused"])
    with pytest.raises(SpawnError, match="invalid claim"):
        await sup.claim(warm, target, b"x", binds=[("relative/code.py", True)])
    with pytest.raises(NotReady):
        await sup.claim(starting, target, b"x")
    assert set(sup.known()) == {warm, starting} and all(c.status is None for c in sup.known().values())
    assert not (kit.root / "ex" / "proc.json").exists()
    # Its stdin is a socket, but it is no sandbox (no mount namespace of its own): refused, and
    # killed, since a sandbox may have been given some of its files by then.
    with ceilings.within(20, "the leader to say it is ready"):
        refusal = await _claim_once_ready(sup, warm, target, [(str(kit.root / "code.py"), True)])
    assert "mount namespace" in refusal, refusal
    assert not (kit.root / "ex" / "proc.json").exists()
    for name in (warm, starting):
        await sup.signal(name, signal.SIGKILL)
        await sup.wait_empty(name)
        await sup.release(name)
    assert not kit.alive(started.pid) and not kit.alive(waiting.pid)


async def _claim_once_ready(
    sup: Supervisor, name: str, spec: SpawnSpec, binds: list[tuple[str, bool]]
) -> str:
    """Why the claim was refused once `name` was ready ("claimed" if it was not)."""
    while True:
        try:
            await sup.claim(name, spec, b"x", binds=binds)
        except NotReady:
            await trio.sleep(0.02)
            continue
        except SpawnError as e:
            return str(e)
        return "claimed"
