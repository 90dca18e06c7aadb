"""The execution status enum and its transition table (`API.md`, "Statuses")."""

from __future__ import annotations

import enum
from typing import Literal, TypeAlias


class ExecutionStatus(enum.StrEnum):
    """Where an execution is in its life. Status is apart from outcome (exit code, signal, error)."""

    #: Accepted; waiting for a concurrency slot.
    QUEUED = "queued"
    #: The process tree has been started.
    RUNNING = "running"
    #: A cancel was recorded; the tree is being killed.
    CANCEL_REQUESTED = "cancel_requested"
    #: Exited with code 0.
    COMPLETED = "completed"
    #: Non-zero exit, an unrequested signal, could not start, or lost.
    FAILED = "failed"
    #: Cancelled on request; the whole tree is dead.
    CANCELLED = "cancelled"
    #: Its deadline (or idle timeout) passed; the whole tree is dead.
    TIMED_OUT = "timed_out"
    #: A batch only: some of its items completed and some did not.
    PARTIAL_FAILED = "partial_failed"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


#: The statuses as a type: what a type checker holds a status given as a string to.
StatusName: TypeAlias = Literal[
    "queued", "running", "cancel_requested", "completed", "failed", "cancelled", "timed_out", "partial_failed"
]

TERMINAL: frozenset[ExecutionStatus] = frozenset(
    {
        ExecutionStatus.COMPLETED,
        ExecutionStatus.FAILED,
        ExecutionStatus.CANCELLED,
        ExecutionStatus.TIMED_OUT,
        ExecutionStatus.PARTIAL_FAILED,
    }
)

S = ExecutionStatus

#: Allowed moves. A terminal status has none: nothing moves it again (fencing).
TRANSITIONS: dict[ExecutionStatus, frozenset[ExecutionStatus]] = {
    S.QUEUED: frozenset({S.RUNNING, S.CANCELLED, S.TIMED_OUT, S.FAILED}),
    # partial_failed: a batch whose items did not all complete.
    S.RUNNING: frozenset({S.CANCEL_REQUESTED, S.COMPLETED, S.FAILED, S.TIMED_OUT, S.PARTIAL_FAILED}),
    # completed/failed (partial_failed: a batch) only when the process had already exited, or
    # every item had already ended, before the kill.
    S.CANCEL_REQUESTED: frozenset({S.CANCELLED, S.COMPLETED, S.FAILED, S.PARTIAL_FAILED}),
    S.COMPLETED: frozenset(),
    S.FAILED: frozenset(),
    S.CANCELLED: frozenset(),
    S.TIMED_OUT: frozenset(),
    S.PARTIAL_FAILED: frozenset(),
}


def can_move(source: ExecutionStatus, target: ExecutionStatus) -> bool:
    """True when `source → target` is an allowed move."""
    return target in TRANSITIONS[source]


def sources_of(target: ExecutionStatus) -> frozenset[ExecutionStatus]:
    """The statuses from which `target` may be reached (the guard of a transition's UPDATE)."""
    return frozenset(s for s, targets in TRANSITIONS.items() if target in targets)
