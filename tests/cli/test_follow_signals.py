"""What `run` does when Ctrl-C comes again while it is still reacting to the one before.

Pure logic: `follow` with `RunReactions` over a stand-in for the CLI's HTTP transport, whose
calls let a signal arrive exactly where a real one can (the test in test_signals.py types them on
a real terminal, where this timing is a matter of luck).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest

from workbench.cli.follow import RunReactions, Stopped, follow
from workbench.cli.signals import Signals

ID = "ex_01M8ZZZZZZZZZZZZZZZZZZZZZZ"


def _event(sequence: int, status: str) -> tuple[str, dict[str, Any]]:
    return "event", {"sequence": sequence, "eventType": "status", "status": status, "message": None}


class Transport:
    """Records the requests; a real SIGINT comes during the first `interrupt_on` request."""

    def __init__(self, interrupt_on: str) -> None:
        self.interrupt_on = interrupt_on
        self.requests: list[str] = []

    def stream(self, execution_id: str, after: int) -> Iterator[tuple[str, Any]]:
        if "cancel" in self.requests:
            yield _event(after + 1, "cancelled")
            return
        if after == 0:
            yield _event(1, "running")
        signal.raise_signal(signal.SIGINT)  # a Ctrl-C between two events
        raise AssertionError("the Ctrl-C did not interrupt the stream")

    def request(self, method: str, path: str, body: Any = None, **kw: Any) -> None:
        what = path.rsplit("/", 1)[-1]
        self.requests.append(what)
        if what == self.interrupt_on and self.requests.count(what) == 1:
            signal.raise_signal(signal.SIGINT)  # the next Ctrl-C, while this request is under way

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        raise AssertionError(f"unexpected {method} {path}")


def _follow(http: Any, signums: tuple[int, ...] = (signal.SIGINT,)) -> dict[str, Any]:
    signals = Signals(signums)
    signals.install()
    try:
        react = RunReactions(http, ID, signals)
        record = {"executionId": ID, "output": {"truncated": False}}
        return follow(http, record, signals=signals, react=react, label="run", streams=())
    finally:
        signals.restore()


def test_a_ctrl_c_while_the_first_is_sent_on_cancels() -> None:
    """The first Ctrl-C is being sent to the program as SIGINT when the second comes: it cancels."""
    http = Transport("signal")
    assert _follow(http)["status"] == "cancelled"
    assert http.requests == ["signal", "cancel"]


def test_a_ctrl_c_while_the_cancel_is_asked_for_stops_waiting_after_it() -> None:
    """The third Ctrl-C comes while the second's cancel is being asked for: the cancel is sent
    whole, then the CLI stops waiting (KeyboardInterrupt: `run` dies of SIGINT)."""
    http = Transport("cancel")
    with pytest.raises(KeyboardInterrupt):
        _follow(http)
    assert http.requests == ["signal", "cancel"]


class Ending(Transport):
    """As Transport, with the first signal a SIGTERM; the stream opened again after it ends in
    `cancelled`. The SIGINT comes during the cancel request, or (`stream`) as the stream opens."""

    def stream(self, execution_id: str, after: int) -> Iterator[tuple[str, Any]]:
        if after > 0:
            if self.interrupt_on == "stream":
                signal.raise_signal(signal.SIGINT)
            yield _event(after + 1, "cancelled")
            return
        yield _event(1, "running")
        signal.raise_signal(signal.SIGTERM)  # a tool's timeout ends the CLI
        raise AssertionError("the SIGTERM did not interrupt the stream")


def test_a_ctrl_c_while_sigterm_cancels_changes_nothing() -> None:
    """SIGTERM cancels and follows the execution to its end (the caller exits 143); a Ctrl-C that
    comes during its cancel request does not turn that into something else."""
    http: Any = Ending("cancel")
    signals = Signals((signal.SIGINT, signal.SIGTERM))
    signals.install()
    try:
        react = RunReactions(http, ID, signals)
        record = {"executionId": ID, "output": {"truncated": False}}
        end = follow(http, record, signals=signals, react=react, label="run", streams=())
    finally:
        signals.restore()
    assert end["status"] == "cancelled" and react.stopping == 128 + signal.SIGTERM
    assert http.requests == ["cancel"]


def test_a_ctrl_c_while_sigterm_follows_to_the_end_stops_with_143() -> None:
    """A signal that comes while SIGTERM follows the execution to its end stops following: the
    cancel is asked for, and the exit status is still SIGTERM's."""
    http = Ending("stream")
    with pytest.raises(Stopped) as stopped:
        _follow(http, (signal.SIGINT, signal.SIGTERM))
    assert stopped.value.status == 128 + signal.SIGTERM
    assert http.requests == ["cancel"]


def test_the_input_threads_wake_up_is_no_stop_and_is_ignored_once_restored() -> None:
    """SIGUSR1 (`run -i`'s input thread telling of a refused input) is no SIGTERM to `run`'s
    reactions, and once the handlers are restored a late one is ignored, not the process's death."""
    from workbench.cli.signals import Interrupted

    transport = Transport("never")
    reactions = RunReactions(transport, ID, Signals())  # type: ignore[arg-type]
    reactions(Interrupted(signal.SIGUSR1), None)
    assert reactions.stopping is None and transport.requests == []
    signals = Signals((signal.SIGTERM, signal.SIGUSR1))
    signals.install()
    signals.restore()
    try:
        assert signal.getsignal(signal.SIGUSR1) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        signal.raise_signal(signal.SIGUSR1)  # ignored: this test goes on
    finally:
        signal.signal(signal.SIGUSR1, signal.SIG_DFL)
