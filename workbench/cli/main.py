"""The `workbench` command line: `serve` runs the daemon; every other command talks to one.

Client commands find the daemon through `--url` / `$WORKBENCH_URL` (default
`http://127.0.0.1:8787`, or `unix:///path.sock`) and the token through `--token` /
`$WORKBENCH_TOKEN`, else `<data dir>/token`. Errors are one line on stderr with the API's error
code (`workbench: not_found: no execution ex_...`). Exit statuses: `workbench.cli.exitcodes`.

This module and what it imports for client commands use the standard library only: the daemon
side (trio, quart, hypercorn, sqlite) and the Python client (httpx, pydantic) are never loaded.
"""

from __future__ import annotations

import os
import sys

from workbench.cli import exitcodes
from workbench.cli.parser import MODULES, build_parser

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs the CLI's start
    import argparse
    from collections.abc import Callable
    from typing import Any

__all__ = ["build_parser", "main"]

#: Options of the top level that take a value (skipped when looking for the command's name).
_VALUED = frozenset({"--url", "--token"})


def command_of(argv: list[str]) -> str | None:
    """The command a command line runs, found without building the parser; None if unclear."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in _VALUED:
            skip = True
        elif arg.startswith("-"):
            if arg in ("-h", "--help", "--version") or not arg.startswith("--"):
                return None
        else:
            return arg if arg in MODULES or arg in ("serve", "mcp") else None
    return None


def _serve(args: argparse.Namespace) -> int:
    from api.serve import main as serve  # the one place the CLI reaches into the daemon

    return serve(
        bind=args.bind,
        data_dir=args.data_dir,
        unix_socket=args.unix_socket,
        allow_remote=args.allow_remote or None,
    )


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except OSError:
        pass


def _with_daemon(args: argparse.Namespace) -> int:
    """Run a client command against the daemon; errors become one line and an exit status."""
    import importlib

    from workbench.cli.env import unknown_variables
    from workbench.cli.http import ApiError, Http
    from workbench.client.config import resolve

    for warning in unknown_variables(os.environ):
        _say(f"workbench: warning: {warning}")
    try:
        target = resolve(getattr(args, "url", None), getattr(args, "token", None))
        http = Http(target)  # reads the URL's port
    except ValueError as exc:
        _say(f"workbench: usage: --url: {exc}")
        return exitcodes.USAGE
    name = args.module
    if args.command == "run" and (args.service or args.ready_port or args.ready_log or args.ready_timeout):
        name = "services"  # `run --service ...`: start, wait until ready, return
    module = importlib.import_module(f"workbench.cli.{name}")
    func: Callable[[Any, argparse.Namespace], int] = getattr(module, f"cmd_{args.command}")
    try:
        return func(http, args)
    except exitcodes.UsageError as exc:
        _say(f"workbench: usage: {exc}")
        return exitcodes.USAGE
    except ApiError as exc:
        _say(f"workbench: {exc.code}: {exc.message}")
        return exitcodes.FAILED
    except (KeyError, TypeError) as exc:
        # JSON of the wrong shape: another server, or a daemon of another version.
        _say(
            f"workbench: unavailable: {target.display_url} answered what this CLI does not understand "
            f"({type(exc).__name__}: {exc}); is it a Workbench daemon of this version?"
        )
        return exitcodes.FAILED
    finally:
        http.close()


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exits with the command's status."""
    words = sys.argv[1:] if argv is None else argv
    args = build_parser(command_of(words)).parse_args(words)
    try:
        if args.command == "serve":
            status = _serve(args)
        elif args.command == "mcp":
            from workbench.cli import mcp

            status = mcp.run(args)
        else:
            status = _with_daemon(args)
        sys.stdout.flush()
    except KeyboardInterrupt:
        # Ctrl-C on a command that cancels nothing: die of SIGINT, as programs do.
        import signal

        from workbench.cli.signals import die_of

        die_of(signal.SIGINT)
        status = exitcodes.CANCELLED
    except BrokenPipeError:
        # Whoever read our output stopped (`| head`): not an error of ours.
        status = exitcodes.BROKEN_PIPE
    if status == exitcodes.BROKEN_PIPE:
        # Nothing more can go out: what Python would flush at exit would fail again, noisily.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if args.command not in ("serve", "mcp") and argv is None:
        _exit_now(status)
    raise SystemExit(status)


def _exit_now(status: int) -> None:
    """End a client command's process without tearing the interpreter down: its exit handlers
    run and its output is flushed, but the teardown of every module and object (about 10 ms of
    a command of 60-70 ms) is skipped. Only its own daemon threads may still run; they die."""
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
