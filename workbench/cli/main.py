"""The `workbench` command line: `serve` runs the daemon; every other command talks to one.

Client commands find the daemon through `--url` / `$WORKBENCH_URL` (default
`http://127.0.0.1:8787`, or `unix:///path.sock`) and the token through `--token` /
`$WORKBENCH_TOKEN`, else `<data dir>/token`. Errors are one line on stderr with the API's error
code (`workbench: not_found: no execution ex_...`); the exit status is 2 for usage errors and
1 for others, except where a command says otherwise (`run` and `wait` exit like the execution).

This module and what it imports for client commands use the standard library only: the daemon
side (trio, quart, hypercorn, sqlite) and the Python client (httpx, pydantic) are never loaded.
"""

from __future__ import annotations

import argparse
import os
import sys

from workbench.cli import mcp

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs the CLI's start
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, NoReturn

_RUN_COMMANDS = frozenset({"run", "code", "rerun", "wait", "logs"})

EXIT_STATUSES = """exit status:
  the command's own exit code; 124 when it timed out; 128+N when killed by signal N;
  130 when cancelled; 1 when it could not run (or another error); 2 for a usage error"""


def _serve(args: argparse.Namespace) -> int:
    from api.serve import main as serve  # the one place the CLI reaches into the daemon

    return serve(
        bind=args.bind,
        data_dir=args.data_dir,
        unix_socket=args.unix_socket,
        allow_remote=args.allow_remote or None,
    )


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


class _Parser(argparse.ArgumentParser):
    """Usage errors as one line on stderr, exit status 2.

    argparse makes a help formatter for every argument it adds, and a formatter asks `shutil` for
    the terminal's width: building the parser would import `shutil` (and the compression modules
    it loads) on every start. The width matters only when help is printed.
    """

    _printing = False

    def _get_formatter(self) -> argparse.HelpFormatter:
        if _Parser._printing:
            return super()._get_formatter()
        return argparse.HelpFormatter(prog=self.prog, width=80)  # only checks metavars here

    def format_help(self) -> str:
        _Parser._printing = True
        return super().format_help()

    def format_usage(self) -> str:
        _Parser._printing = True
        return super().format_usage()

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"workbench: usage: {message} (see {self.prog} --help)\n")


def _client(name: str) -> Callable[[argparse.Namespace], int]:
    """A client command, imported only when it runs."""

    def run(args: argparse.Namespace) -> int:
        import importlib

        # `run` and its kin live apart from the listing commands, so `run` loads no table code.
        module = importlib.import_module(
            "workbench.cli.run" if name in _RUN_COMMANDS else "workbench.cli.commands"
        )
        func: Callable[[Any, argparse.Namespace], int] = getattr(module, f"cmd_{name}")
        return _with_daemon(func, args)

    return run


def _with_daemon(func: Callable[[Any, argparse.Namespace], int], args: argparse.Namespace) -> int:
    from workbench.cli.http import ApiError, Http
    from workbench.cli.run import UsageError
    from workbench.client.config import resolve

    try:
        target = resolve(getattr(args, "url", None), getattr(args, "token", None))
    except ValueError as exc:
        print(f"workbench: usage: {exc}", file=sys.stderr)
        return 2
    http = Http(target)
    try:
        return func(http, args)
    except UsageError as exc:
        print(f"workbench: usage: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:
        print(f"workbench: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    finally:
        http.close()


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help="the daemon (default $WORKBENCH_URL or http://127.0.0.1:8787)",
    )
    common.add_argument(
        "--token",
        default=argparse.SUPPRESS,
        help="bearer token (default $WORKBENCH_TOKEN or <data dir>/token)",
    )
    as_json = _Parser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON alone on stdout")

    parser = _Parser(
        prog="workbench",
        description="Durable, contained executions of bash commands and code.",
        parents=[common],
        epilog="`workbench COMMAND --help` tells more about each command.",
    )
    # An explicit prog spares argparse a help formatter (and its imports) on every start.
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=_Parser, prog="workbench"
    )

    def command(name: str, summary: str, description: str, *parents: _Parser, **kw: Any) -> Any:
        p = sub.add_parser(
            name,
            help=summary,
            description=description,
            parents=[common, *parents],
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )
        p.set_defaults(func=_client(name))
        return p

    _add_serve(sub)
    _add_starting(command)
    _add_reading(command, as_json)
    _add_acting(command, as_json)
    mcp.add_command(sub, common)
    return parser


def _add_serve(sub: Any) -> None:
    serve = sub.add_parser("serve", help="run the daemon", description="Run the Workbench daemon.")
    serve.add_argument("--bind", help="HOST:PORT to listen on (default 127.0.0.1:8787, or $WORKBENCH_BIND)")
    serve.add_argument("--unix-socket", type=_path, help="also listen on this Unix socket (mode 0600)")
    serve.add_argument(
        "--data-dir", type=_path, help="where the store and files live (default ~/.local/share/workbench)"
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback address (anyone who reaches it with a token runs commands)",
    )
    serve.set_defaults(func=_serve)


def _add_starting(command: Callable[..., Any]) -> None:
    """`run` and `code`: the commands that start an execution."""
    starting = _Parser(add_help=False)
    group = starting.add_argument_group("execution options")
    group.add_argument(
        "--background", "-b", action="store_true", help="print the execution id and return at once"
    )
    group.add_argument(
        "--detach",
        action="store_true",
        help="hand its outcome to the exits feed, print its id and return at once",
    )
    group.add_argument("--timeout", metavar="DURATION", help="deadline from acceptance, e.g. 10m, 30s, 500ms")
    group.add_argument(
        "--idle-timeout", metavar="DURATION", help="end it when it prints nothing for this long"
    )
    group.add_argument("--cwd", metavar="DIR", help="working directory (default: the session's workspace)")
    group.add_argument(
        "--env", "-e", action="append", metavar="K=V", help="set a variable (repeatable); K alone passes ours"
    )
    group.add_argument("--image", help="the image to run in (default host; see `workbench images`)")
    group.add_argument("--session", metavar="ID", help="session id (default: default)")
    group.add_argument("--metadata", metavar="JSON", help="JSON kept with the record")
    group.add_argument(
        "--stdin", metavar="FILE", help="feed FILE (- for this stdin) to it; default: no input"
    )
    group.add_argument("--idempotency-key", metavar="KEY", help="the same key never runs twice")

    run = command(
        "run",
        "run a bash command",
        "Run a bash command and stream its stdout and stderr to ours, live and byte for byte.\n"
        "One word is taken as a shell command line (`workbench run -- 'make && make test'`);\n"
        "several are quoted one by one (`workbench run -- ls -l 'my file'`).\n"
        "Ctrl-C cancels the execution (its whole process tree) and waits for its end.",
        starting,
        epilog=EXIT_STATUSES,
        usage="workbench run [OPTIONS] -- COMMAND...",
    )
    run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command")

    code = command(
        "code",
        "run code in a language",
        "Run code (from FILE, or - for stdin) in a language of the image, e.g. python, bash, sh.\n"
        "Streams output like `run`; Ctrl-C cancels.",
        starting,
        epilog=EXIT_STATUSES,
    )
    code.add_argument("-l", "--language", required=True, help="python, bash, sh, node, ...")
    code.add_argument("file", metavar="FILE|-", help="the code, or - to read it from stdin")


def _add_reading(command: Callable[..., Any], as_json: _Parser) -> None:
    """`ls`, `show`, `logs`, `events`, `wait`: the commands that read."""
    ls = command("ls", "list executions, newest first", "List executions, newest first, as a table.", as_json)
    ls.add_argument(
        "--status", help="queued, running, cancel_requested, completed, failed, cancelled, timed_out"
    )
    ls.add_argument("--kind", help="bash or code (workbench_bash, workbench_code)")
    ls.add_argument("--session", metavar="ID", help="only this session's")
    ls.add_argument("--limit", type=int, default=20, help="at most this many (default 20)")

    show = command("show", "show one execution", "Show one execution's record.", as_json)
    show.add_argument("id")

    logs = command(
        "logs",
        "print an execution's output",
        "Print an execution's whole output, stdout to stdout and stderr to stderr, byte for byte\n"
        "(from its artifacts where the output passed the event budget or was not UTF-8).\n"
        "-f follows it live to its end, resuming by itself after a dropped connection.",
    )
    logs.add_argument("id")
    logs.add_argument("-f", "--follow", action="store_true", help="follow live until it ends")
    which = logs.add_mutually_exclusive_group()
    which.add_argument("--stdout", action="store_true", help="only stdout")
    which.add_argument("--stderr", action="store_true", help="only stderr")

    events = command(
        "events",
        "print an execution's event journal",
        "Print an execution's event journal (its trace). With --json, one event per line (JSON Lines).",
        as_json,
    )
    events.add_argument("id")
    events.add_argument("-f", "--follow", action="store_true", help="follow live until it ends")

    wait = command(
        "wait",
        "wait for an execution to end",
        "Wait for an execution to end, and exit like it. A wait that times out changes nothing\n"
        "and exits 124 with a line on stderr. Ctrl-C stops waiting, not the execution.",
        as_json,
        epilog=EXIT_STATUSES,
    )
    wait.add_argument("id")
    wait.add_argument(
        "--timeout", metavar="DURATION", help="give up after this long, e.g. 30s (default: never)"
    )


def _add_acting(command: Callable[..., Any], as_json: _Parser) -> None:
    """`cancel`, `artifacts`, `rerun`, `exits`, `rm`, `images`, `detach`, `ui`."""
    cancel = command(
        "cancel",
        "cancel an execution",
        "Cancel an execution and wait until its whole process tree is dead.",
        as_json,
    )
    cancel.add_argument("id")
    cancel.add_argument("--reason", help="kept in the record")
    cancel.add_argument("--grace", metavar="DURATION", help="SIGTERM first and wait up to this long, e.g. 2s")

    artifacts = command(
        "artifacts",
        "list or download artifacts",
        "List an execution's artifacts, or write one (NAME) to stdout or to -o FILE.",
        as_json,
    )
    artifacts.add_argument("id")
    artifacts.add_argument("name", nargs="?", help="the artifact to download, e.g. stdout")
    artifacts.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")

    rerun = command(
        "rerun",
        "run an execution's spec again",
        "Start a new execution with the same command or code, cwd, image, session, env, metadata\n"
        "and timeouts, and follow it like `run`. Its stdin is not kept in the record, so the new\n"
        "one gets none; its idempotency key is not reused.",
        epilog=EXIT_STATUSES,
    )
    rerun.add_argument("id")
    rerun.add_argument("--background", "-b", action="store_true", help="print the new id and return at once")
    rerun.add_argument("--detach", action="store_true", help="start it detached, print its id and return")

    exits = command(
        "exits",
        "read the exits feed",
        "Read the outcomes of detached executions. Without --ack each one shown is handed out again\n"
        "after its lease (30 s by default); with --ack it is marked delivered.",
        as_json,
    )
    exits.add_argument("--ack", action="store_true", help="mark the exits shown as delivered")
    exits.add_argument(
        "--wait", metavar="DURATION", help="wait up to this long for one (default: do not wait)"
    )
    exits.add_argument("--limit", type=int, default=100, help="at most this many (default 100)")

    rm = command("rm", "delete ended executions", "Delete ended executions with their events and files.")
    rm.add_argument("ids", nargs="+", metavar="ID")

    command("images", "list images", "List the images executions can run in.", as_json)

    detach = command(
        "detach",
        "hand an execution's outcome to the exits feed",
        "Detach a running execution: its outcome goes to the exits feed.",
        as_json,
    )
    detach.add_argument("id")

    ui = command(
        "ui",
        "print a one-time link that opens the dashboard logged in",
        "Ask the daemon for a one-time login code and print the dashboard's link with it: opened in\n"
        "a browser within 5 minutes, it logs that browser in as the token's principal. The code\n"
        "works once; the link leaves the browser's history once used.",
        as_json,
    )
    ui.add_argument(
        "--ui-url",
        metavar="URL",
        help="the dashboard's address, when the browser reaches the daemon elsewhere",
    )


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exits with the command's status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        status = 130
    except BrokenPipeError:
        # Whoever read our output stopped (`| head`): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 141
    raise SystemExit(status)
