"""The status enum and its transition table, exhaustively (promise 4: terminal is final)."""

from __future__ import annotations

import itertools

from workbench.wire.status import TERMINAL, TRANSITIONS, ExecutionStatus, can_move, sources_of

S = ExecutionStatus

ALLOWED = {
    (S.QUEUED, S.RUNNING),
    (S.QUEUED, S.CANCELLED),
    (S.QUEUED, S.TIMED_OUT),
    (S.QUEUED, S.FAILED),
    (S.RUNNING, S.CANCEL_REQUESTED),
    (S.RUNNING, S.COMPLETED),
    (S.RUNNING, S.FAILED),
    (S.RUNNING, S.TIMED_OUT),
    (S.CANCEL_REQUESTED, S.CANCELLED),
    (S.CANCEL_REQUESTED, S.COMPLETED),
    (S.CANCEL_REQUESTED, S.FAILED),
    # A batch's: some items completed and some did not (also once they had all ended before a cancel).
    (S.RUNNING, S.PARTIAL_FAILED),
    (S.CANCEL_REQUESTED, S.PARTIAL_FAILED),
}


def test_every_pair_of_statuses_is_allowed_exactly_as_api_md_says() -> None:
    for source, target in itertools.product(S, S):
        assert can_move(source, target) == ((source, target) in ALLOWED), (source, target)


def test_terminal_statuses_are_final() -> None:
    """Promise 4: nothing moves a terminal status again."""
    assert {S.COMPLETED, S.FAILED, S.CANCELLED, S.TIMED_OUT, S.PARTIAL_FAILED} == TERMINAL
    for status in TERMINAL:
        assert TRANSITIONS[status] == frozenset()
        assert status.terminal
    for status in set(S) - TERMINAL:
        assert not status.terminal


def test_sources_of_is_the_inverse_of_the_table() -> None:
    for target in S:
        assert sources_of(target) == {s for s, t in ALLOWED if t == target}


def test_every_status_has_a_row() -> None:
    assert set(TRANSITIONS) == set(S)
