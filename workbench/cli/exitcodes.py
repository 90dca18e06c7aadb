"""The CLI's exit statuses: an execution's own, and the CLI's, kept apart as `docker run` does.

`run`, `code`, `rerun` and `wait` exit like the execution: its own code, 124 when it timed out,
128+N when a signal killed it, 130 when it was cancelled. The CLI's own outcomes have codes of
their own: 2 for a usage error (nothing was done), 75 when `wait --timeout` gave up (the
execution goes on), 125 when the CLI or the daemon failed or refused, 126 when the execution
could not be started.
"""

from __future__ import annotations

import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OK = 0
USAGE = 2
#: `wait --timeout` gave up (sysexits' EX_TEMPFAIL: try again later); the execution goes on.
WAIT_GAVE_UP = 75
TIMED_OUT = 124
#: The CLI or the daemon failed or refused: unreachable, an API error, an answer not understood.
FAILED = 125
#: The execution could not be started (`spawn_failed`).
CANNOT_RUN = 126
CANCELLED = 130
#: `send` gave up with its input taken in part or not at all (its message says how many bytes).
INPUT_GAVE_UP = 1
#: A batch some of whose items did not complete (`failed`, `partial_failed`), for `batch` and `wait`.
ITEMS_FAILED = 1
#: Whoever read our stdout stopped: as a process killed by SIGPIPE.
BROKEN_PIPE = 141

#: The table of `--help` (docs/cli.md has the same, with more words).
TABLE = """exit status:
  0        it worked (run, code, rerun, wait: the execution completed)
  1-255    run, code, rerun, wait: the execution's own exit code
  1        batch, and wait on a batch: some of its items did not complete; send: it gave up
           with its input taken in part or not at all (the message says how many bytes)
  2        a usage error: nothing was done
  75       wait --timeout gave up; the execution goes on
  124      the execution timed out (its deadline or its idle timeout)
  125      the CLI or the daemon failed or refused (unreachable, an API error)
  126      the execution could not be started
  128+N    the execution was killed by signal N; or run got signal N (SIGTERM, SIGHUP) and
           cancelled it
  130      the execution was cancelled; or Ctrl-C stopped a command that cancels nothing
  141      whoever read stdout stopped (run cancels its execution then)"""


class UsageError(Exception):
    """A command line that cannot be run (exit status 2); the message names the option."""


class BadId(UsageError):
    """Text that is no id, no prefix of one and not `@last`, or a prefix that names several."""


def of_record(record: dict[str, Any]) -> int:
    """The exit status an execution's record (or terminal event) maps to."""
    status = record["status"]
    if status == "completed":
        return OK
    if status == "timed_out":
        return TIMED_OUT
    if status == "cancelled":
        return CANCELLED
    signal_name = record.get("signal")
    if signal_name:
        number = getattr(signal, signal_name, None)
        return 128 + int(number) if isinstance(number, int) else FAILED
    code = record.get("exitCode")
    if code is not None and 0 < code < 256:
        return int(code)
    error = record.get("error") or {}
    if status == "partial_failed" or error.get("code") in ("items_failed", "fail_fast"):
        return ITEMS_FAILED
    return CANNOT_RUN if error.get("code") == "spawn_failed" else FAILED


def failure(exc: Exception) -> int:
    """Say on stderr what failed (a usage error, or an API error with its `code` and `message`), for
    a command that goes on past it; returns the exit status it stands for."""
    if isinstance(exc, UsageError):
        _say(f"workbench: usage: {exc}")
        return USAGE
    _say(f"workbench: {getattr(exc, 'code', 'error')}: {getattr(exc, 'message', exc)}")
    return FAILED


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except OSError:  # stderr is gone (a closed terminal): the exit status says it all
        pass


def report(execution_id: str, end: dict[str, Any]) -> None:
    """One line on stderr for an end that is not the command's own exit."""
    status, error = end["status"], end.get("error")
    if error and status != "completed":
        line = f"workbench: {error['code']}: {execution_id}: {error['message']}"
    elif status == "cancelled":
        reason = end.get("cancelReason") or end.get("message")
        line = f"workbench: cancelled: {execution_id}" + (f" ({reason})" if reason else "")
    elif status == "timed_out":
        line = f"workbench: timed_out: {execution_id}: its deadline passed"
    elif end.get("signal"):
        line = f"workbench: {execution_id}: killed by {end['signal']}"
    else:
        return
    _say(line)
