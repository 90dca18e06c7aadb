"""The sandbox's values, parsers and public surface, without processes."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import sandbox
from sandbox import (
    LIMIT_CPU,
    LIMIT_FILE_SIZE,
    LIMIT_OOM,
    UNKNOWN_EXIT,
    Capabilities,
    ChildInfo,
    Containment,
    ContainmentUnavailable,
    ExitStatus,
    KnownChild,
    Limits,
    SpawnSpec,
    validate_name,
)
from sandbox._cgroups import Hierarchy, directory, find_hierarchies, own_cgroups
from sandbox._errors import ERROR_TYPES, error_type_name
from sandbox._protocol import MAX_LINE, LineBuffer, ProtocolError
from sandbox._tracking import classify_limit

PACKAGE = Path(sandbox.__file__).parent


def spec(**changes: object) -> SpawnSpec:
    fields: dict[str, object] = {
        "name": "ex_01",
        "argv": ("bash", "-c", "true"),
        "env": {"PATH": "/usr/bin"},
        "cwd": "/tmp",
        "dir": "/tmp/ex",
        "stdout_path": "/tmp/ex/stdout",
        "stderr_path": "/tmp/ex/stderr",
    }
    return SpawnSpec(**(fields | changes))  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["ex_01JD", "a", "a.b-c_d", "x" * 80])
def test_valid_names(name: str) -> None:
    """Execution names that can name a directory and a cgroup are accepted."""
    assert validate_name(name) == name


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a b", "x" * 81, "é"])
def test_invalid_names(name: str) -> None:
    """Bad input gets a clear error: names that are not [A-Za-z0-9_.-]{1,80} are refused."""
    with pytest.raises(ValueError, match="invalid execution name"):
        validate_name(name)


@pytest.mark.parametrize(
    "changes",
    [
        {"argv": ()},
        {"argv": ("a\0b",)},
        {"env": {"A=B": "x"}},
        {"env": {"A": "x\0"}},
        {"cwd": "relative"},
        {"stdin_path": "in"},
        {"tag": ("", "x")},
        {"limits": "none"},
    ],
)
def test_invalid_specs(changes: dict[str, object]) -> None:
    """Bad input gets a clear error: an invalid spec cannot even be built."""
    with pytest.raises(ValueError):
        spec(**changes)


@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_invalid_limits(value: object) -> None:
    """Limits are positive integers or None."""
    with pytest.raises(ValueError, match="positive integer"):
        Limits(max_processes=value)  # type: ignore[arg-type]


def test_values_round_trip_through_json_dicts() -> None:
    """What the daemon stores comes back equal."""
    s = spec(limits=Limits(memory_bytes=1 << 20, cpu_seconds=3), tag=("T", "v"), stdin_path="/dev/null")
    assert SpawnSpec.from_dict(s.to_dict()) == s
    info = ChildInfo("ex", 42, 1234, Containment.PIDNS, "/d", None, "/m", "/p", ("T", "v"))
    assert ChildInfo.from_dict(info.to_dict()) == info
    status = ExitStatus(None, 9, LIMIT_OOM, 123, 1)
    assert ExitStatus.from_dict(status.to_dict()) == status
    known = KnownChild(info, status, True)
    assert KnownChild.from_dict(known.to_dict()) == known
    assert KnownChild.from_dict(KnownChild(info, None, False).to_dict()).status is None


def test_spec_is_a_copy_of_what_it_was_given() -> None:
    """A frozen spec cannot be changed through the caller's own list or dict."""
    env = {"A": "1"}
    argv = ["true"]
    s = spec(env=env, argv=argv)
    env["B"] = "2"
    argv.append("x")
    assert s.env == {"A": "1"}
    assert s.argv == ("true",)


def test_exit_status_from_wait_status() -> None:
    """Exactly one of exit code and signal is set; neither when unknown."""
    assert ExitStatus.from_wait_status(7 << 8) == ExitStatus(7, None)
    assert ExitStatus.from_wait_status(signal.SIGKILL) == ExitStatus(None, signal.SIGKILL)
    assert not UNKNOWN_EXIT.known
    assert ExitStatus(0, None).known


@pytest.mark.parametrize(
    ("status", "limits", "oom", "cpu", "expected"),
    [
        (ExitStatus(None, signal.SIGXCPU), Limits(), None, 0.0, LIMIT_CPU),
        (ExitStatus(None, signal.SIGXFSZ), Limits(), None, 0.0, LIMIT_FILE_SIZE),
        (ExitStatus(None, signal.SIGKILL), Limits(memory_bytes=1), 1, 0.0, LIMIT_OOM),
        (ExitStatus(137, None), Limits(memory_bytes=1), 2, 0.0, LIMIT_OOM),
        (ExitStatus(0, None), Limits(memory_bytes=1), 1, 0.0, None),
        (ExitStatus(None, signal.SIGKILL), Limits(cpu_seconds=2), 0, 2.5, LIMIT_CPU),
        (ExitStatus(None, signal.SIGKILL), Limits(cpu_seconds=2), 0, 0.5, None),
        (ExitStatus(128 + signal.SIGXCPU, None), Limits(cpu_seconds=2), None, 0.0, LIMIT_CPU),
        (ExitStatus(128 + signal.SIGXCPU, None), Limits(), None, 0.0, None),
        (ExitStatus(128 + signal.SIGXFSZ, None), Limits(max_file_size_bytes=9), None, 0.0, LIMIT_FILE_SIZE),
        (ExitStatus(1, None), Limits(max_file_size_bytes=9), None, 0.0, None),
    ],
)
def test_which_limit_killed_the_leader(
    status: ExitStatus, limits: Limits, oom: int | None, cpu: float, expected: str | None
) -> None:
    """The exit status names the limit that killed the leader, and only then."""
    assert classify_limit(status, limits, oom, cpu) == expected


HYBRID_MOUNTINFO = """\
25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
28 25 0:25 / /sys/fs/cgroup/memory rw,nosuid shared:9 - cgroup cgroup rw,memory
29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct
30 25 0:27 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
"""

CONTAINER_MOUNTINFO = """\
700 699 0:30 /docker/abc /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw
701 699 0:31 / /mnt/with\\040space rw - cgroup2 cgroup2 rw
"""


def test_cgroup_hierarchies_are_found_in_mountinfo() -> None:
    """Both layouts are found: v2 beside v1 controllers (hybrid), and pure v2."""
    v2, v1 = find_hierarchies(HYBRID_MOUNTINFO)
    assert v2 == Hierarchy("/sys/fs/cgroup/unified", "/")
    assert v1["memory"] == Hierarchy("/sys/fs/cgroup/memory", "/")
    assert v1["pids"] == Hierarchy("/sys/fs/cgroup/pids", "/")
    assert v1["cpuacct"] == Hierarchy("/sys/fs/cgroup/cpu,cpuacct", "/")
    v2, v1 = find_hierarchies(CONTAINER_MOUNTINFO)
    assert v2 == Hierarchy("/sys/fs/cgroup", "/docker/abc")
    assert v1 == {}
    assert find_hierarchies("garbage\n")[0] is None


def test_own_cgroups_and_their_directories() -> None:
    """/proc/self/cgroup paths map to directories, inside the mount's root only."""
    v2, v1 = own_cgroups("0::/user.slice/x.scope\n4:memory:/a/b\n2:cpu,cpuacct:/\n")
    assert v2 == "/user.slice/x.scope"
    assert v1 == {"memory": "/a/b", "cpu": "/", "cpuacct": "/"}
    root = Hierarchy("/sys/fs/cgroup", "/")
    assert directory(root, "/") == "/sys/fs/cgroup"
    assert directory(root, "/a/b") == "/sys/fs/cgroup/a/b"
    inner = Hierarchy("/sys/fs/cgroup", "/docker/abc")
    assert directory(inner, "/docker/abc/x") == "/sys/fs/cgroup/x"
    assert directory(inner, "/docker/abc") == "/sys/fs/cgroup"
    assert directory(inner, "/docker/abcd") is None
    assert directory(inner, "/other") is None


def test_line_buffer_cuts_lines_across_reads() -> None:
    """The protocol's framing survives lines split over reads, and bounds a line's size."""
    buffer = LineBuffer()
    assert buffer.feed(b'{"a"') == []
    assert buffer.feed(b":1}\n{}\n{") == [b'{"a":1}', b"{}"]
    assert buffer.feed(b"}\n") == [b"{}"]
    with pytest.raises(ProtocolError):
        LineBuffer().feed(b"x" * (MAX_LINE + 1))


def test_lines_put_back_come_first() -> None:
    """Lines read past the one wanted (an event after hello's answer) are put back, in order."""
    buffer = LineBuffer()
    first, *rest = buffer.feed(b"{}\n[1]\n[2]\n[")
    buffer.unread(rest)
    assert first == b"{}"
    assert buffer.feed(b"3]\n") == [b"[1]", b"[2]", b"[3]"]
    buffer.unread([b"[4]"])
    assert buffer.drain() == [b"[4]"] and buffer.drain() == [] and buffer.feed(b"[") == []


def test_capabilities_resolve_and_explain() -> None:
    """AUTO picks the strongest containment; forcing an unavailable one says why."""
    caps = Capabilities(cgroup=False, pidns=True, memory=None, pids="v1", reasons={"cgroup": "no v2"})
    assert caps.resolve(Containment.AUTO) is Containment.PIDNS
    assert caps.resolve(Containment.PGROUP) is Containment.PGROUP
    with pytest.raises(ContainmentUnavailable, match="cgroup is unavailable here: no v2"):
        caps.resolve(Containment.CGROUP)
    assert Capabilities.from_dict(caps.to_dict()) == caps
    assert "containment pidns" in caps.describe()
    bare = Capabilities(cgroup=False, pidns=False, memory=None, pids=None)
    assert bare.resolve(Containment.AUTO) is Containment.PGROUP


def test_detect_finds_a_usable_containment() -> None:
    """detect() always yields a containment, and a reason for anything it lacks."""
    caps = sandbox.detect()
    assert caps.available(caps.resolve(Containment.AUTO))
    for feature in ("cgroup", "pidns"):
        assert getattr(caps, feature) or feature in caps.reasons
    for feature in ("memory", "pids"):
        assert getattr(caps, feature) in ("v1", "v2") or feature in caps.reasons


def test_error_types_round_trip() -> None:
    """Each error class has one wire name."""
    for name, cls in ERROR_TYPES.items():
        assert error_type_name(cls("x")) == name


def test_public_api() -> None:
    """The package exports what its docstring documents, lazily for the trio client."""
    for name in sandbox.__all__:
        assert getattr(sandbox, name) is not None
    with pytest.raises(AttributeError):
        _ = sandbox.nothing_here


def test_the_shim_stays_lean() -> None:
    """The shim process does not load trio: every spawn's fork would copy it."""
    code = "import sys, sandbox.shim; print('trio' in sys.modules, 'hashlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]


def test_sandbox_imports_only_stdlib_and_trio() -> None:
    """Layering: the sandbox imports the stdlib, trio and psutil only (never workbench or api)."""
    allowed = set(sys.stdlib_module_names) | {"trio", "psutil", "sandbox"}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"


def test_a_grace_signal_reaches_parents_before_their_children() -> None:
    """A shell in `wait` with a TERM trap gets the signal before the child it waits for dies of
    it: else `wait` returns, the shell exits, and its trap never runs (a flake of the trap tests
    under load, with members given in the order of a set)."""
    from sandbox._procfs import grace_order

    shell, child, grandchild, other = (700, 50), (710, 50), (20, 51), (5, 49)
    given = [grandchild, child, shell, other]
    assert grace_order(given) == [other, shell, child, grandchild]
    assert grace_order(reversed(given)) == [other, shell, child, grandchild]
