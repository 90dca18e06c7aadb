"""Following an execution to its end: its output live, and what Ctrl-C, SIGTERM, SIGHUP or a closed
stdout do to an execution that `run` started.

`run` leaves nothing running behind it: a first Ctrl-C is sent on to the program as SIGINT (a
program on a terminal gets it), a second cancels the execution, a third stops waiting (the cancel
is recorded: the daemon finishes it). SIGTERM or SIGHUP (a tool's timeout, a closed terminal)
cancel it and follow it a little longer (the grace and `CANCEL_MARGIN_S`), writing what it prints
meanwhile (a `trap ... TERM`), then exit 128+N; a closed stdout (`workbench run -- yes | head -1`)
cancels it, waits a little for its end, and exits 141.
"""

from __future__ import annotations

import signal
import sys
import time

from workbench.cli import exitcodes
from workbench.cli.argtypes import DEFAULT_GRACE
from workbench.cli.http import ApiError, Http
from workbench.cli.output import STREAMS, Output, Progress
from workbench.cli.signals import Interrupted, Signals

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    React = Callable[[Interrupted, Progress | None], None]

#: `waitTimeoutMs` is at most this on the wire; longer waits are several long-polls.
MAX_WAIT_MS = 600_000
TERMINAL = frozenset({"completed", "failed", "cancelled", "timed_out", "partial_failed"})
#: How long `run` waits for a cancel it asked for to end the tree, beyond the grace.
CANCEL_MARGIN_S = 5.0


class Stopped(Exception):
    """Following stops before the end; the command exits with `status`."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def grace_ms() -> int:
    from workbench.client.config import parse_duration_ms

    return parse_duration_ms(DEFAULT_GRACE)


def follow(
    http: Http,
    record: dict[str, Any],
    *,
    signals: Signals,
    react: React,
    label: str,
    streams: tuple[str, ...] = STREAMS,
) -> dict[str, Any]:
    """Write the execution's output live until it ends; returns the terminal event.

    A signal (one of `signals`, raised between writes) goes to `react`, which may raise to stop
    following; a closed stdout raises BrokenPipeError.
    """
    execution_id = record["executionId"]
    progress = Progress(label)
    output = Output(
        streams,
        trust_display=not record["output"]["truncated"],
        progress=progress if progress.enabled else None,
        signals=signals,
    )
    last, reason = 0, None
    end: dict[str, Any] | None = None
    try:
        while end is None:
            try:
                for kind, data in http.stream(execution_id, last):
                    with signals.deferred():
                        if kind == "event":
                            output.event(data)
                            last = data["sequence"]
                            if data["eventType"] == "status" and data["status"] == "cancel_requested":
                                reason = data["message"]
                            if data["eventType"] == "status" and data["status"] in TERMINAL:
                                end = {**data, "cancelReason": reason}
                        elif kind == "live":
                            output.live(data)
                        elif kind == "gap":
                            output.stop()
                        elif kind == "reconnected":
                            output.reconnected()
            except Interrupted as sig:
                # The stream is opened again: display output in between is lost.
                react_all(react, sig, progress, then=output.reconnected)
    finally:
        progress.stop()
    for warning in output.finish(http, execution_id):
        _say(None, f"workbench: warning: {warning}")
    assert end is not None
    return end


def react_all(
    react: React, sig: Interrupted, progress: Progress | None, then: Callable[[], None] | None = None
) -> None:
    """`react` to `sig`, then `then()`; a signal that comes meanwhile is reacted to next (a Ctrl-C
    typed while the one before is being sent on is the second Ctrl-C, not an error)."""
    pending: Interrupted | None = sig
    while pending is not None:
        try:
            react(pending, progress)
            pending = None
            if then is not None:
                then()
        except Interrupted as again:
            pending = again


def _say(progress: Progress | None, line: str) -> None:
    if progress is not None:
        progress.say(line)
        return
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:  # stderr is gone (a closed terminal)
        pass


class RunReactions:
    """What signals do to an execution that `run` follows (see the module's docstring)."""

    def __init__(self, http: Http, execution_id: str, signals: Signals) -> None:
        self.http, self.id, self.signals = http, execution_id, signals
        self.interrupts = 0
        #: The exit status once SIGTERM or SIGHUP cancelled it: following goes on until its end,
        #: for a bounded time.
        self.stopping: int | None = None

    def __call__(self, sig: Interrupted, progress: Progress | None) -> None:
        if sig.signum == signal.SIGUSR1:
            return  # `run -i`'s input thread telling of a refused input: `attach` reads its news
        if self.stopping is not None:
            raise Stopped(self.stopping)  # its time to end passed (SIGALRM), or another signal
        if sig.signum != signal.SIGINT:
            _say(progress, f"workbench: {sig.name}: cancelling {self.id}")
            self.stopping = 128 + sig.signum
            try:
                self.cancel(f"workbench run got {sig.name}")
            except Interrupted:  # it came during the cancel request, which was sent whole
                pass
            self.signals.alarm(grace_ms() / 1000 + CANCEL_MARGIN_S)
            return
        self.interrupts += 1
        if self.interrupts == 1 and self._forward():
            _say(progress, f"workbench: sent SIGINT to {self.id} (Ctrl-C again to cancel it)")
            return
        if self.interrupts <= 2:
            self.interrupts = 2
            self.cancel("interrupted (Ctrl-C)")
            _say(progress, f"workbench: cancelling {self.id} (Ctrl-C again to stop waiting)")
            return
        raise KeyboardInterrupt

    def _forward(self) -> bool:
        """Send SIGINT to the tree; False when it cannot take one (queued, ending, an older daemon)."""
        try:
            with self.signals.deferred():  # sent whole: a Ctrl-C meanwhile comes after it
                self.http.request("POST", f"/v1/executions/{self.id}/signal", {"signal": "INT"}, ok=(202,))
        except ApiError as exc:
            if exc.code in ("conflict", "not_found"):
                return False
            raise
        return True

    def cancel(self, reason: str) -> None:
        """Ask for the cancel (SIGTERM, then SIGKILL after the grace); the daemon carries it out."""
        try:
            with self.signals.deferred():  # asked for whole: a signal meanwhile comes after it
                self.http.request(
                    "POST",
                    f"/v1/executions/{self.id}/cancel",
                    {"reason": reason, "graceMs": grace_ms()},
                    ok=(200, 202),
                )
        except ApiError as exc:
            _say(None, f"workbench: {exc.code}: could not cancel {self.id}: {exc.message}")

    def closed_stdout(self) -> int:
        """Whoever read our stdout went away: cancel, and exit as a process killed by SIGPIPE."""
        self.stop("its output's reader went away (stdout closed)")
        return exitcodes.BROKEN_PIPE

    def stop(self, reason: str) -> None:
        """Cancel and wait a little for the end: `run` is stopping, whatever signal comes meanwhile."""
        try:
            self.cancel(reason)
        except Interrupted:  # it came during the cancel request, which was sent whole
            pass
        self.wait_end()

    def wait_end(self) -> None:
        """Wait, quietly and for a bounded time, until the cancelled tree is dead."""
        deadline = time.monotonic() + grace_ms() / 1000 + CANCEL_MARGIN_S
        try:
            while (left := deadline - time.monotonic()) > 0:
                wait_ms = min(MAX_WAIT_MS, round(left * 1000))
                result = self.http.json(
                    "POST", f"/v1/executions/{self.id}/wait", {"waitTimeoutMs": wait_ms}, wait_s=left
                )
                if result["execution"]["status"] in TERMINAL:
                    return
        except (Interrupted, ApiError):  # another signal, or the daemon is gone: stop waiting
            return
