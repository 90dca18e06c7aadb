"""Signals that the CLI acts on instead of dying: Ctrl-C (SIGINT), SIGTERM and SIGHUP.

While `run` follows an execution, each of them is turned into `Interrupted` at a safe point (never
in the middle of writing output and its accounting), so that it can cancel the execution rather
than leave it running. Commands that cancel nothing die of SIGINT as programs do (`die_of`), so
that a shell or a parent process sees the signal and not an ordinary exit.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


#: What a signal does once its `Signals` are restored, where not its default action: Ctrl-C is
#: Python's KeyboardInterrupt, and SIGUSR1 (`run -i`'s input thread waking the main one, see
#: `workbench.cli.attach`) is ignored, so that a late one cannot kill the process.
_AFTER: dict[int, Any] = {signal.SIGINT: signal.default_int_handler, signal.SIGUSR1: signal.SIG_IGN}


class Interrupted(BaseException):
    """A signal arrived (not an Exception: nothing that handles errors may swallow it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class Signals:
    """The handlers of `signums`: each signal raises `Interrupted`, or waits while `deferred()`."""

    def __init__(self, signums: tuple[int, ...] = (signal.SIGINT,)) -> None:
        self.signums = signums
        self._deferring = 0
        self._pending: int | None = None

    def install(self) -> None:
        for signum in self.signums:
            signal.signal(signum, self._handler)

    def alarm(self, seconds: float) -> None:
        """Raise `Interrupted(SIGALRM)` in `seconds` (a bound on a wait), until `restore()`."""
        if signal.SIGALRM not in self.signums:
            self.signums = (*self.signums, signal.SIGALRM)
            signal.signal(signal.SIGALRM, self._handler)
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 0.001))

    def restore(self) -> None:
        if signal.SIGALRM in self.signums:
            signal.setitimer(signal.ITIMER_REAL, 0)
        for signum in self.signums:
            signal.signal(signum, _AFTER.get(signum, signal.SIG_DFL))

    def _handler(self, signum: int, frame: Any) -> None:
        if self._deferring:
            if self._pending is None:
                self._pending = signum
            return
        raise Interrupted(signum)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Hold signals back for the block; one that came meanwhile is raised at its end."""
        self._deferring += 1
        try:
            yield
        finally:
            self._deferring -= 1
            if not self._deferring and self._pending is not None:
                signum, self._pending = self._pending, None
                raise Interrupted(signum)


NO_SIGNALS = Signals(())


def died(sig: Interrupted) -> int:
    """The end of a command stopped by `sig` before there was anything to cancel."""
    if sig.signum == signal.SIGINT:
        raise KeyboardInterrupt
    return 128 + sig.signum


def die_of(signum: int) -> None:
    """End this process by `signum` itself, with its default action (the shell sees 128+N)."""
    import sys

    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    raise SystemExit(128 + signum)  # only if the signal is blocked
