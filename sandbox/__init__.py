"""Start, contain, watch and kill process trees. Imports only the stdlib and trio.

Knows nothing of SQLite, HTTP, events or executions' meaning: an execution here is a named
process tree. One long-lived helper per run dir, the *shim* (``python -m sandbox.shim``), starts
every tree, is its parent and child subreaper, reaps it and records its leader's exit, and
outlives a crash of the daemon, which reconnects to it and learns what happened meanwhile.
The shim speaks newline-delimited JSON on RUN_DIR/shim.sock (see `sandbox._protocol`), serves
one daemon at a time, and exits once no daemon is connected and nothing it holds is alive.
Each execution's directory gets ``proc.json`` (its ChildInfo) before spawn() returns and
``status.json`` (its ExitStatus) when its leader is reaped.

Usage (the daemon side, in trio)::

    caps = detect()                                        # what this machine allows
    async with open_supervisor(run_dir) as sup:            # connect to, or start, the shim
        info = await sup.spawn(SpawnSpec(name, argv, env, cwd, dir, stdout_path, stderr_path))
        status = await sup.wait_exited(name)               # ExitStatus of the leader
        await sup.signal(name, signal.SIGKILL)             # the whole tree, hard
        await sup.send_input(name, b"y\n", eof=False)      # open_stdin / tty specs only
        await sup.resize(name, 50, 120)                    # tty specs only
        await sup.wait_empty(name)                         # nothing of the tree is alive
        await sup.release(name)                            # forget it, remove its cgroups
        sup.known()                                        # everything held, after a reconnect
        await sup.adopt(info)                              # recovery after the shim died
        await sup.claim("warm-1", spec, data)              # a pre-started leader becomes spec
        await sup.claim("warm-2", spec, data, binds, same) # a pre-started sandbox (claim_socket)
        await sup.shutdown()                               # once everything is dead

Containment (`Containment`; AUTO picks the strongest available, recorded in ChildInfo):

- ``cgroup``: a cgroup v2 per execution; kill = ``cgroup.kill``; empty = ``populated 0``. Where
  pid namespaces can be made, also one of its own per tree, whose init is a keeper started
  ahead (`sandbox._keeper`): a process that writes itself into another cgroup still dies with the
  keeper, SIGKILLed with the tree and once its cgroup is empty; the leader is still the shim's
  child, so its exit status is exact.
- ``pidns``: a pid namespace per execution; kill = SIGKILL to its init. As init, the leader
  ignores signals it has no handler for (a SIGTERM reaches the others), and its exit
  kills the rest of the tree.
- ``pgroup``: session, process group and an environment tag, swept through /proc; kill =
  SIGSTOP then SIGKILL every member, until a sweep finds none.

Limits (`Limits`) use the memory and pids cgroup controllers (v2, else v1) where available,
and rlimits always. `ExitStatus.limit` names the limit that killed the leader.

Bubblewrap (`Bubblewrap`, `SandboxLayout`, `sandboxed_argv`, `probe_bubblewrap`): the command
line that runs an argv isolated (read-only host root, private /tmp, no network but a loopback,
its own pid namespace, no capabilities; or, from a root shim, an unprivileged uid and gid set by
setpriv); it is an ordinary argv for `SpawnSpec`, contained and killed like any other tree.
`bind_order` is the order it binds paths in; a pre-started sandbox is given the rest of its
binds, and its stdio, when it is claimed (`sandbox._warmbox`).

Recovery without a shim: `read_proc_file` and `read_status_file` read what the shim wrote in
the execution's directory; `process_alive` checks a (pid, start time) identity.

Errors: see `SandboxError` and its subclasses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._bwrap import PRIVATE_DIRS, Bubblewrap, SandboxLayout, bind_order, probe_bubblewrap, sandboxed_argv
from ._cgroups import procs as cgroup_pids
from ._detect import Capabilities, detect
from ._errors import (
    ContainmentUnavailable,
    InputClosed,
    InputFull,
    NotEmpty,
    NotReady,
    SandboxError,
    ShimRefused,
    SpawnError,
    SupervisorLost,
    UnknownExecution,
)
from ._files import read_proc_file, read_status_file
from ._model import (
    LIMIT_CPU,
    LIMIT_FILE_SIZE,
    LIMIT_OOM,
    UNKNOWN_EXIT,
    WARM_PREFIX,
    ChildInfo,
    Containment,
    ExitStatus,
    KnownChild,
    Limits,
    SpawnSpec,
    validate_name,
)
from ._procfs import process_alive
from ._terminal import MAX_PENDING_INPUT

if TYPE_CHECKING:
    from ._client import Supervisor, open_supervisor

__all__ = [
    "LIMIT_CPU",
    "LIMIT_FILE_SIZE",
    "LIMIT_OOM",
    "MAX_PENDING_INPUT",
    "PRIVATE_DIRS",
    "UNKNOWN_EXIT",
    "WARM_PREFIX",
    "Bubblewrap",
    "Capabilities",
    "ChildInfo",
    "Containment",
    "ContainmentUnavailable",
    "ExitStatus",
    "InputClosed",
    "InputFull",
    "KnownChild",
    "Limits",
    "NotEmpty",
    "NotReady",
    "SandboxError",
    "SandboxLayout",
    "ShimRefused",
    "SpawnError",
    "SpawnSpec",
    "Supervisor",
    "SupervisorLost",
    "UnknownExecution",
    "bind_order",
    "cgroup_pids",
    "detect",
    "open_supervisor",
    "probe_bubblewrap",
    "process_alive",
    "read_proc_file",
    "read_status_file",
    "sandboxed_argv",
    "validate_name",
]


def __getattr__(name: str) -> object:
    # The client needs trio; the shim process imports this package too and must stay lean
    # (importing trio doubles the cost of every fork it makes), so the client loads on use.
    if name in ("Supervisor", "open_supervisor"):
        from . import _client

        return getattr(_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
