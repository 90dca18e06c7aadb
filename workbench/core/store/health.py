"""Whether the store can take writes: `ok`, `full` (the disk holding it), or `failed` (anything else).

The engine reports what its commits meet (`commit_failed`); the daemon's storage watcher
(`core/storage.py`) measures the disk and probes the store, and is the only one that says `ok`
again, so that a commit that squeezes into space SQLite already holds does not flap the state.
Methods run on the trio thread.
"""

from __future__ import annotations

import enum
import logging
import os
from pathlib import Path

import trio

from workbench.wire.errors import StorageFull, Unavailable

log = logging.getLogger("workbench.core.store")


class State(enum.Enum):
    OK = "ok"
    FULL = "full"
    FAILED = "failed"


class StoreHealth:
    """The store's state and why; wake-ups for whoever waits for it to change."""

    def __init__(self) -> None:
        self.state = State.OK
        self.reason: str | None = None
        self._changed = trio.Event()

    @property
    def ok(self) -> bool:
        return self.state is State.OK

    def commit_failed(self, full: bool, reason: str) -> None:
        """A commit failed: the disk is full (`full`), or the store failed otherwise."""
        if self.state is State.FULL:
            return  # on a full disk any failure is taken for a symptom of it
        self._set(State.FULL if full else State.FAILED, reason)

    def disk_low(self, reason: str) -> None:
        """The disk has less room than new work needs (the watcher measured it)."""
        self._set(State.FULL, reason)

    def recovered(self) -> None:
        """The store commits again and the disk has room (only the watcher knows both)."""
        if self.state is not State.OK:
            log.warning("store: writable again; new work is accepted")
            self._set(State.OK, None)

    def _set(self, state: State, reason: str | None) -> None:
        # Only a change of state counts (and keeps its first reason): writers that wait for a
        # change and fail again must not wake each other up in a loop.
        if state is self.state:
            return
        if state is not State.OK:
            log.error("store: %s; new work is refused", reason)
        self.state, self.reason = state, reason
        self._changed.set()
        self._changed = trio.Event()

    async def wait_changed(self) -> None:
        """Return at the next change of state."""
        await self._changed.wait()

    def error(self) -> Unavailable | None:
        """What new work is refused with while the store is not ok (None when it is)."""
        if self.state is State.FULL:
            return StorageFull(f"{self.reason}; new work is refused until space is freed")
        if self.state is State.FAILED:
            return Unavailable(f"the store cannot commit: {self.reason}")
        return None

    def check_accepting(self) -> None:
        """Raise what new work gets while the store is not ok (StorageFull or Unavailable)."""
        error = self.error()
        if error is not None:
            raise error


def free_bytes(path: Path) -> int:
    """Bytes this process may still write on the filesystem of `path` (root may use the blocks
    kept for it); a filesystem that cannot be measured counts as having room."""
    try:
        st = os.statvfs(path)
    except OSError:
        return 1 << 62
    blocks = st.f_bfree if os.geteuid() == 0 else st.f_bavail
    return blocks * st.f_frsize
