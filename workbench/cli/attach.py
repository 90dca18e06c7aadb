"""`workbench run -i/-t` and `workbench attach`: a terminal (or stdin) joined to an interactive execution.

The output follows the execution's event stream (from its first event: `attach` replays what the
terminal showed, from the journal, then goes live); a thread reads our stdin and sends it as
input. With a terminal of our own and `-t`, ours is in raw mode: every key goes to the program as
typed (Ctrl-C included: the execution's terminal makes it a SIGINT for its foreground job), our
window size is kept (SIGWINCH → a resize), and Ctrl-P Ctrl-Q detaches, leaving it running. The
command exits like the execution once it ends.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import threading
from dataclasses import dataclass

from workbench.cli import exitcodes
from workbench.cli.exitcodes import UsageError
from workbench.cli.follow import RunReactions, Stopped, react_all
from workbench.cli.http import RECONNECT_FOR_S, ApiError, Http
from workbench.cli.ids import resolve
from workbench.cli.inputs import send_piece
from workbench.cli.signals import Interrupted, Signals, died

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: Ctrl-P Ctrl-Q, as docker's: leave the execution running.
DETACH_KEYS = b"\x10\x11"
_CHUNK = 65536
#: The input thread sends this to the main thread when an input failed (see `_Feeder`).
INPUT_FAILED = signal.SIGUSR1
#: The most rows or columns a terminal has on the wire.
MAX_SIZE = 1000


def cmd_attach(http: Http, args: argparse.Namespace) -> int:
    execution_id = resolve(http, args.id)
    record = http.json("GET", f"/v1/executions/{execution_id}")
    if record["status"] in ("completed", "failed", "cancelled", "timed_out", "partial_failed"):
        raise UsageError(
            f"{execution_id} has ended ({record['status']}): see `workbench logs {execution_id}`"
        )
    if not record.get("openStdin"):
        raise UsageError(f"{execution_id} was started without -i or -t: it takes no input")
    return join(http, execution_id, tty=bool(record.get("tty")))


def run_interactive(http: Http, body: dict[str, Any], key: str | None) -> int:
    """Start `body` (a bash start with `openStdin` or `tty`) in the background and join it; as
    plain `run`, it leaves nothing running behind it (`workbench.cli.follow`)."""
    headers = {"Idempotency-Key": key} if key else None
    signals = Signals((signal.SIGINT, signal.SIGTERM, signal.SIGHUP, INPUT_FAILED))
    signals.install()
    record: dict[str, Any] | None = None
    joined: _Joined | None = None
    pending: Interrupted | None = None
    try:
        try:
            # Held back until the follow has begun: a signal before it (even between the start's
            # answer and the input thread's start) then cancels the run as any other does.
            with signals.deferred():
                record = http.json(
                    "POST",
                    "/v1/executions/workbench_bash",
                    {**body, "background": True},
                    headers=headers,
                    ok=(200, 202),
                )
                react = RunReactions(http, record["executionId"], signals)
                joined = _open(http, record["executionId"], bool(body.get("tty")), signals, react)
        except BaseException as exc:
            if record is not None and joined is None:  # started, but not joined: it must not run on
                why = "a signal" if isinstance(exc, Interrupted) else f"{type(exc).__name__}: {exc}"
                RunReactions(http, record["executionId"], signals).stop(
                    f"workbench run could not join it ({why})"
                )
            if not isinstance(exc, Interrupted):
                raise
            if joined is None:  # the start failed, or the set-up did (then cancelled above)
                return died(exc)
            pending = exc
        return _run(http, joined, pending)
    finally:
        signals.restore()


def join(http: Http, execution_id: str, *, tty: bool) -> int:
    """`attach`: follow the execution's output to its end while our stdin goes to it; its exit
    status. Ctrl-C, SIGTERM and SIGHUP end the command and leave the execution running."""
    # It ends on SIGTERM and SIGHUP as by their default action, but with our terminal given back
    # first (not left raw): one that comes while the terminal is made raw is held until then.
    own = Signals((INPUT_FAILED, signal.SIGTERM, signal.SIGHUP))
    own.install()
    joined: _Joined | None = None
    pending: Interrupted | None = None
    try:
        try:
            with own.deferred():
                joined = _open(http, execution_id, tty, own, None)
        except Interrupted as sig:
            if joined is None:
                return died(sig)
            pending = sig
        return _run(http, joined, pending)
    finally:
        own.restore()


@dataclass
class _Joined:
    """A joined execution: its input thread started, our terminal raw (`saved`: as it was)."""

    execution_id: str
    feeder: _Feeder
    signals: Signals
    react: RunReactions | None
    saved: Any


def _open(http: Http, execution_id: str, tty: bool, signals: Signals, react: RunReactions | None) -> _Joined:
    """Make our terminal raw (with `tty`, on one) and start the input thread; with signals held
    back (the caller's `deferred`), so that none ends us with the terminal raw."""
    raw = tty and os.isatty(0)
    saved = None
    wake_r, wake_w = os.pipe()
    try:
        if raw:
            import termios

            saved = termios.tcgetattr(0)
            _raw(True, saved)
            signal.signal(signal.SIGWINCH, lambda _s, _f: os.write(wake_w, b"w"))
            os.write(wake_w, b"w")  # send our size once at the start
        feeder = _Feeder(Http(http.target), execution_id, raw, wake_r, saved)
        threading.Thread(target=feeder.run, name="input", daemon=True).start()
    except BaseException:
        # Nothing joined: our terminal as it was, no handler left writing to a closed pipe.
        _restore(saved)
        if raw:
            signal.signal(signal.SIGWINCH, signal.SIG_DFL)
        os.close(wake_r)
        os.close(wake_w)
        raise
    return _Joined(execution_id, feeder, signals, react, saved)


def _run(http: Http, joined: _Joined, pending: Interrupted | None) -> int:
    """Follow a joined execution to its end (`pending`: a signal that came before); with `react`
    (`run`), a signal does what it does to plain `run`, else it ends the command."""
    execution_id, saved = joined.execution_id, joined.saved
    try:
        return _follow(http, execution_id, joined.feeder, joined.signals, joined.react, pending)
    except Stopped as stop:
        return stop.status
    except Interrupted as sig:  # `attach` alone (`run` reacts in `_follow`): it runs on
        if sig.signum == signal.SIGINT:
            raise
        _restore(saved)
        name = signal.Signals(sig.signum).name
        _say(f"workbench: {name}: left {execution_id} running (`workbench attach {execution_id}`)")
        return died(sig)
    finally:
        _restore(saved)


def _follow(
    http: Http,
    execution_id: str,
    feeder: _Feeder,
    signals: Signals,
    react: RunReactions | None,
    pending: Interrupted | None,
) -> int:
    """`_turns`, with a signal that lands between two of its turns (outside its `try`: a second
    Ctrl-C right after the first one's reaction ended the command with a traceback) taken back
    into them, where it does what it does anywhere else."""
    last = [0]
    while True:
        try:
            return _turns(http, execution_id, feeder, signals, react, pending, last)
        except Interrupted as sig:
            if react is None:
                raise  # `attach`: any signal ends the command (`_run`), wherever it lands
            pending = sig


def _turns(
    http: Http,
    execution_id: str,
    feeder: _Feeder,
    signals: Signals,
    react: RunReactions | None,
    pending: Interrupted | None,
    last: list[int],
) -> int:
    """Follow the stream to the end, reacting to signals (`last[0]`: the sequence shown so far)."""
    while True:
        try:
            if pending is not None:
                sig, pending = pending, None
                raise sig
            for kind, event in http.stream(execution_id, last[0]):
                with signals.deferred():
                    if kind == "event":
                        last[0] = event["sequence"]
                        if event["eventType"] == "status" and event["status"] != "queued":
                            feeder.running.set()  # input before it runs would be refused
                    if kind in ("event", "live") and event.get("eventType") == "output":
                        fd = 2 if event.get("stream") == "stderr" else 1  # one stream on a terminal
                        _write(event.get("outputDelta"), react, fd)
            break
        except Interrupted as sig:
            _restore(feeder.saved)  # our lines readable, and the terminal ours again if we end
            if sig.signum == INPUT_FAILED:
                if react is not None and react.stopping is not None:
                    continue  # already cancelling: the stream says how it ends
                return _input_failed(execution_id, feeder.failure, react)
            if react is None:
                raise
            react_all(react, sig, None)
            if feeder.failure and react.stopping is None:  # its signal came during the reaction
                return _input_failed(execution_id, feeder.failure, react)
            if react.stopping is None:
                _raw(feeder.raw, feeder.saved)
    record = http.json("GET", f"/v1/executions/{execution_id}")
    if record["status"] != "completed":
        exitcodes.report(execution_id, record)
    if react is not None and react.stopping is not None:
        return react.stopping
    return exitcodes.of_record(record)


def _write(text: str | None, react: RunReactions | None, fd: int) -> None:
    if not text:
        return
    try:
        os.write(fd, text.encode("utf-8"))
    except OSError:
        if react is None or react.stopping is None:
            raise
        raise Stopped(react.stopping) from None  # SIGHUP: the terminal is gone


def _input_failed(execution_id: str, failure: str, react: RunReactions | None) -> int:
    """Our keys can no longer reach it: say so, and cancel it (`run`) or leave it (`attach`)."""
    if react is not None:
        _say(f"workbench: {failure}; cancelling it")
        react.stop("workbench run could not send its input")
    else:
        _say(f"workbench: {failure}; it runs on (`workbench attach {execution_id}`)")
    return exitcodes.FAILED


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except OSError:  # stderr is gone (a closed terminal)
        pass


def _raw(on: bool, saved: Any) -> None:
    if on and saved is not None:
        import termios
        import tty as terminal

        try:
            terminal.setraw(0)
        except (OSError, termios.error):  # the terminal is gone (a hang-up)
            pass


def _restore(saved: Any) -> None:
    if saved is not None:
        import termios

        try:
            termios.tcsetattr(0, termios.TCSADRAIN, saved)
        except (OSError, termios.error):  # the terminal is gone (a hang-up)
            pass


class _Feeder:
    """Our stdin to the execution's input, and our window size to its terminal.

    An input the daemon refuses ends the command: `failure` says what, and INPUT_FAILED wakes the
    main thread. But not for an execution that has ended (the stream says how), nor for one whose
    stdin nothing reads any more (its tree closed it, or ended: `details.stdin` `unread`): as a
    shell pipe's writer, the input that nothing reads is dropped, and the run goes on to its end.
    """

    def __init__(self, http: Http, execution_id: str, raw: bool, wake: int, saved: Any) -> None:
        self.http, self.execution_id, self.raw, self.wake, self.saved = http, execution_id, raw, wake, saved
        self.path = f"/v1/executions/{execution_id}"
        self.held = b""  # a Ctrl-P that may begin the detach keys
        self.running = threading.Event()
        self.failure = ""
        self.main = threading.main_thread().ident

    def run(self) -> None:
        self.running.wait()
        try:
            while self._step():
                pass
        except ApiError as exc:
            unread = isinstance(exc.details, dict) and exc.details.get("stdin") == "unread"
            if unread or (exc.code in ("conflict", "not_found") and self._ended()):
                return  # it ended, or nothing reads its stdin any more: the stream says how it ends
            self.failure = f"{exc.code}: cannot send input to {self.execution_id}: {exc.message}"
            assert self.main is not None
            signal.pthread_kill(self.main, INPUT_FAILED)

    def _ended(self) -> bool:
        """Whether it ended or is ending (then a refused input is no news)."""
        try:
            record = self.http.json("GET", self.path)
        except ApiError:
            return False
        return record["status"] not in ("queued", "running")  # ended, or being stopped

    def _resize(self) -> None:
        try:
            size = os.get_terminal_size(0)
        except OSError:
            return
        if size.lines and size.columns:  # a terminal that does not know its size reads 0x0
            rows, cols = min(size.lines, MAX_SIZE), min(size.columns, MAX_SIZE)
            self.http.request("POST", self.path + "/resize", {"rows": rows, "cols": cols}, ok=(204,))

    def _step(self) -> bool:
        ready, _, _ = select.select([0, self.wake], [], [])
        if self.wake in ready:
            os.read(self.wake, 4096)
            self._resize()
        if 0 not in ready:
            return True
        try:
            data = os.read(0, _CHUNK)
        except OSError:  # our terminal is gone (a hang-up): SIGHUP says what happens
            return False
        if not data:
            self._send(self.held, eof=True)
            return False
        data, self.held = self.held + data, b""
        if self.raw and DETACH_KEYS in data:
            self._send(data[: data.index(DETACH_KEYS)])
            self._detach()
        if self.raw and data.endswith(DETACH_KEYS[:1]):
            data, self.held = data[:-1], DETACH_KEYS[:1]
        self._send(data)
        return True

    def _send(self, data: bytes, *, eof: bool = False) -> None:
        # `input_backlog` (a slow reader of a large piped stdin) is sent again once it reads, for
        # as long as it takes; `unavailable` (the daemon restarts) as long as the output stream
        # waits for it.
        if data or eof:
            send_piece(self.http, self.path + "/input", data, eof=eof, reconnect_for=RECONNECT_FOR_S)

    def _detach(self) -> None:
        _restore(self.saved)
        eid = self.execution_id
        sys.stderr.write(f"\r\nworkbench: detached from {eid}; it runs on (`workbench attach {eid}`)\n")
        sys.stderr.flush()
        os._exit(exitcodes.OK)
