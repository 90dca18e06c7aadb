"""Warm starts: pre-started Python interpreters for stateless `workbench_code` executions.

A cold start of python code spends most of its time in the interpreter's own start-up. The pool
keeps up to `WORKBENCH_WARM_POOL` interpreters per *kind of start* that have done it and wait
(`warmdriver.py`) on a stdin pipe the shim holds. A start that finds one claims it: the shim
renames it to the execution (`Supervisor.claim`) and sends it the execution's working
directory, environment and stdio files, and it runs the code file as `python3 FILE` would. Each
is used once. A start that finds none starts cold at once; the pool refills in the background.

A kind of start is everything a pre-started interpreter cannot change once started, and must
match exactly: the interpreter and its options, the execution's containment, limits (rlimits
and cgroup limits, applied by the shim when it started), pid namespace and user, and every
variable that start-up reads (`PYTHON*`, the locale's `LANG`/`LANGUAGE`/`LC_*`, `HOME` for
the user site directory, `TZ`, and the loader's `LD_*`, `GLIBC_*` and `MALLOC_*`). So a request
that sets one of those differently from the pool's (or as a secret) starts cold. Only executions
without an open stdin or terminal, and only under the cgroup and pidns containments (the pgroup
containment finds a tree's processes by the environment they were started with), and not for a
tree run as another user than the shim's (the driver opens the execution's files itself).

On a sandboxed image (`launch.WarmBox`), the kind also holds the sandbox's command line
without the execution's own files: its session's workspace (bound when it starts), hidden
paths, network and user. The shim gives a claimed sandbox those files (`sandbox._warmbox`)
and its stdio over a socket (its user could not open them); its interpreter gets the
environment the leader's shell exports (`leader_env`). Only in the cgroup containment, under a
root daemon (whose sandbox runs as its own user).

An interpreter is claimed only once its start-up is over: a host one's driver then makes the
file `started` in its directory, a sandbox's driver says so on its socket; the start is cold
before (what start-up writes would otherwise go to the pool's files, not the execution's).
One that printed anything while starting, or died, is discarded: the start is cold.
The pool's interpreters are killed when the daemon stops, and by the shim when its
daemon is gone (a crash); one whose shim died reads the end of its stdin and exits.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
from pathlib import Path

import trio

import sandbox
from workbench.core.images import EXECUTION_PATH, Image
from workbench.core.launch import WarmBox
from workbench.core.store import ExecutionRow

log = logging.getLogger("workbench.core.warm")

_DRIVER = (Path(__file__).parent / "warmdriver.py").read_text(encoding="utf-8")
#: The file a host interpreter's driver makes in its directory once its start-up is over.
STARTED = "started"
_STARTUP_PREFIXES = ("PYTHON", "LC_", "LD_", "GLIBC_", "MALLOC_")
_STARTUP_NAMES = {"LANG", "LANGUAGE", "HOME", "TZ"}
#: Kinds of start warmed at once; another kind starts cold.
MAX_KINDS = 4
#: Pre-started interpreters of one kind found dead or noisy before it is no longer warmed.
MAX_FAILURES = 3

Kind = tuple[object, ...]


def reads_at_startup(name: str) -> bool:
    """Whether an interpreter's start-up (or the loader's) depends on the variable `name`."""
    return name in _STARTUP_NAMES or name.startswith(_STARTUP_PREFIXES)


def can_be_warm(row: ExecutionRow, image: Image) -> bool:
    """Whether this execution may start warm (its start-up env is checked at the claim)."""
    if row.kind != "workbench_code" or row.language != "python":
        return False
    if image.sandboxed and (image.user is None or image.bubblewrap is None):
        return False  # a sandbox is given its files by the shim as root (`sandbox._warmbox`)
    if row.open_stdin or row.tty_json is not None:
        return False
    argv = image.languages["python"].argv
    if argv[-1] != "{file}" or "{file}" in argv[:-1]:
        return False
    secret_names = json.loads(row.secret_env_names_json) if row.secret_env_names_json else []
    return not any(reads_at_startup(str(name)) for name in secret_names)


def spawn_env(spec: sandbox.SpawnSpec) -> dict[str, str]:
    """The environment the shim gives the leader of `spec`: `spec.env` then the tag, in order."""
    env = dict(spec.env)
    if spec.tag is not None:
        env[spec.tag[0]] = spec.tag[1]
    return env


def claim_message(spec: sandbox.SpawnSpec, env: dict[str, str] | None = None) -> bytes:
    """What `warmdriver.py` reads: the execution's cwd, code file, stdio and environment.

    The environment is exactly what the interpreter of a cold start gets: `env`, or what the
    shim would pass (`spawn_env`), in order.
    """
    env = spawn_env(spec) if env is None else env
    fields = [b"warm1", *(os.fsencode(p) for p in _paths(spec))]
    fields += [os.fsencode(k) + b"=" + os.fsencode(v) for k, v in env.items()]
    return b"\0".join([*fields, b"end"])


#: What the leader's shell exports, by (names in order, its own variables' values, cwd).
_LEADER_ENVS: dict[tuple[object, ...], list[tuple[str, str | None]]] = {}
#: Variables a POSIX shell sets or reads itself (their values are given to the probe).
_SHELL_OWN = frozenset({"PWD", "OLDPWD", "IFS", "OPTIND", "PS1", "PS2", "PS4", "PPID", "SHLVL", "_"})


async def leader_env(sh: str, program: str, env: dict[str, str], cwd: str) -> dict[str, str]:
    """The environment a sandbox's interpreter starts with: what the leader `sh` (`sandbox._bwrap`),
    started with `env` in `cwd`, exports to bubblewrap, which passes it on unchanged. A POSIX
    shell adds `PWD` and orders its variables its own way (dash: by a hash of the name), so the
    shell itself is asked, once per set of names (with empty values, but for its own variables').

    Raises OSError or subprocess.SubprocessError if the shell cannot be run or fails.
    """
    key = (tuple(env), tuple((k, env[k]) for k in env if k in _SHELL_OWN), cwd)
    order = _LEADER_ENVS.get(key)
    if order is None:
        probe = {k: (v if k in _SHELL_OWN else "") for k, v in env.items()}
        printer = shutil.which("env", path="/usr/bin:/bin") or "/usr/bin/env"
        done = await trio.run_process(
            [sh, "-c", '"$0" "$@"; exit $?', printer, "-0"], env=probe, cwd=cwd, capture_stdout=True
        )
        order = []
        for item in done.stdout.split(b"\0")[:-1]:
            name, _, value = os.fsdecode(item).partition("=")
            given = name in env and name not in _SHELL_OWN
            order.append((name, None if given else (program if name == "_" else value)))
        if len(_LEADER_ENVS) >= 64:
            _LEADER_ENVS.clear()
        _LEADER_ENVS[key] = order
    return {name: env[name] if value is None else value for name, value in order}


def _paths(spec: sandbox.SpawnSpec) -> tuple[str, str, str, str, str]:
    return (spec.cwd, spec.argv[-1], spec.stdin_path or os.devnull, spec.stdout_path, spec.stderr_path)


class WarmPool:
    """The pre-started interpreters, by kind of start; see the module's description."""

    def __init__(self, supervisor: sandbox.Supervisor, directory: Path, size: int) -> None:
        self.supervisor = supervisor
        self.directory = directory
        self.size = size
        self.idle: dict[Kind, list[str]] = {}
        #: The kinds warmed, least recently used first.
        self.templates: dict[Kind, sandbox.SpawnSpec] = {}
        self.boxes: dict[Kind, WarmBox] = {}
        self.failures: dict[Kind, int] = {}
        self.starts = {"warm": 0, "cold": 0}
        self.closed = False
        self._wake = trio.Event()
        self._to_kill: list[str] = []
        self._to_remove: list[str] = []
        self._scope = trio.CancelScope()
        self._stopped = trio.Event()
        self._started = False

    def _kind(self, spec: sandbox.SpawnSpec, box: WarmBox | None) -> Kind | None:
        containment = self.supervisor.capabilities.resolve(spec.containment)
        if containment not in (sandbox.Containment.CGROUP, sandbox.Containment.PIDNS):
            return None
        if spec.user is not None:
            return None  # the driver opens the execution's files itself: as the shim's user only
        if box is not None and containment is not sandbox.Containment.CGROUP:
            return None  # the shim finds a sandbox's processes by its cgroup
        startup = tuple(sorted((k, v) for k, v in spec.env.items() if reads_at_startup(k)))
        argv = spec.argv[:-1] if box is None else box.prefix
        return (argv, startup, spec.limits, containment, spec.user, box.cwd if box else None)

    async def start(
        self, spec: sandbox.SpawnSpec, warm: bool, box: WarmBox | None = None
    ) -> sandbox.ChildInfo:
        """Start `spec`: a waiting interpreter of its kind if `warm` and there is one, else cold.
        `box`: how it starts in a pre-started sandbox (`launch.warm_box`), for a sandboxed image
        (whose start is `warm` only with one).

        Raises what `Supervisor.spawn` raises.
        """
        if not warm:
            return await self.supervisor.spawn(spec)
        kind = self._kind(spec, box) if self.size and not self.closed else None
        if kind is None:
            self.starts["cold"] += 1
            return await self.supervisor.spawn(spec)
        try:
            info = await self._claim(kind, spec, box)
            if info is not None:
                self.starts["warm"] += 1
                return info
            self._remember(kind, spec, box)
            self.starts["cold"] += 1
            return await self.supervisor.spawn(spec)
        finally:
            # The refill's spawns queue at the shim behind this start's, never ahead of it.
            self._wake.set()

    def _remember(self, kind: Kind, spec: sandbox.SpawnSpec, box: WarmBox | None) -> None:
        """Warm `kind` from now on; the least recently used kind makes way (its interpreters are
        killed) when MAX_KINDS are warmed already."""
        if kind in self.templates:
            return
        while len(self.templates) >= MAX_KINDS:
            old = next(iter(self.templates))
            del self.templates[old]
            self.boxes.pop(old, None)
            self.failures.pop(old, None)
            for name in self.idle.pop(old, []):
                self._discard(name)
        # Only what a pre-start takes: no request's values beyond its start-up variables.
        startup = {k: v for k, v in spec.env.items() if reads_at_startup(k)}
        self.templates[kind] = dataclasses.replace(spec, env=startup, stdin_path=None)
        if box is not None:
            self.boxes[kind] = box

    async def _claim(
        self, kind: Kind, spec: sandbox.SpawnSpec, box: WarmBox | None
    ) -> sandbox.ChildInfo | None:
        if kind in self.templates:  # used: the last to make way
            self.templates[kind] = self.templates.pop(kind)
        waiting = self.idle.get(kind, [])
        if not waiting:
            return None
        env = None
        if box is not None:
            try:
                env = await leader_env(box.sh, box.prefix[3], spawn_env(spec), spec.cwd)
            except (OSError, subprocess.SubprocessError) as e:
                log.warning("cannot learn what a sandbox's shell exports (starting cold): %s", e)
                return None
        message = claim_message(spec, env)
        starting: list[str] = []  # interpreters still starting: kept, in their order
        try:
            return await self._claim_one(kind, spec, box, waiting, message, starting)
        finally:
            waiting[:0] = starting

    async def _claim_one(
        self,
        kind: Kind,
        spec: sandbox.SpawnSpec,
        box: WarmBox | None,
        waiting: list[str],
        message: bytes,
        starting: list[str],
    ) -> sandbox.ChildInfo | None:
        while waiting and len(message) <= sandbox.MAX_PENDING_INPUT:
            name = waiting.pop(0)
            known = self.supervisor.known().get(name)
            alive = known is not None and known.status is None
            if alive and box is None and not (self.directory / name / STARTED).exists():
                starting.append(name)  # its start-up may still write: perhaps the next one is done
                continue
            if not self._usable(kind, name):
                continue
            try:
                binds, same = (box.binds, box.same) if box is not None else ((), ())
                info = await self.supervisor.claim(name, spec, message, binds, same)
            except sandbox.NotReady:
                starting.append(name)  # perhaps the next one has started
                continue
            except sandbox.SpawnError as e:
                # Not for this spec (its cwd or files), or no longer waiting: the cold start
                # says why, or runs.
                log.debug("warm start of %s refused: %s", spec.name, e)
                known = self.supervisor.known().get(name)
                if box is None and known is not None and known.status is None:
                    waiting.insert(0, name)  # (a sandbox's may be given some of its files: killed)
                else:
                    self._discard(name)
                return None
            log.debug("execution %s: warm start (%s)", spec.name, name)
            self._to_remove.append(name)
            return info
        return None

    def _usable(self, kind: Kind, name: str) -> bool:
        """Alive, and silent while starting (a cold start's output would have had what it wrote);
        else discarded. One that wrote something (a warning, a crash) counts as a failure."""
        directory = self.directory / name
        try:
            silent = all(os.stat(directory / f).st_size == 0 for f in ("stdout", "stderr"))
        except OSError:
            silent = False
        if not silent:
            self.failures[kind] = failures = self.failures.get(kind, 0) + 1
            if failures == MAX_FAILURES:
                log.warning("pre-started interpreters write while starting: those starts are cold now")
        known = self.supervisor.known().get(name)
        if silent and known is not None and known.status is None:
            return True
        self._discard(name)
        return False

    def _discard(self, name: str) -> None:
        self._to_kill.append(name)
        self._wake.set()

    async def run(self) -> None:
        """Refill the pool and dispose of discarded interpreters, until `close`."""
        self._started = True
        try:
            with self._scope:
                await trio.to_thread.run_sync(self._reset_directory)
                while not self.closed:
                    await self._wake.wait()
                    self._wake = trio.Event()
                    await self._refill()
        finally:
            self._stopped.set()

    async def _refill(self) -> None:
        while self._to_kill:
            await self._kill(self._to_kill[-1])  # still listed if cancelled: `close` kills it
            self._to_kill.pop()
        if self._to_remove:
            names, self._to_remove = self._to_remove, []
            await trio.to_thread.run_sync(self._discard_dirs, names)
        for kind, template in list(self.templates.items()):
            waiting = self.idle.setdefault(kind, [])
            while len(waiting) < self.size and self.failures.get(kind, 0) < MAX_FAILURES:
                name = await self._prestart(template, self.boxes.get(kind))
                if self.templates.get(kind) is not template:
                    if name is not None:
                        self._discard(name)  # its kind made way meanwhile
                    break
                if name is None:
                    self.failures[kind] = MAX_FAILURES
                    break
                waiting.append(name)

    async def _prestart(self, template: sandbox.SpawnSpec, box: WarmBox | None) -> str | None:
        name = sandbox.WARM_PREFIX + secrets.token_hex(8)
        directory = self.directory / name
        await trio.to_thread.run_sync(lambda: directory.mkdir(mode=0o700, parents=True))
        tag = (template.tag[0], name) if template.tag is not None else None
        spec = sandbox.SpawnSpec(
            name=name,
            # Its directory as an argument: `ps` tells whose it is (the claim replaces sys.argv).
            argv=(*(template.argv[:-1] if box is None else box.prefix), "-c", _DRIVER, str(directory)),
            env={"PATH": EXECUTION_PATH, **template.env},
            cwd=str(directory) if box is None else box.cwd,
            dir=str(directory),
            stdout_path=str(directory / "stdout"),
            stderr_path=str(directory / "stderr"),
            limits=template.limits,
            containment=template.containment,
            tag=tag,
            user=template.user,
            open_stdin=box is None,
            claim_socket=box is not None,
        )
        try:
            await self.supervisor.spawn(spec)
        except sandbox.SandboxError as e:
            log.warning("cannot pre-start an interpreter (starting python cold): %s", e)
            await trio.to_thread.run_sync(self._discard_dir, name)
            return None
        return name

    async def _kill(self, name: str) -> None:
        try:
            await self.supervisor.signal(name, signal.SIGKILL)
            await self.supervisor.wait_empty(name)
            await self.supervisor.release(name)
        except sandbox.UnknownExecution:
            pass  # the shim forgot it already (its client left while it was dying)
        except sandbox.SandboxError as e:
            log.warning("cannot dispose of the pre-started interpreter %s: %s", name, e)
        await trio.to_thread.run_sync(self._discard_dir, name)

    async def close(self) -> None:
        """Kill every waiting interpreter (the daemon stops); later starts are cold.

        Waits for the refill task to stop first, if it runs (a spawn it began is finished, and
        its interpreter killed here).
        """
        self.closed = True
        self._scope.cancel()
        if self._started:
            await self._stopped.wait()
        names = [name for waiting in self.idle.values() for name in waiting] + self._to_kill
        self.idle.clear()
        self._to_kill = []
        for name in names:
            await self._kill(name)

    def _discard_dir(self, name: str) -> None:
        shutil.rmtree(self.directory / name, ignore_errors=True)

    def _discard_dirs(self, names: list[str]) -> None:
        for name in names:
            self._discard_dir(name)

    def _reset_directory(self) -> None:
        """Leftovers of an earlier daemon (their interpreters are gone: see the description)."""
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
