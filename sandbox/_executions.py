"""The executions a shim holds: starting them in their cgroups, and forgetting them cleanly."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import signal
import socket
from collections.abc import Sequence

from . import _cgroups as cg
from . import _warmbox
from ._cgroup_tracking import CgroupTracked
from ._detect import Capabilities
from ._errors import InputClosed, NotEmpty, NotReady, SandboxError, SpawnError, UnknownExecution
from ._factory import READY, KeeperFactory, sweep_lone_keepers
from ._files import PROC_FILE, write_json_atomic
from ._keeper import Keeper, programs, start_keeper
from ._launch import LaunchPlan, abort, apply_rlimits, launch, make_plan
from ._model import WARM_PREFIX, ChildInfo, Containment, KnownChild, Limits, SpawnSpec
from ._terminal import Channel
from ._tracking import Host, PgroupTracked, PidnsTracked, Tracked
from ._tree_cgroups import TreeCgroups
from ._tree_cgroups import remove as remove_cgroups


class Executions:
    """Every execution the shim started or adopted, by name, with the cgroups made for them
    (`sandbox._tree_cgroups`)."""

    def __init__(self, host: Host, run_dir: str, caps: Capabilities) -> None:
        self.host = host
        self.caps = caps
        self.run_dir = run_dir
        self.waiting = 0  # spawns waiting for a keeper from the factory (see `Shim`)
        self.children: dict[str, Tracked] = {}
        self.leaders: dict[int, Tracked] = {}  # the shim's children not yet reaped, by pid
        self.keepers: dict[int, Tracked] = {}  # the keepers (also its children) not yet reaped
        self.discard: set[str] = set()  # started, but spawn failed afterwards: forget when done
        self.sockets: dict[str, socket.socket] = {}  # the claim sockets of pre-started leaders
        self.cgroups = TreeCgroups(caps, run_dir, host.log)
        #: Where keepers come from (see `sandbox._factory`); None: the shim starts each itself.
        self.factory: KeeperFactory | None = None
        if caps.cgroup and caps.pidns:
            programs(run_dir)  # probed once, before a spawn may need a keeper of its own
            swept = sweep_lone_keepers(run_dir)
            if swept:
                host.log(f"killed {swept} keepers whose trees ended while no shim held them")
            try:
                self.factory = KeeperFactory(run_dir, host.log)
                self.cgroups.send_home(self.factory.pid)
                host.watch_fd(self.factory.fileno, self._factory_sent)
                self.factory.on_gone = host.unwatch_fd
            except OSError as e:
                host.log(f"cannot start the keeper factory ({e}): keepers are started by the shim")

    def get(self, name: str) -> Tracked:
        """The execution named `name`; raises UnknownExecution."""
        tracked = self.children.get(name)
        if tracked is None:
            raise UnknownExecution(f"no execution named {name!r}")
        return tracked

    def alive(self) -> list[str]:
        """The names of the executions whose leader or tree still runs."""
        return [t.name for t in self.children.values() if not t.finished]

    def short_of_keepers(self, spec: SpawnSpec) -> bool:
        """Whether `spec` needs a keeper and none is ready, while the factory makes more."""
        if self.factory is None or self.factory.sock is None or self.factory.ready:
            return False
        return self.caps.resolve(spec.containment) is Containment.CGROUP and self.caps.pidns

    def keeper_at_hand(self) -> bool:
        """Whether a spawn would find a keeper without starting one (or the factory is gone)."""
        return self.factory is None or self.factory.sock is None or bool(self.factory.ready)

    def want_keepers(self, waiting: int) -> None:
        """Ask the factory for keepers for `waiting` spawns (and the ones held ready)."""
        self.waiting = waiting
        if self.factory is not None:
            self.factory.want(READY + waiting)

    def spawn(self, spec: SpawnSpec) -> KnownChild:
        """Start `spec`; once this returns, its leader runs and proc.json is written.

        Raises:
            SpawnError: it did not start, and nothing of it is left.
        """
        if spec.name in self.children:
            raise SpawnError(f"an execution named {spec.name!r} already exists")
        containment = self.caps.resolve(spec.containment)
        if not os.path.isdir(spec.dir):
            raise SpawnError(f"the execution directory {spec.dir!r} does not exist")
        dirs = self.cgroups.make(spec.name, containment, spec.limits)
        # A cgroup alone is left by a process that may write its pid into another cgroup.procs
        # (root; or the owner of a delegated subtree, as the tree's user is): in a pid namespace
        # too, whose keeper dies with the tree, it takes every process of the tree with it.
        keeper = self._take_keeper() if containment is Containment.CGROUP and self.caps.pidns else None
        pidns = containment is Containment.PIDNS or keeper is not None
        try:
            plan, channel, pid, started = self._launch(spec, containment, dirs, pidns, keeper)
        except BaseException:
            remove_cgroups(dirs)
            if keeper is not None:
                keeper.discard()
            raise
        if keeper is not None:
            keeper.close_namespaces()
        v2, v1_memory, v1_pids = dirs
        identity = keeper.identity if keeper is not None else None
        info = ChildInfo(
            spec.name, pid, started, containment, spec.dir, v2, v1_memory, v1_pids, spec.tag, pidns, identity
        )
        tracked = make_tracked(self.host, info, spec.limits, adopted=False)
        tracked.channel = channel
        self._contain(tracked, plan, dirs, spec.limits, keeper)
        self.children[spec.name] = tracked
        self.leaders[pid] = tracked
        if keeper is not None and keeper.pidfd is None:
            self.keepers[keeper.pid] = tracked  # the shim's child: its reaping says it is gone
        try:
            write_json_atomic(os.path.join(spec.dir, PROC_FILE), info.to_dict())
        except OSError as e:
            tracked.signal(signal.SIGKILL)
            self.discard.add(spec.name)
            raise SpawnError(f"cannot record the process in {spec.dir!r}: {e.strerror}") from None
        return tracked.known()

    def _launch(
        self,
        spec: SpawnSpec,
        containment: Containment,
        dirs: list[str | None],
        pidns: bool,
        keeper: Keeper | None,
    ) -> tuple[LaunchPlan, Channel | None, int, int]:
        """Open its stdin or terminal and start its leader: (plan, channel, pid, start time)."""
        joins = self.cgroups.joins(dirs)
        use_rlimit_as = spec.limits.memory_bytes is not None and self.caps.memory is None
        channel = None
        pair = None
        try:
            if spec.open_stdin or spec.tty is not None:
                channel = Channel(self.host, spec.name, spec.tty, spec.stdout_path)
            elif spec.claim_socket:
                pair = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as e:
            raise SpawnError(f"cannot open the stdin or terminal of {spec.name!r}: {e.strerror}") from None
        stdin_fd = channel.child_stdin if channel else pair[1].fileno() if pair else None
        plan = make_plan(
            spec, containment, joins, use_rlimit_as, pidns, stdin_fd=stdin_fd, tty=spec.tty is not None
        )
        try:
            pid, started = launch(plan, keeper)
        except BaseException:
            if channel is not None:
                channel.close()
            if pair is not None:
                pair[0].close()
            raise
        finally:
            if pair is not None:
                pair[1].close()
        if pair is not None:
            self.sockets[spec.name] = pair[0]
        if self.factory is not None:
            self.factory.replenish(self.waiting)
        if channel is not None:
            channel.spawned()
        return plan, channel, pid, started

    def _contain(
        self,
        tracked: Tracked,
        plan: LaunchPlan,
        dirs: list[str | None],
        limits: Limits,
        keeper: Keeper | None,
    ) -> None:
        """Apply the leader's rlimits and its cgroups' limits, and watch it; if that fails, kill
        what may already be there (microseconds old) and raise SpawnError."""
        pid = tracked.info.pid
        try:
            apply_rlimits(pid, plan.rlimits)
            self.cgroups.apply_limits(dirs, limits)
            tracked.start()
            if keeper is not None and keeper.pidfd is not None:
                assert isinstance(tracked, CgroupTracked)
                tracked.hold_keeper(keeper.pidfd)
        except (OSError, ValueError) as e:
            why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if dirs[0]:
                cg.kill(dirs[0])
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)  # its fresh group; not reaped, so not reused
            abort(pid)
            tracked.close()
            if keeper is not None:
                keeper.kill()
            remove_cgroups(dirs)
            if tracked.channel is not None:
                tracked.channel.close()
            raise SpawnError(f"cannot set up the containment of {tracked.name!r}: {why}") from None

    def claim(
        self,
        name: str,
        spec: SpawnSpec,
        data: bytes,
        binds: Sequence[tuple[str, bool]] = (),
        same: Sequence[str] = (),
    ) -> KnownChild:
        """Make the waiting pre-started leader `name` the execution `spec`, and send it `data`.

        `name` (``warm-...``) was spawned with an open stdin and the containment and limits
        `spec` asks for; it is renamed `spec.name`, its proc.json is written into `spec.dir`,
        and `data` then an end of file go to its stdin. Checks first what a spawn of `spec`
        would fail on (name, directory, cwd, stdio files), so that a refusal changes nothing
        and the caller can start `spec` cold instead, to fail or not exactly as it would. A
        sandboxed one (spawned with `claim_socket`) is first given the host files `binds` (path,
        read-only) once `same` are checked (`sandbox._warmbox.give_files`), and its stdio with
        `data`; a failure there kills it.

        Raises:
            SpawnError: it cannot be claimed for `spec` (see above); it is left as it was.
        """
        tracked = self.get(name)
        channel = tracked.channel
        sock = self.sockets.get(name)
        if not name.startswith(WARM_PREFIX) or tracked.status is not None or (channel or sock) is None:
            raise SpawnError(f"{name!r} is not a pre-started leader waiting for a claim")
        if spec.name in self.children:
            raise SpawnError(f"an execution named {spec.name!r} already exists")
        if not os.path.isdir(spec.dir):
            raise SpawnError(f"the execution directory {spec.dir!r} does not exist")
        if not (os.path.isdir(spec.cwd) and os.access(spec.cwd, os.X_OK)):
            raise SpawnError(f"cannot change directory to {spec.cwd!r}")
        if sock is not None and not _warmbox.ready(sock):
            raise NotReady(f"{name!r} is still starting")
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
        try:
            paths = [(spec.stdin_path or os.devnull, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)]
            for path in (spec.stdout_path, spec.stderr_path):
                paths.append((path, flags))
            for path, mode in paths:
                os.close(os.open(path, mode, 0o600))
            info = dataclasses.replace(tracked.info, name=spec.name, dir=spec.dir, tag=spec.tag)
            write_json_atomic(os.path.join(spec.dir, PROC_FILE), info.to_dict())
        except OSError as e:
            raise SpawnError(f"cannot claim {name!r} for {spec.name!r}: {e}") from None
        try:
            if sock is not None:
                _warmbox.claim(tracked, sock, spec, data, binds, same)
                del self.sockets[name]
                sock.close()
            else:
                assert channel is not None
                channel.write(data, eof=True)
        except SandboxError as e:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(spec.dir, PROC_FILE))
            raise SpawnError(f"cannot send the claim to {name!r}: {e}") from None
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(tracked.info.dir, PROC_FILE))
        del self.children[name]
        tracked.info = info
        if channel is not None:
            channel.name = spec.name
        self.children[spec.name] = tracked
        return tracked.known()

    def drop_unclaimed(self) -> None:
        """Kill the pre-started leaders nobody claimed (their daemon left); forget them once dead."""
        for tracked in self.children.values():
            if tracked.name.startswith(WARM_PREFIX):
                if not tracked.finished:
                    tracked.signal(signal.SIGKILL)
                self.discard.add(tracked.name)

    def _factory_sent(self) -> None:
        assert self.factory is not None
        self.factory.receive()  # unwatched by `on_gone` if it is gone

    def _take_keeper(self) -> Keeper:
        keeper = self.factory.take() if self.factory is not None else None
        return keeper if keeper is not None else start_keeper(self.run_dir)

    def reaped(self, pid: int, wait_status: int, usage: resource.struct_rusage) -> None:
        """A child of the shim was reaped (a leader, or an escapee it adopted as subreaper)."""
        tracked = self.leaders.pop(pid, None)
        if tracked is not None:
            tracked.reaped(wait_status, usage)
        tracked = self.keepers.pop(pid, None)
        if tracked is not None:
            tracked.keeper_died()

    def signal(self, name: str, sig: int, foreground: bool = False) -> None:
        """Send `sig` to the whole tree of `name` (SIGKILL: the containment's hard kill).

        `foreground`: to the foreground process group of its terminal instead, where it has one
        (as a key typed on it would); the whole tree where it has none.
        """
        if sig not in signal.valid_signals():
            raise SandboxError(f"invalid signal {sig}")
        tracked = self.get(name)
        channel = tracked.channel
        if foreground and channel is not None and tracked.status is None and channel.signal_foreground(sig):
            return
        tracked.signal(sig)

    def channel(self, name: str) -> Channel:
        """The open input of `name`; raises UnknownExecution or InputClosed."""
        tracked = self.get(name)
        if tracked.channel is None or tracked.finished:
            raise InputClosed(f"{name!r} has no open stdin (none was asked for, or it ended)")
        return tracked.channel

    def release(self, name: str) -> None:
        """Forget a finished execution and remove its cgroups; raises NotEmpty otherwise."""
        tracked = self.get(name)
        if not tracked.finished:
            alive = "its leader still runs" if tracked.status is None else "processes of its tree still run"
            raise NotEmpty(f"cannot release {name!r}: {alive}")
        self._forget(tracked)

    def release_discarded(self) -> None:
        """Forget the executions whose spawn failed late, once they are dead."""
        for name in list(self.discard):
            tracked = self.children.get(name)
            if tracked is not None and tracked.finished:
                self._forget(tracked)

    def adopt(self, info: ChildInfo) -> KnownChild | None:
        """Hold a tree started by an earlier shim; None if nothing of it is alive."""
        held = self.children.get(info.name)
        if held is not None:
            if (held.info.pid, held.info.start_time) != (info.pid, info.start_time):
                raise SandboxError(f"another execution named {info.name!r} is held")
            return held.known()
        tracked = make_tracked(self.host, info, Limits(), adopted=True)
        if not tracked.start():
            return None
        self.children[info.name] = tracked
        return tracked.known()

    def close(self) -> None:
        """Stop watching everything, and remove every cgroup no live tree needs (shim exit)."""
        if self.factory is not None:
            if self.factory.sock is not None:
                self.host.unwatch_fd(self.factory.fileno)
            self.factory.close()
        for tracked in self.children.values():
            tracked.close()
            if tracked.finished:
                tracked.remove_cgroups()
        self.cgroups.close()

    def _forget(self, tracked: Tracked) -> None:
        tracked.close()
        sock = self.sockets.pop(tracked.name, None)
        if sock is not None:
            sock.close()
        left = tracked.remove_cgroups()
        if left:
            self.host.log(f"could not remove the cgroups {left} of {tracked.name}")
        del self.children[tracked.name]
        self.discard.discard(tracked.name)


def make_tracked(host: Host, info: ChildInfo, limits: Limits, adopted: bool) -> Tracked:
    """The tracker for `info`'s containment."""
    cls: type[Tracked] = {
        Containment.CGROUP: CgroupTracked,
        Containment.PIDNS: PidnsTracked,
        Containment.PGROUP: PgroupTracked,
    }[info.containment]
    return cls(host, info, limits, adopted)
