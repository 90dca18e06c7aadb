"""Sessions and their workspaces: finding one for a principal, its size against the quota, its
lock, and listing or removing whole sessions.

A session is its workspace, `<data>/workspaces/<principal>/<session>` (see `Layout.workspace`):
made on first use (the first execution that runs in it, or the first file written to it), and
only ever reached by its own principal. Another principal's session is exactly what a session
that does not exist is: a 404.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import trio

from workbench.core import beneath, shells
from workbench.core.live import Removals
from workbench.core.records import format_time
from workbench.core.settings import Settings
from workbench.core.store import ExecutionRow
from workbench.wire.errors import Conflict, NotFound, QuotaExceeded
from workbench.wire.files import Session
from workbench.wire.models import SESSION_ID

#: How long a measured workspace size is trusted before it is measured again: executions write
#: to workspaces too, and walking a large tree at every write would cost more than the write.
USAGE_FRESH_S = 1.0


def valid_session(session_id: str) -> bool:
    return bool(SESSION_ID.fullmatch(session_id)) and session_id not in (".", "..")


def measure(path: Path) -> int:
    """Bytes of the regular files under `path` (each inode once), never following a symlink."""
    try:
        fd = beneath.open_directory(None, str(path))
    except OSError:
        return 0
    with beneath.closing(fd):
        return _sizes(fd, set())


def _sizes(fd: int, seen: set[tuple[int, int]]) -> int:
    total = 0
    try:
        with os.scandir(fd) as entries:
            found = list(entries)
    except OSError:
        return 0
    for entry in found:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                sub = beneath.open_directory(fd, entry.name)
            except OSError:
                continue
            with beneath.closing(sub):
                total += _sizes(sub, seen)
        elif stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total


@dataclass(eq=False)
class _Usage:
    bytes: int
    measured_at: float


class Workspaces:
    """The principals' session workspaces, with their quota and one lock per workspace."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.layout = settings.layout
        #: The executions that are queued or running (set by the daemon once it has them).
        self.live: Callable[[], Iterable[ExecutionRow]] = list
        #: The ids of a principal's live code contexts in a session (set by the daemon too).
        self.contexts: Callable[[str, str], list[str]] = _no_contexts
        #: The sessions being removed (the daemon shares the executor's).
        self.removals = Removals()
        self._usage: dict[Path, _Usage] = {}
        self._locks: dict[Path, tuple[trio.Lock, int]] = {}
        #: The file writes under way in each workspace, and the event of their end.
        self._writes: dict[Path, tuple[int, trio.Event]] = {}

    def path(self, principal: str, session_id: str) -> Path:
        """The workspace of a principal's session (which may not exist yet); 404 for a bad id."""
        if not valid_session(session_id):
            raise NotFound(f"no session {session_id[:80]!r}")
        return self.layout.workspace(principal, session_id)

    def existing(self, principal: str, session_id: str) -> Path:
        """The workspace of a session that exists; 404 otherwise (also for another's)."""
        path = self.path(principal, session_id)
        if not path.is_dir():
            raise NotFound(f"no session {session_id!r}")
        return path

    def open_root(self, workspace: Path, *, make: bool) -> int:
        """An `O_PATH` descriptor of a workspace (made first when `make`); blocking."""
        if make and not workspace.is_dir():
            workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
            self.layout.give(workspace)
        try:
            return os.open(workspace, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise NotFound(f"no session {workspace.name!r}") from None

    @contextlib.asynccontextmanager
    async def locked(self, workspace: Path) -> AsyncIterator[None]:
        """Hold the workspace's lock: compare-and-swap and quota checks of API writes are exact
        among API writes (executions write without it)."""
        lock, users = self._locks.get(workspace, (trio.Lock(), 0))
        self._locks[workspace] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[workspace]
            if users == 1:
                del self._locks[workspace]
            else:
                self._locks[workspace] = (lock, users - 1)

    @contextlib.asynccontextmanager
    async def writing(self, workspace: Path) -> AsyncIterator[None]:
        """A file write under way (its body streams into the workspace): a removal of the session
        waits for its end, and it waits for a removal under way to end first (then makes the
        workspace again)."""
        await self.removals.over(workspace)
        count, done = self._writes.get(workspace, (0, trio.Event()))
        self._writes[workspace] = (count + 1, done)
        try:
            yield
        finally:
            count, done = self._writes.pop(workspace)
            if count > 1:
                self._writes[workspace] = (count - 1, done)
            else:
                done.set()

    # -- quota ------------------------------------------------------------------------------

    def used_now(self, workspace: Path) -> int:
        """The workspace's size in bytes, measured at most `USAGE_FRESH_S` ago (blocking)."""
        usage = self._usage.get(workspace)
        if usage is None or time.monotonic() - usage.measured_at > USAGE_FRESH_S:
            usage = self._usage[workspace] = _Usage(measure(workspace), time.monotonic())
        return usage.bytes

    async def used(self, workspace: Path) -> int:
        """`used_now`, in a worker thread when it must measure."""
        usage = self._usage.get(workspace)
        if usage is not None and time.monotonic() - usage.measured_at <= USAGE_FRESH_S:
            return usage.bytes
        return await trio.to_thread.run_sync(self.used_now, workspace)

    def room_now(self, workspace: Path, replaced: int = 0) -> int:
        """How many bytes a write that replaces `replaced` bytes may add; 507 when none (blocking)."""
        quota = self.settings.workspace_quota_bytes
        left = quota - self.used_now(workspace) + replaced
        if left <= 0:
            raise QuotaExceeded(f"the session's workspace holds its quota of {quota} bytes already")
        return left

    async def room(self, workspace: Path, replaced: int = 0) -> int:
        """`room_now`, in a worker thread when the workspace must be measured."""
        await self.used(workspace)
        return self.room_now(workspace, replaced)

    def grew(self, workspace: Path, delta: int) -> None:
        """An API write changed the workspace's size by `delta` bytes."""
        usage = self._usage.get(workspace)
        if usage is not None:
            usage.bytes = max(0, usage.bytes + delta)

    def forget(self, workspace: Path) -> None:
        """The workspace's size changed by an unknown amount: measure it again when asked."""
        self._usage.pop(workspace, None)

    def quota_error(self, wanted: int) -> QuotaExceeded:
        quota = self.settings.workspace_quota_bytes
        return QuotaExceeded(
            f"writing {wanted} bytes would take the session's workspace past its quota of {quota} bytes"
        )

    # -- sessions ---------------------------------------------------------------------------

    def _live_in(self, principal: str, session_id: str) -> int:
        return sum(1 for r in self.live() if r.principal == principal and r.session_id == session_id)

    async def _describe(self, principal: str, session_id: str, path: Path) -> Session:
        size = await self.used(path)
        try:
            modified = os.stat(path).st_mtime_ns // 1_000_000
        except FileNotFoundError:
            raise NotFound(f"no session {session_id!r}") from None
        return Session(
            session_id=session_id,
            size_bytes=size,
            quota_bytes=self.settings.workspace_quota_bytes,
            modified_at=format_time(modified) or "",
            live_executions=self._live_in(principal, session_id),
            live_contexts=len(self.contexts(principal, session_id)),
        )

    async def sessions(self, principal: str) -> list[Session]:
        """The principal's sessions, by id."""
        base = self.layout.workspaces_dir / principal

        def names() -> list[str]:
            try:
                return sorted(e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False))
            except FileNotFoundError:
                return []

        out = []
        for name in await trio.to_thread.run_sync(names):
            if valid_session(name):
                with contextlib.suppress(NotFound):
                    out.append(await self._describe(principal, name, base / name))
        return out

    async def session(self, principal: str, session_id: str) -> Session:
        """One session; 404 when it does not exist (or is another principal's)."""
        return await self._describe(principal, session_id, self.existing(principal, session_id))

    async def remove_all(self, principal: str) -> int:
        """Remove every session of the principal; 409 (and nothing removed) while an execution of
        one of them is queued or running or a code context of one lives. One that comes into use
        while the others are removed is left, and a 409 then names it. How many were removed."""
        sessions = await self.sessions(principal)
        held = {s.session_id: self.contexts(principal, s.session_id) for s in sessions}
        busy = sorted(s.session_id for s in sessions if s.live_executions or held[s.session_id])
        if busy:
            shown = ", ".join(busy[:10])
            running = any(s.live_executions for s in sessions)
            contexts = sorted(c for ids in held.values() for c in ids)
            named = f" (live code contexts: {', '.join(contexts[:10])})" if contexts else ""
            raise _busy(f"sessions still in use: {shown}{named}", running, contexts)
        removed, left = 0, []
        listed = {s.session_id for s in sessions}
        for session_id in shells.kept_states(self.layout, principal):
            if session_id not in listed and not self._live_in(principal, session_id):
                shells.session_file(self.layout, principal, session_id).unlink(missing_ok=True)
        for found in sessions:
            try:
                await self.remove(principal, found.session_id)
            except NotFound:
                continue  # removed meanwhile, by another request
            except Conflict:
                left.append(found.session_id)
                continue
            removed += 1
        if left:
            raise Conflict(
                f"{removed} session(s) removed; these came into use meanwhile and were left: "
                f"{', '.join(left[:10])}"
            )
        return removed

    async def remove(self, principal: str, session_id: str) -> None:
        """Remove a session's workspace and everything in it; 409 while an execution runs in it or
        a code context of it lives (its interpreter's working directory is the workspace)."""
        path = self.path(principal, session_id)
        # Another request removes it: once it is done, nothing is left (404), or what its failed
        # removal left, which this one tries again.
        while (under_way := self.removals.under_way(path)) is not None:
            await under_way.wait()
        state = shells.session_file(self.layout, principal, session_id)
        # Its commands may have removed the workspace and left its shell state: that is removed.
        exists = path.is_dir()
        if not exists and not state.exists():
            raise NotFound(f"no session {session_id!r}")
        live = self._live_in(principal, session_id)
        contexts = self.contexts(principal, session_id)
        if live or contexts:
            held = [f"{live} execution(s) queued or running"] if live else []
            if contexts:
                held.append(f"{len(contexts)} live code context(s): {', '.join(contexts[:10])}")
            raise _busy(f"session {session_id!r} has {' and '.join(held)}", bool(live), contexts)
        if not exists:
            state.unlink(missing_ok=True)
            return
        # From here on, what starts in the session waits until the workspace is gone.
        with self.removals.removing(path):
            if path in self._writes:
                await self._writes[path][1].wait()
            async with self.locked(path):
                await trio.to_thread.run_sync(_remove, path, state)
            self._usage.pop(path, None)


def _no_contexts(principal: str, session_id: str) -> list[str]:
    return []


def _busy(message: str, running: bool, contexts: list[str]) -> Conflict:
    """The 409 of a session delete refused: what to do first, and `details.contexts` naming the
    live contexts that hold it (where some do)."""
    todo = [*(["cancel the executions"] if running else []), *(["delete the contexts"] if contexts else [])]
    return Conflict(
        f"{message}; {' and '.join(todo)} first", details={"contexts": contexts} if contexts else None
    )


def _remove(workspace: Path, shell_state: Path) -> None:
    """Remove a workspace with everything in it, never following a symlink out of it; then the
    session's `persistShell` state (its next shell starts afresh, as a new terminal)."""
    with beneath.closing(os.open(workspace.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) as parent:
        beneath.remove_tree(parent, workspace.name)
    shell_state.unlink(missing_ok=True)
