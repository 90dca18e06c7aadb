"""Services: bash executions meant to stay up, and when they are ready.

A service (`service: true`) has no default deadline. When the command's own process (the leader)
exits, its background processes are not killed: the service lives as long as anything of its
tree does (judged by the containment), and ends with the leader's exit status once the tree is
empty; a cancel kills the whole tree as for any execution. Its readiness is watched from its
start: `port` (something of its tree listens on that TCP port, see `ports`) or `logPattern` (a
line of its stdout or stderr matches); once ready, the record's `ready_at` is set and a `ready`
event journaled, together. Not ready within `readyTimeoutMs`, it is killed and ends `timed_out`
(`error.code` `ready_timeout`). A service without a readiness check is ready once it runs.
After a daemon restart a service is adopted like any tree, and its readiness watched again if
it was not ready yet: looked at once in full before its ready deadline is judged, so that one
that became ready while no daemon watched is ready, even where that deadline passed meanwhile
(when a port began to listen cannot be told, nor when a line was written past the journal).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any, Protocol

import trio

import sandbox
from workbench.core import ports
from workbench.core.layout import ExecutionDir
from workbench.core.live import Live, RunContext, Stop
from workbench.core.records import event_builder, now_ms
from workbench.core.store import ExecutionRow
from workbench.core.store.rows import NO_DEADLINE_MS
from workbench.wire.models import StartBashRequest, StartRequest
from workbench.wire.services import DEFAULT_READY_TIMEOUT_MS, Readiness


class Run(Protocol):
    """What the watchers need of a service's supervisor task (`runner.Run`)."""

    ex: RunContext
    live: Live
    row: ExecutionRow
    directory: ExecutionDir
    child: sandbox.ChildInfo | None
    exit_status: sandbox.ExitStatus | None


#: How often a port is looked at: every 5 ms for the first second (a server starts in tens or
#: hundreds of milliseconds), then less and less often, so that a slow one costs little. A look
#: is two small reads of /proc.
_POLL_FIRST_S, _POLL_FAST_FOR_S, _POLL_MAX_S, _POLL_GROWTH = 0.005, 1.0, 0.1, 1.2
#: Bytes of one line kept for a log pattern (a longer line is searched in pieces).
_LINE_MAX = 64 * 1024
_READ = 256 * 1024
#: The longest the first look at a service adopted after a restart may take past its deadline.
_FIRST_LOOK_S = 10.0


def row_fields(req: StartRequest, default_timeout_ms: int) -> tuple[int, dict[str, Any]]:
    """(timeout_ms, the service columns) of a start: a service without `timeoutMs` gets none (0)."""
    if not isinstance(req, StartBashRequest) or not req.service:
        return (req.timeout_ms if req.timeout_ms is not None else default_timeout_ms), {}
    readiness = req.readiness
    ready_timeout = req.ready_timeout_ms
    if readiness is not None and ready_timeout is None:
        ready_timeout = DEFAULT_READY_TIMEOUT_MS
    fields = {
        "service": True,
        "readiness_json": readiness.model_dump_json(by_alias=True) if readiness is not None else None,
        "ready_timeout_ms": ready_timeout,
    }
    return (req.timeout_ms if req.timeout_ms is not None else 0), fields


def deadline_at(created_at: int, timeout_ms: int) -> int:
    """The stored deadline: `NO_DEADLINE_MS` for none."""
    return created_at + timeout_ms if timeout_ms > 0 else NO_DEADLINE_MS


def watch(run: Run, nursery: trio.Nursery) -> None:
    """Start a service's watchers in the nursery of its supervisor's watchers (see `runner`)."""
    live = run.live
    leader = None
    if live.held:
        # An exit already learned (while the daemon was down) is kept here: the service goes on
        # while its tree lives, so the supervisor must not see it yet.
        leader, run.exit_status = run.exit_status, None
        nursery.start_soon(_watch_tree, run, leader)
    if run.row.ready_at is None:
        nursery.start_soon(_watch_readiness, run)


async def _watch_tree(run: Run, leader: Any) -> None:
    """Wait for the leader's exit (noting it), then for the tree to be empty: then it ended."""
    assert run.child is not None
    supervisor, name = run.ex.supervisor, run.child.name
    if leader is None:
        leader = await supervisor.wait_exited(name)
        if not _empty(run):
            how = f"exit code {leader.exit_code}" if leader.exit_code is not None else "a signal"
            note = f"the command's process ended ({how}); the service lives on while its processes do"
            await run.ex.journal.append(run.live.id, [("status", event_builder("status", message=note))])
    await supervisor.wait_empty(name)
    run.exit_status = leader
    run.live.kick.set()


def _empty(run: Run) -> bool:
    assert run.child is not None
    known = run.ex.supervisor.known().get(run.child.name)
    return known is not None and known.empty


async def _watch_readiness(run: Run) -> None:
    """Mark the service ready once it is; stop it if it is not by its ready deadline."""
    row = run.row
    readiness = Readiness.model_validate_json(row.readiness_json) if row.readiness_json else None
    if readiness is None:
        await _mark_ready(run, "running")
        return
    timeout_ms = row.ready_timeout_ms or DEFAULT_READY_TIMEOUT_MS
    since = row.started_at if row.started_at is not None else now_ms()
    deadline = trio.current_time() + (since + timeout_ms - now_ms()) / 1000
    # The deadline counts from the first whole look on: one that passed while no daemon watched
    # (a restart) does not stop a service that became ready meanwhile before it is looked at.
    # The first look is bounded all the same (a pattern that backtracks for ever on a long output).
    with trio.CancelScope(deadline=max(deadline, trio.current_time() + _FIRST_LOOK_S)) as scope:

        def looked() -> None:
            scope.deadline = deadline

        if readiness.port is not None:
            await _wait_port(run, readiness.port, looked)
            await _mark_ready(run, f"something of its tree listens on port {readiness.port}")
        else:
            assert readiness.log_pattern is not None
            line = await _wait_pattern(run, re.compile(readiness.log_pattern), looked)
            await _mark_ready(run, f"its output matched: {line[:200]}")
        return
    message = f"not ready within readyTimeoutMs ({timeout_ms} ms); the tree was killed"
    run.live.request_stop(Stop.NOT_READY, message, 0)


async def _mark_ready(run: Run, why: str) -> None:
    at = now_ms()
    event = event_builder("ready", timestamp=at, message=f"ready: {why}")
    await run.ex.journal.append(run.live.id, [("ready", event)], {"ready_at": at})


async def _wait_port(run: Run, port: int, looked: Callable[[], None]) -> None:
    """Until something of the tree listens on `port`; `looked` is called after the first look."""
    assert run.child is not None
    info = run.child
    pause, fast_until = _POLL_FIRST_S, trio.current_time() + _POLL_FAST_FOR_S
    while True:
        # The socket tables are read here (a few kernel-made lines: cheaper than a thread hop,
        # which costs milliseconds on a busy machine); the tree's descriptors only once one
        # listens, in a worker thread.
        began = trio.current_time()
        inodes = ports.candidates(info, port)
        if inodes:
            listens: bool = await trio.to_thread.run_sync(ports.tree_listens, info, port, inodes)
            if listens:
                return
        looked()
        # A look that costs more (another network namespace is read through /proc) waits longer:
        # the watching never takes more than a tenth of the daemon's time.
        await trio.sleep(max(pause, 10 * (trio.current_time() - began)))
        if trio.current_time() > fast_until:
            pause = min(pause * _POLL_GROWTH, _POLL_MAX_S)


async def _wait_pattern(run: Run, pattern: re.Pattern[str], looked: Callable[[], None]) -> str:
    """The first line of stdout or stderr that `pattern` matches (`looked` is called once all that
    was written before the first look has been searched).

    Woken by the journal: capture commits what the process writes (past the output budget, its
    counters at least every 250 ms), and each commit wakes this watcher, which reads the spool
    files itself. (An inotify watch of its own on the spool files would take over capture's: the
    kernel gives one watch per file and instance.)
    """
    files = [run.directory.stdout, run.directory.stderr]
    offsets, pending = [0, 0], [b"", b""]
    with run.ex.journal.watch(run.live.id, follower=False) as watch:
        while True:
            seen = watch.version
            more = False
            for i, path in enumerate(files):
                data = await trio.to_thread.run_sync(_read_from, path, offsets[i])
                offsets[i] += len(data)
                more = more or len(data) == _READ
                lines = (pending[i] + data).split(b"\n")
                pending[i] = lines.pop()[-_LINE_MAX:]
                # The unfinished line too: a prompt need not end with a newline.
                texts = [ln.decode("utf-8", "replace") for ln in (*lines, pending[i]) if ln]
                found = await trio.to_thread.run_sync(_search, pattern, texts, abandon_on_cancel=True)
                if found is not None:
                    return found
            if not more:
                looked()
                await watch.wait_changed(seen)


def _read_from(path: os.PathLike[str], offset: int) -> bytes:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(_READ)
    except FileNotFoundError:
        return b""


def _search(pattern: re.Pattern[str], lines: list[str]) -> str | None:
    # In a worker thread: a pattern that backtracks for ever holds a thread, not the daemon.
    for line in lines:
        if pattern.search(line):
            return line
    return None
