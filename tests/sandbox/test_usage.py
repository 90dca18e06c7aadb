"""What a tree used, reported with its leader's exit: CPU time and peak memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox import Containment, ExitStatus, Limits, Supervisor, read_status_file

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit

#: 64 MiB touched, then about 0.3 s of CPU.
BUSY = (
    "import time\nb = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
    "t = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
)


async def test_usage_comes_with_the_exit(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """From the tree's cgroup where it has one, else from the leader's rusage; in the status file too."""
    spec = kit.spec("ex", [kit.python, "-c", BUSY], containment, limits=Limits(memory_bytes=1 << 30))
    await sup.spawn(spec)
    status = await sup.wait_exited("ex")
    assert (status.exit_code, status.signal, status.limit) == (0, None, None)
    same = ExitStatus(0, None, oom_kills=status.oom_kills)
    assert status == same, "measurements do not change the outcome's equality"
    assert status.cpu_user_ms is not None and status.cpu_system_ms is not None
    assert status.cpu_user_ms + status.cpu_system_ms >= 280, status
    assert status.memory_peak_bytes is not None and status.memory_peak_bytes >= 64 << 20, status
    info = sup.known()["ex"].info
    recorded = read_status_file(info.dir, info)
    assert recorded is not None and recorded.cpu_user_ms == status.cpu_user_ms
    assert ExitStatus.from_dict(status.to_dict()).memory_peak_bytes == status.memory_peak_bytes
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_without_a_memory_cgroup_the_peak_is_the_leaders_rss(sup: Supervisor, kit: Kit) -> None:
    spec = kit.spec("ex", [kit.python, "-c", BUSY], Containment.PGROUP)
    await sup.spawn(spec)
    status = await sup.wait_exited("ex")
    assert status.memory_peak_bytes is not None and status.memory_peak_bytes >= 64 << 20, status
    assert status.oom_kills is None, "no memory cgroup measured it"
    await sup.wait_empty("ex")
    await sup.release("ex")
