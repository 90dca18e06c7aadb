"""Spawning under each containment: exit statuses, clean failures, environment, fds, stdio."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import (
    Capabilities,
    ChildInfo,
    Containment,
    ContainmentUnavailable,
    ExitStatus,
    Limits,
    SpawnError,
    Supervisor,
    read_proc_file,
    read_status_file,
)
from sandbox._cgroups import base_name
from sandbox._executions import Executions

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit


async def run(sup: Supervisor, kit: Kit, name: str, argv: list[str], containment: Containment) -> ExitStatus:
    await sup.spawn(kit.spec(name, argv, containment))
    with trio.fail_after(10):
        status = await sup.wait_exited(name)
        await sup.wait_empty(name)
    await sup.release(name)
    return status


@pytest.mark.parametrize("code", [0, 7])
async def test_exit_code_is_reported(sup: Supervisor, kit: Kit, containment: Containment, code: int) -> None:
    """Nothing is lost: the leader's exit code comes back exactly, and its tree is empty."""
    status = await run(sup, kit, "ex", ["bash", "-c", f"exit {code}"], containment)
    assert status == ExitStatus(exit_code=code, signal=None)


async def test_killed_leader_reports_its_signal(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Nothing is lost: a leader killed by a signal reports that signal and no exit code."""
    await sup.spawn(kit.spec("ex", ["sleep", "300"], containment))
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
        await sup.wait_empty("ex")
    assert (status.exit_code, status.signal) == (None, signal.SIGKILL)


async def test_exec_failure_raises_and_leaves_nothing(
    sup: Supervisor, kit: Kit, containment: Containment
) -> None:
    """Bad input gets a clear error and changes nothing: no process, no cgroup, no record."""
    limits = Limits(memory_bytes=64 << 20, max_processes=50)  # so that every cgroup is tried
    spec = kit.spec("ex", ["no-such-program-here"], containment, limits=limits)
    with pytest.raises(SpawnError, match=r"No such file or directory: 'no-such-program-here'"):
        await sup.spawn(spec)
    assert "ex" not in sup.known()
    assert not kit.tagged()
    caps = kit.caps
    for parent in (caps.v2_parent, caps.memory_parent, caps.pids_parent):
        if parent:
            assert not kit.exists(os.path.join(parent, base_name(str(kit.run_dir)), "ex"))
    assert read_proc_file(spec.dir) is None
    # The name is free again.
    assert await run(sup, kit, "ex", ["true"], containment) == ExitStatus(0, None)


async def test_missing_cwd_raises(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Bad input gets a clear error: a missing cwd is named."""
    spec = kit.spec("ex", ["true"], containment, cwd=kit.root / "missing")
    with pytest.raises(SpawnError, match=r"cannot change directory to '.*missing': No such file"):
        await sup.spawn(spec)
    assert not kit.tagged()


async def test_environment_is_exactly_the_given_one(
    sup: Supervisor, kit: Kit, containment: Containment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No one sees what is not theirs: the daemon's environment never reaches an execution."""
    monkeypatch.setenv("SANDBOX_TEST_SECRET", "do-not-leak")
    env = {"PATH": "/usr/bin:/bin", "GREETING": "hello world", "EMPTY": ""}
    spec = kit.spec("ex", ["env", "-0"], containment, env=env)
    await sup.spawn(spec)
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
    seen = dict(item.split("=", 1) for item in kit.out("ex").split("\0") if item)
    assert seen == env | {kit.tag[0]: kit.tag[1]}


async def test_only_stdio_fds_are_open(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """The child holds fds 0, 1 and 2 only: nothing of the shim or the daemon leaks in."""
    # listdir's own directory fd is closed again before the readlinks: it shows as None.
    code = (
        "import os, json\n"
        "def target(fd):\n"
        "    try:\n"
        "        return os.readlink('/proc/self/fd/' + fd)\n"
        "    except FileNotFoundError:\n"
        "        return None\n"
        "print(json.dumps({fd: target(fd) for fd in os.listdir('/proc/self/fd')}))\n"
    )
    await sup.spawn(kit.spec("ex", [kit.python, "-c", code], containment))
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
    fds = {int(fd): target for fd, target in json.loads(kit.out("ex")).items() if target is not None}
    assert fds == {
        0: os.devnull,
        1: str(kit.root / "ex" / "stdout"),
        2: str(kit.root / "ex" / "stderr"),
    }


async def test_stdin_is_fed_and_output_goes_to_the_files(
    sup: Supervisor, kit: Kit, containment: Containment
) -> None:
    """Nothing is lost: stdin is read from its file, stdout and stderr land in theirs (0600)."""
    stdin = kit.root / "input"
    stdin.write_text("first line\nsecond\n")
    script = 'read a; read b; echo "out:$a"; echo "err:$b" >&2'
    await sup.spawn(kit.spec("ex", ["bash", "-c", script], containment, stdin_path=stdin))
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
    assert kit.out("ex") == "out:first line\n"
    assert kit.out("ex", "stderr") == "err:second\n"
    assert stat.S_IMODE(os.stat(kit.root / "ex" / "stdout").st_mode) == 0o600


async def test_proc_and_status_files_record_the_execution(
    sup: Supervisor, kit: Kit, containment: Containment
) -> None:
    """A restart is not a failure: proc.json exists before spawn returns, status.json at exit."""
    spec = kit.spec("ex", ["bash", "-c", "exit 3"], containment)
    info = await sup.spawn(spec)
    assert read_proc_file(spec.dir) == info
    assert info.containment == containment
    assert ChildInfo.from_dict(info.to_dict()) == info
    with trio.fail_after(10):
        status = await sup.wait_exited("ex")
    assert read_status_file(spec.dir) == status
    assert read_status_file(spec.dir, info) == status
    assert sup.known()["ex"].status == status


async def test_program_is_found_on_the_given_path(sup: Supervisor, kit: Kit) -> None:
    """argv[0] without a slash is looked up in the execution's PATH, not the daemon's."""
    bin_dir = kit.root / "bin"
    bin_dir.mkdir()
    program = bin_dir / "hello-tool"
    program.write_text("#!/bin/sh\necho tool ran\n")
    program.chmod(0o755)
    await sup.spawn(kit.spec("ex", ["hello-tool"], env={"PATH": f"/nonexistent:{bin_dir}"}))
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
    assert kit.out("ex") == "tool ran\n"
    spec = kit.spec("noexec", [str(kit.root / "input-missing")])
    with pytest.raises(SpawnError, match="No such file or directory"):
        await sup.spawn(spec)


async def test_duplicate_name_is_refused(sup: Supervisor, kit: Kit) -> None:
    """Bad input changes nothing: a second execution of the same name is refused."""
    await sup.spawn(kit.spec("ex", ["sleep", "300"]))
    with pytest.raises(SpawnError, match="already exists"):
        await sup.spawn(kit.spec("ex", ["true"]))
    await sup.signal("ex", signal.SIGKILL)
    with trio.fail_after(10):
        await sup.wait_empty("ex")


class _Host:
    """The least a shim offers its executions, for driving them without a shim."""

    pid = os.getpid()

    def log(self, message: str) -> None:
        raise AssertionError(message)

    def emit(self, message: dict[str, object]) -> None:
        pass

    def watch_fd(self, fd: int, callback: object) -> None:
        raise AssertionError("not expected")

    def watch_fd_writable(self, fd: int, callback: object) -> None:
        raise AssertionError("not expected")

    def unwatch_fd(self, fd: int) -> None:
        raise AssertionError("not expected")

    def watch_file(self, path: str, callback: object) -> int:
        raise AssertionError("not expected")

    def unwatch_file(self, wd: int) -> None:
        raise AssertionError("not expected")

    def need_sweep(self, tracked: object) -> None:
        pass

    def is_leader(self, pid: int) -> bool:
        return False


def test_without_cgroups_limits_fall_back_to_rlimits(kit: Kit) -> None:
    """On a machine without writable cgroups, pgroup containment and rlimits (RLIMIT_AS too)."""
    caps = Capabilities(cgroup=False, pidns=False, memory=None, pids=None, reasons={"cgroup": "none here"})
    executions = Executions(_Host(), str(kit.run_dir), caps)
    limits = Limits(memory_bytes=256 << 20, max_open_files=77, max_processes=33)
    spec = kit.spec("ex", ["sleep", "30"], limits=limits)
    with pytest.raises(ContainmentUnavailable, match="none here"):
        executions.spawn(dataclasses.replace(spec, containment=Containment.CGROUP))
    known = executions.spawn(spec)
    try:
        assert known.info.containment == Containment.PGROUP
        assert (known.info.cgroup, known.info.memory_cgroup, known.info.pids_cgroup) == (None, None, None)
        text = Path(f"/proc/{known.info.pid}/limits").read_text()
        assert re.search(r"Max address space\s+268435456\s+268435456", text)
        assert re.search(r"Max open files\s+77\s+77", text)
        assert re.search(r"Max processes\s+33\s+33", text)
    finally:
        os.kill(known.info.pid, signal.SIGKILL)
        os.waitpid(known.info.pid, 0)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can start a tree as another user")
async def test_a_tree_runs_as_the_user_asked_for(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """`SpawnSpec.user`: the tree runs as that unprivileged uid and gid, without supplementary groups."""
    spec = kit.spec("ex", ["sh", "-c", "id -u; id -g; id -G"], containment)
    spec = dataclasses.replace(spec, user=(65534, 65534))
    await sup.spawn(spec)
    with trio.fail_after(10):
        assert await sup.wait_exited("ex") == ExitStatus(0, None)
        await sup.wait_empty("ex")
    assert kit.out("ex").split() == ["65534", "65534", "65534"]
