"""The `sandbox` image against a real daemon: what bubblewrap isolates, and that killing still holds.

Every check runs real commands inside the sandbox and looks at the host from outside.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import stat
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings, procs
from tests.conftest import DaemonHandle
from workbench.core.images import default_images_dir, load_image

BWRAP = shutil.which("bwrap")


def _unavailable() -> str | None:
    if BWRAP is None:
        return "bubblewrap (bwrap) is not installed, so the sandbox image cannot run here"
    return load_image(default_images_dir() / "sandbox.toml", bwrap=BWRAP).unavailable_reason


REASON = _unavailable()
pytestmark = pytest.mark.skipif(REASON is not None, reason=REASON or "")

MECHANISMS = procs.containment_params()


async def run(wb: DaemonHandle, command: str, **body: Any) -> tuple[dict[str, Any], str]:
    """Run `command` in the sandbox; the terminal record and its stdout."""
    record = await wb.run(command, image="sandbox", **body)
    return record, await output(wb, record["executionId"])


async def output(wb: DaemonHandle, execution_id: str, stream: str = "stdout") -> str:
    events = await wb.events(execution_id)
    return "".join(e["outputDelta"] for e in events if e["eventType"] == "output" and e["stream"] == stream)


def real(path: Path | str) -> str:
    """The symlink-free path (host-side checks are quick: no need for a thread)."""
    return os.path.realpath(path)


def exists(path: Path | str) -> bool:
    return os.path.lexists(path)


def read_bytes(path: Path | str) -> bytes:
    return Path(path).read_bytes()


def results(text: str) -> dict[str, str]:
    """`name=value` lines of a command's output."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


async def test_runs_in_the_workspace_and_files_persist(wb: DaemonHandle) -> None:
    first, _ = await run(wb, "echo kept > notes.txt; pwd", sessionId="s1")
    assert first["status"] == "completed", first
    workspace = wb.data_dir / "workspaces" / "admin" / "s1"
    assert first["cwd"] == real(workspace)
    assert (workspace / "notes.txt").read_text() == "kept\n"
    second, out = await run(wb, "cat notes.txt; ls", sessionId="s1")
    assert second["status"] == "completed" and out == "kept\nnotes.txt\n"
    other, out = await run(wb, "ls -A; cat notes.txt", sessionId="s2")
    assert other["status"] == "failed" and out == ""


@pytest.mark.sqlite_only
async def test_writing_outside_the_workspace_fails(wb: DaemonHandle) -> None:
    """Only the workspace is writable: not /etc, /usr, the home dir, the data dir or its store."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    data = real(wb.data_dir)
    targets = {
        "etc": "/etc/wb-sandbox-probe",
        "usr": "/usr/wb-sandbox-probe",
        "home": f"{home}/wb-sandbox-probe",
        "data": f"{data}/wb-sandbox-probe",
        "store": f"{data}/workbench.db",
        "workspaces": f"{data}/workspaces/admin/other/wb-sandbox-probe",
    }
    script = "".join(
        f"mkdir -p {os.path.dirname(path)} 2>/dev/null; "
        f"if echo x >> {path}; then echo {name}=wrote; else echo {name}=refused; fi\n"
        for name, path in targets.items()
    )
    script += "if echo x > inside; then echo workspace=wrote; fi\n"
    try:
        record, out = await run(wb, script)
    finally:
        leaked = [path for name, path in targets.items() if name in ("etc", "usr", "home") and exists(path)]
        for path in leaked:
            os.unlink(path)
    assert leaked == []
    assert record["status"] == "completed", out
    found = results(out)
    # Inside, the data dir is an empty private directory: writes there land in memory only.
    assert found.pop("workspace") == "wrote"
    for name in ("etc", "usr", "home"):
        assert found.pop(name) == "refused", out
    for name, path in targets.items():
        if name in ("store",):
            assert not read_bytes(path).endswith(b"x\n")  # the real store, untouched
        else:
            assert not exists(path), f"{path} was written from inside the sandbox"
    assert (wb.data_dir / "workspaces" / "admin" / "default" / "inside").read_text() == "x\n"


async def test_the_data_dir_and_private_dirs_are_hidden(wb: DaemonHandle) -> None:
    """The store, the token, other executions and other workspaces are not readable inside."""
    other = await wb.run("echo secret-output > secret; echo secret-output", sessionId="other")
    other_dir = wb.data_dir / "executions" / other["executionId"]
    data = real(wb.data_dir)
    (wb.data_dir / "token").write_text("not-for-sandboxes\n")
    host_tmp = Path("/tmp") / f"wb-sandbox-{wb.data_dir.parent.name}"
    host_tmp.write_text("host tmp\n")
    try:
        record, out = await run(
            wb,
            f"ls -A {data}; cat {data}/token {data}/workbench.db; ls {other_dir}; "
            f"cat {data}/workspaces/admin/other/secret; cat {host_tmp}; ls -A /tmp /run; "
            "echo private > /tmp/mine; cat /tmp/mine",
        )
    finally:
        host_tmp.unlink()
    assert "not-for-sandboxes" not in out and "secret-output" not in out and "host tmp" not in out
    assert "SQLite" not in out
    assert out.endswith("private\n")
    assert "/run:\n\n" in out, "the host's /run (and its sockets) must look empty"
    assert not exists("/tmp/mine")
    listing = out.splitlines()
    # Only the mount points of this execution's own files are left of the data dir.
    assert listing[:2] == ["executions", "workspaces"], out
    assert record["status"] == "completed"


async def test_no_network_but_its_own_loopback(wb: DaemonHandle) -> None:
    """The daemon's TCP port is unreachable; a loopback of its own works."""
    port = int(wb.url.rsplit(":", 1)[1])
    code = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("daemon=reachable")
except OSError as exc:
    print("daemon=unreachable", type(exc).__name__)
server = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(server.getsockname())
peer, _ = server.accept()
client.sendall(b"ping")
print("loopback=" + peer.recv(4).decode())
print("interfaces=" + ",".join(name for _, name in socket.if_nameindex()))
"""
    response = await wb.client.post(
        "/v1/executions/workbench_code",
        json={"language": "python", "code": code, "image": "sandbox", "waitTimeoutMs": 60_000},
    )
    record = response.json()
    out = results(await output(wb, record["executionId"]))
    assert record["status"] == "completed", out
    assert out["daemon"].startswith("unreachable"), out
    assert out["loopback"] == "ping"
    assert out["interfaces"] == "lo"


async def test_remounting_and_mounting_fail(wb: DaemonHandle) -> None:
    """All capabilities are dropped: root inside cannot remount / read-write, mount, or write /proc/sys."""
    record, out = await run(
        wb,
        "mount -o remount,rw / 2>/dev/null && echo remount=ok || echo remount=refused\n"
        "mkdir m; mount -t tmpfs none m 2>/dev/null && echo mount=ok || echo mount=refused\n"
        "touch /etc/wb-after-remount 2>/dev/null && echo etc=wrote || echo etc=refused\n"
        # domainname is per UTS namespace: harmless even if it were writable.
        "echo x 2>/dev/null > /proc/sys/kernel/domainname && echo sysctl=wrote || echo sysctl=refused\n",
    )
    assert record["status"] == "completed"
    assert results(out) == {"remount": "refused", "mount": "refused", "etc": "refused", "sysctl": "refused"}
    assert not exists("/etc/wb-after-remount")


async def test_its_own_pid_namespace(wb: DaemonHandle) -> None:
    record, out = await run(
        wb,
        "echo pid=$$; echo count=$(ls /proc | grep -c '^[0-9]'); echo init=$(tr '\\0' ' ' < /proc/1/cmdline)",
    )
    found = results(out)
    assert record["status"] == "completed"
    assert int(found["pid"]) <= 3
    assert int(found["count"]) <= 5, out  # bwrap's init, the shell, ls (and grep)
    assert "bwrap" in found["init"], out


async def test_the_images_rlimits_hold_from_the_first_process_inside(wb: DaemonHandle) -> None:
    """The image's limits (4096 open files, 16 GiB files, 1024 processes) bind every process in
    the sandbox: they are set before bubblewrap starts, not after its leader's exec, which it
    would outrun (its leader forks bubblewrap at once). Several runs: the race was not certain."""
    command = (
        "echo nofile=$(ulimit -Sn):$(ulimit -Hn); echo fsize=$(ulimit -Sf):$(ulimit -Hf);"
        " echo nproc=$(ulimit -Hu)"
    )
    for _ in range(5):
        record, out = await run(wb, command)
        assert record["status"] == "completed", out
        blocks = 16 * 1024**3 // 1024  # bash counts in KiB
        assert results(out) == {"nofile": "4096:4096", "fsize": f"{blocks}:{blocks}", "nproc": "1024"}, out


async def test_setuid_and_file_capabilities_regain_nothing(wb: DaemonHandle) -> None:
    """No capability is held, no_new_privs is set, and setuid or file-capability programs change neither."""
    workspace = wb.data_dir / "workspaces" / "admin" / "default"
    workspace.mkdir(parents=True)
    grep = shutil.which("grep")
    assert grep is not None
    tricked = workspace / "grep"
    shutil.copy(grep, tricked)
    os.chmod(tricked, stat.S_ISUID | 0o755)
    setcap = shutil.which("setcap")
    if setcap is not None and os.geteuid() == 0:
        with ceilings.within(30, "setcap to exit"):
            done = await trio.run_process([setcap, "cap_sys_admin,cap_dac_override+ep", str(tricked)])
        assert done.returncode == 0
    status = "grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs)' /proc/self/status"
    record, out = await run(
        wb,
        f"{status} | sed 's/^/plain-/'\n"
        "./grep -E '^(CapPrm|CapEff)' /proc/self/status | sed 's/^/setuid-/'\n"
        "su -c true 2>/dev/null && echo su=ok || echo su=refused\n",
    )
    assert record["status"] == "completed", out
    found = {k: v.strip() for k, v in (line.split(":", 1) for line in out.splitlines() if ":" in line)}
    zero = "0000000000000000"
    assert found["plain-CapPrm"] == found["plain-CapEff"] == found["plain-CapAmb"] == zero, out
    assert found["plain-NoNewPrivs"] == "1"
    assert found["setuid-CapPrm"] == found["setuid-CapEff"] == zero, out
    assert "su=ok" not in out


@pytest.mark.parametrize("how", ["cancel", "deadline"])
@pytest.mark.parametrize("containment", MECHANISMS)
async def test_cancel_and_deadline_kill_everything_inside(
    make_daemon: Any, containment: str, how: str
) -> None:
    """Promise 3 in the sandbox: no process inside survives, escapees included (seen from outside)."""
    wb: DaemonHandle = await make_daemon(containment=containment)
    tree = (
        "sleep 300 & echo $! >> pids\n"
        "setsid bash -c 'echo $$ >> pids; exec sleep 300' &\n"
        "( bash -c 'echo $$ >> pids; exec sleep 300' & ) &\n"
        "bash -c 'trap \"\" TERM; echo $$ >> pids; exec sleep 300' &\n"
        # Leaving the cgroup would escape cgroup.kill: cgroupfs is read-only inside.
        "bash -c 'for f in $(find /sys/fs/cgroup -maxdepth 2 -name cgroup.procs); do echo $$ > $f;"
        " done 2>/dev/null; echo $$ >> pids; exec sleep 300' &\n"
        "echo $$ >> pids\n"
        "wait\n"
    )
    started = await wb.start(tree, image="sandbox", timeoutMs=60_000 if how == "cancel" else 1_500)
    eid = started["executionId"]
    pids_file = wb.data_dir / "workspaces" / "admin" / "default" / "pids"
    await procs.eventually(lambda: pids_file.exists() and len(pids_file.read_text().split()) >= 6)
    inner = {int(p) for p in pids_file.read_text().split()}
    outer: dict[int, int] = {}

    def all_seen() -> bool:
        nonlocal outer
        outer = outer_pids(procs.processes_mentioning(eid), inner)
        return set(outer) == inner

    # A process that wrote its pid and is in the middle of its exec has, for that moment, no
    # environment to read from outside (where the execution's id is): look again.
    with contextlib.suppress(trio.TooSlowError):
        await procs.eventually(all_seen, within_s=5)
    assert set(outer) == inner, (outer, inner)
    if how == "cancel":
        response = await wb.client.post(f"/v1/executions/{eid}/cancel", json={"reason": "test"})
        assert response.status_code == 202
    final = await wb.wait(eid)
    assert final["status"] == ("cancelled" if how == "cancel" else "timed_out")
    assert final["containment"] == containment
    alive = [pid for pid in outer.values() if procs.alive(pid)]
    assert alive == [], procs.describe(alive)
    assert procs.processes_mentioning(eid) == []


def outer_pids(candidates: list[int], inner: set[int]) -> dict[int, int]:
    """{pid inside the sandbox: pid outside} for the candidates whose innermost pid is in `inner`."""
    found: dict[int, int] = {}
    for pid in candidates:
        try:
            text = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        nspids = next((line.split()[1:] for line in text.splitlines() if line.startswith("NSpid:")), [])
        if len(nspids) >= 2 and int(nspids[-1]) in inner:
            found[int(nspids[-1])] = pid
    return found


async def test_a_signal_death_inside_is_reported_as_the_signal(wb: DaemonHandle) -> None:
    """bwrap turns a death by signal N into exit code 128+N; the record still says the signal."""
    killed, _ = await run(wb, "kill -9 $$")
    exited, _ = await run(wb, "exit 3")
    assert exited["status"] == "failed" and exited["exitCode"] == 3 and exited["signal"] is None
    assert killed["status"] == "failed"
    if killed["containment"] == "pidns":
        # The leader is the namespace's init there and cannot signal itself: the code stays.
        assert killed["exitCode"] == 128 + signal.SIGKILL
    else:
        assert killed["signal"] == "SIGKILL" and killed["exitCode"] is None, killed
        assert killed["error"]["code"] == "signal"
    response = await wb.client.post(
        "/v1/executions/workbench_code",
        json={"language": "python", "code": "import os\nos.abort()\n", "image": "sandbox"},
    )
    aborted = response.json()
    if aborted["containment"] != "pidns":
        assert aborted["status"] == "failed" and aborted["signal"] == "SIGABRT", aborted


async def test_progress_stdin_and_code_work_inside(wb: DaemonHandle) -> None:
    code = 'import os, sys\nopen(os.environ["WORKBENCH_PROGRESS"], "a").write("1/2 half\\n")\n'
    code += "print(sys.stdin.read().upper(), end='')\n"
    response = await wb.client.post(
        "/v1/executions/workbench_code",
        json={"language": "python", "code": code, "image": "sandbox", "stdin": "quiet\n"},
    )
    record = response.json()
    assert record["status"] == "completed", record
    events = await wb.events(record["executionId"])
    assert "".join(e["outputDelta"] for e in events if e["eventType"] == "output") == "QUIET\n"
    progress = [e for e in events if e["eventType"] == "progress"]
    assert [(e["progress"], e["total"], e["message"]) for e in progress] == [(1, 2, "half")]


async def test_an_explicit_cwd_must_be_inside_the_workspace(wb: DaemonHandle, tmp_path: Path) -> None:
    await run(wb, "mkdir -p sub/deeper; ln -s / escape; ln -s sub inner", sessionId="cwd")
    workspace = wb.data_dir / "workspaces" / "admin" / "cwd"
    inside, out = await run(wb, "pwd; touch made-here", sessionId="cwd", cwd=str(workspace / "sub"))
    assert inside["status"] == "completed" and out == f"{real(workspace / 'sub')}\n"
    assert (workspace / "sub" / "made-here").exists()
    via_link, _ = await run(wb, "pwd", sessionId="cwd", cwd=str(workspace / "inner" / "deeper"))
    assert via_link["cwd"] == real(workspace / "sub" / "deeper")
    for outside in (
        str(tmp_path),
        str(workspace / "escape"),
        str(workspace / "escape" / "etc"),
        f"{workspace}/../default",
        str(wb.data_dir / "workspaces" / "admin" / "default"),
    ):
        response = await wb.client.post(
            "/v1/executions/workbench_bash",
            json={"command": "true", "image": "sandbox", "sessionId": "cwd", "cwd": outside},
        )
        assert response.status_code == 422, outside
        assert response.json()["error"]["code"] == "invalid_request"
        assert "workspace" in response.json()["error"]["message"]


async def test_a_unix_socket_outside_the_data_dir_is_hidden(
    make_daemon: Any, request: pytest.FixtureRequest
) -> None:
    """Promise 9: the daemon's Unix socket (a way in with any token) is not reachable from a sandbox."""
    # Not under /tmp, which every sandbox has a private one of anyway.
    place = Path(tempfile.mkdtemp(prefix="workbench-test-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(place, ignore_errors=True))
    socket_path = place / "workbench.sock"
    wb: DaemonHandle = await make_daemon(unix_socket=socket_path)
    assert stat.S_ISSOCK(os.lstat(socket_path).st_mode)
    check = f"if [ -S {socket_path} ]; then echo visible; else echo hidden; fi"
    record, out = await run(wb, check)
    assert record["status"] == "completed" and out == "hidden\n", (record, out)
    # On the host image it stays the daemon user's own socket, as everything of that user.
    _, host = await run_host(wb, check)
    assert host == "visible\n"


async def run_host(wb: DaemonHandle, command: str) -> tuple[dict[str, Any], str]:
    record = await wb.run(command)
    return record, await output(wb, record["executionId"])
