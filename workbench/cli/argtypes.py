"""What the grammar of the command line is made of: the parser class, and the types of values
that make a bad one a usage error naming its option."""

from __future__ import annotations

import argparse

from workbench.cli import exitcodes

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs the CLI's start
    from collections.abc import Callable
    from typing import Any, NoReturn

    Adder = Callable[..., Any]


def _untranslated(message: str) -> str:
    return message


def _untranslated_plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


# argparse asks gettext for a translation of each message it makes, and gettext looks for catalog
# files each time (a dozen file lookups, and `locale`): a third of building the parser. The CLI
# speaks English only.
setattr(argparse, "_", _untranslated)  # noqa: B010 - not an attribute typeshed knows of
setattr(argparse, "ngettext", _untranslated_plural)  # noqa: B010
STATUSES = (
    "queued",
    "running",
    "cancel_requested",
    "completed",
    "failed",
    "cancelled",
    "timed_out",
    "partial_failed",
)
ENDED = ("completed", "failed", "cancelled", "timed_out", "partial_failed")
KINDS = {"bash": "workbench_bash", "code": "workbench_code", "batch": "batch"}
#: The grace `cancel` (and a second Ctrl-C on `run`) gives a tree between SIGTERM and SIGKILL.
DEFAULT_GRACE = "5s"
CWD_HELP = (
    "working directory (default: here when the daemon is local, i.e. a loopback or unix:// URL, and "
    "the image is host; else the session's workspace)"
)


class Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit status 2.

    argparse makes a help formatter for every argument it adds, and a formatter asks `shutil` for
    the terminal's width: building the parser would import `shutil` (and the compression modules
    it loads) on every start. The width matters only when help is printed.
    """

    _printing = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if Parser._printing:
            return super()._get_formatter()
        return argparse.HelpFormatter(prog=self.prog, width=80)  # only checks metavars here

    def format_help(self) -> str:
        Parser._printing = True
        return super().format_help()

    def format_usage(self) -> str:
        Parser._printing = True
        return super().format_usage()

    def error(self, message: str) -> NoReturn:
        self.exit(exitcodes.USAGE, f"workbench: usage: {message} (see {self.prog} --help)\n")


class Version(argparse.Action):
    """`--version`: the version is looked up only when asked for."""

    def __init__(self, option_strings: list[str], dest: str, **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> None:
        from workbench import __version__

        print(f"workbench {__version__}")
        parser.exit(0)


def _type(name: str, check: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = name
    return parse


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"expected a whole number of at least 1, not {text!r}")
    return int(text)


def _count(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"expected a whole number, not {text!r}")
    return int(text)


def _duration(text: str) -> int:
    from workbench.client.config import parse_duration_ms

    return parse_duration_ms(text)


#: The longest deadline or idle timeout an execution takes (the API's limit on `timeoutMs`).
MAX_DEADLINE_MS = 24 * 3_600_000


def _deadline(text: str) -> int:
    ms = _duration(text)
    if ms < 1:
        raise ValueError(f"{text!r} is no time at all: a deadline is at least 1ms")
    if ms > MAX_DEADLINE_MS:
        raise ValueError(f"{text!r} is longer than 24 hours, the longest deadline")
    return ms


def _variable(text: str) -> str:
    """`K=V` or `K`, with K a variable's name: a letter or `_`, then letters, digits or `_`."""
    name = text.partition("=")[0]
    if not name:
        raise ValueError(f"{text!r} has no name before '=' (expected K=V)")
    first_ok = name[0] == "_" or (name[0].isascii() and name[0].isalpha())
    if not first_ok or not name.isascii() or not name.replace("_", "a").isalnum():
        raise ValueError(f"{name!r} is not a variable's name: a letter or '_', then letters, digits or '_'")
    return text


def _statuses(text: str) -> list[str]:
    values = [v.strip() for v in text.split(",")]
    for value in values:
        if value not in STATUSES:
            raise ValueError(f"{value!r} is not a status: expected {', '.join(STATUSES)} (or several, a,b)")
    return values


def _kind(text: str) -> str:
    if text in KINDS.values():
        return text
    if text not in KINDS:
        raise ValueError(
            f"{text!r} is not a kind: expected bash, code or batch (workbench_bash, workbench_code, batch)"
        )
    return KINDS[text]


def _session(text: str) -> str:
    ok = 1 <= len(text) <= 64 and text not in (".", "..")
    if (
        not ok
        or not text.replace("-", "a").replace("_", "a").replace(".", "a").isalnum()
        or not text.isascii()
    ):
        raise ValueError(f"{text!r} is not a session id: 1 to 64 of letters, digits, '.', '_', '-'")
    return text


def _context(text: str) -> str:
    if text in ("", ".", ".."):  # a URL resolves `.` and `..` away: no context has either
        raise ValueError(f"{text!r} is not a context id: expected cx_ and 26 of 0-9 and A-Z")
    return text


POSITIVE = _type("positive", _positive)
COUNT = _type("count", _count)
DURATION = _type("duration", _duration)
DEADLINE = _type("deadline", _deadline)
VARIABLE = _type("variable", _variable)
STATUS_LIST = _type("statuses", _statuses)
KIND = _type("kind", _kind)
SESSION = _type("session", _session)
CONTEXT = _type("context", _context)


def parse_when(text: str, option: str) -> int:
    """A moment, in milliseconds since the epoch: `10m` (that long ago), or a date or a time
    (`2026-11-29`, `2026-11-29T12:00:00Z`; without a zone it is UTC)."""
    import time
    from datetime import UTC, datetime

    from workbench.client.config import TOO_LONG, DurationTooLong, parse_duration_ms

    try:
        return int(time.time() * 1000) - parse_duration_ms(text)
    except DurationTooLong:
        raise exitcodes.UsageError(f"{option} {text!r}: {TOO_LONG}") from None
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise exitcodes.UsageError(
            f"{option} {text!r}: expected a duration (10m, 7d: that long ago) or a time "
            "(2026-11-29, 2026-11-29T12:00:00Z)"
        ) from None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when
    try:
        when.astimezone(UTC)  # its offset may take it before the year 1
    except OverflowError:
        raise exitcodes.UsageError(f"{option} {text!r}: before the year 1") from None
    return int(when.timestamp() * 1000)


def stamp(ms: int) -> str:
    """Milliseconds since the epoch as the API writes times: `2026-11-29T12:00:00.123Z`."""
    import time

    seconds, rest = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest:03d}Z"
