"""The command line's grammar: every command, its options and their help.

Only the command at hand is built (`build_parser(only=...)`): argparse costs per option, and
`workbench run -- true` must start fast. Bad values are usage errors here, naming the option.
"""

from __future__ import annotations

import argparse

from workbench.cli import exitcodes
from workbench.cli.argtypes import (
    CWD_HELP,
    DEADLINE,
    DEFAULT_GRACE,
    POSITIVE,
    SESSION,
    VARIABLE,
    Parser,
    Version,
)
from workbench.cli.env import DAEMON_VARIABLES

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs the CLI's start
    from typing import Any

    from workbench.cli.argtypes import Adder

#: Which command runs each command line (a module of workbench.cli, and a function of it).
MODULES = {
    "run": "run", "code": "run", "rerun": "run", "wait": "waiting", "logs": "logs", "ls": "listing",
    "show": "commands", "events": "commands", "cancel": "commands", "artifacts": "commands",
    "exits": "commands", "rm": "commands", "images": "commands", "detach": "commands",
    "batch": "batch", "cp": "files", "files": "files", "ui": "commands", "context": "contexts",
    "send": "interactive", "kill": "interactive", "attach": "attach", "prune": "retention",
    "stats": "retention", "session": "sessions",
}  # fmt: skip


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (`only`) the top level and that one command."""
    common = Parser(add_help=False)
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
    as_json = Parser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON alone on stdout")
    parser = Parser(
        prog="workbench",
        description="Durable, contained executions of bash commands and code.",
        parents=[common],
        epilog="`workbench COMMAND --help` tells more about each command.\n\n" + exitcodes.TABLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=Version)
    # An explicit prog spares argparse a help formatter (and its imports) on every start.
    sub = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", parser_class=Parser, prog="workbench"
    )

    def command(name: str, summary: str, description: str, *parents: Parser, **kw: Any) -> Any:
        if only is not None and name != only:
            return None
        p = sub.add_parser(
            name,
            help=summary,
            description=description,
            parents=[common, *parents],
            formatter_class=argparse.RawDescriptionHelpFormatter,
            **kw,
        )
        p.set_defaults(module=MODULES.get(name))
        return p

    if only in (None, "serve"):
        _add_serve(sub)
    if only in (None, "run", "code", "rerun"):
        _add_starting(command)
    if only in (None, "batch"):
        _add_batch(command)
    if only in (None, "mcp"):
        from workbench.cli import mcp

        mcp.add_command(sub, common)
    if only not in ("serve", "run", "code", "rerun", "mcp", "batch"):
        from workbench.cli import parser_more  # the other commands' grammar

        parser_more.add_reading(command, as_json)
        parser_more.add_acting(command, as_json)
        parser_more.add_files(command, as_json)
        parser_more.add_ui(command, as_json)
        parser_more.add_contexts(command, as_json)
        parser_more.add_retention(command, as_json)
    return parser


def _add_serve(sub: Any) -> None:
    variables = "\n".join(f"  {name}\n      {text}" for name, text in DAEMON_VARIABLES.items())
    serve = sub.add_parser(
        "serve",
        help="run the daemon",
        description="Run the Workbench daemon in the foreground until SIGTERM or SIGINT.",
        epilog=f"environment variables (the flags win over them):\n{variables}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--bind", help="HOST:PORT to listen on (default 127.0.0.1:8787, or $WORKBENCH_BIND)")
    serve.add_argument("--unix-socket", type=_path, help="also listen on this Unix socket (mode 0600)")
    serve.add_argument(
        "--data-dir", type=_path, help="where the store and files live (default ~/.local/share/workbench)"
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow binding a non-loopback address without TLS (anyone who reaches it with a token "
        "runs commands); with WORKBENCH_TLS_CERT/WORKBENCH_TLS_KEY it is not needed",
    )
    serve.set_defaults(module=None)


def _path(text: str) -> Any:
    from pathlib import Path

    return Path(text)


def _starting_options() -> Parser:
    """The options of `run` and `code`: what the execution is started with."""
    starting = Parser(add_help=False)
    group = starting.add_argument_group("execution options")
    group.add_argument(
        "--background", "-b", action="store_true", help="print the execution id and return at once"
    )
    group.add_argument(
        "--detach",
        action="store_true",
        help="hand its outcome to the exits feed, print its id and return at once",
    )
    group.add_argument(
        "--timeout",
        metavar="DURATION",
        type=DEADLINE,
        help="deadline from acceptance, e.g. 10m, 30s, 500ms (at most 24h)",
    )
    group.add_argument(
        "--idle-timeout",
        metavar="DURATION",
        type=DEADLINE,
        help="end it when it prints nothing for this long",
    )
    group.add_argument("--cwd", metavar="DIR", help=CWD_HELP)
    group.add_argument(
        "--session",
        metavar="ID",
        type=SESSION,
        help="session id (default: default); its workspace is the cwd",
    )
    group.add_argument(
        "--env",
        "-e",
        action="append",
        type=VARIABLE,
        metavar="K=V",
        help="set a variable (repeatable); K alone passes ours",
    )
    group.add_argument(
        "--secret-env",
        action="append",
        type=VARIABLE,
        metavar="K=V",
        help="a variable never echoed, logged or stored (repeatable); K alone passes ours",
    )
    group.add_argument(
        "--env-from-shell",
        action="store_true",
        help="pass our whole environment (but WORKBENCH_*); default: the image's clean one",
    )
    group.add_argument("--image", help="the image to run in (default host; see `workbench images`)")
    group.add_argument(
        "--node", metavar="ID", help="run it on this node of a shared store only (its WORKBENCH_NODE_ID)"
    )
    group.add_argument("--metadata", metavar="JSON", help="JSON kept with the record")
    stdin = group.add_mutually_exclusive_group()
    stdin.add_argument(
        "--stdin", metavar="FILE", help="feed FILE (- for our stdin) to it; default: our stdin when piped"
    )
    stdin.add_argument(
        "--no-stdin", action="store_true", help="feed it nothing, even when our stdin is piped"
    )
    group.add_argument("--idempotency-key", metavar="KEY", help="the same key never runs twice")
    return starting


def _add_starting(command: Adder) -> None:
    """`run`, `code` and `rerun`: the commands that start an execution."""
    starting = _starting_options()
    follow_help = (
        "Ctrl-C sends SIGINT to it; a second Ctrl-C cancels it (SIGTERM, then SIGKILL after "
        f"{DEFAULT_GRACE}),\na third stops waiting. SIGTERM, SIGHUP, or a closed stdout cancel it too."
    )
    run = command(
        "run",
        "run a bash command",
        "Run a bash command and stream its stdout and stderr to ours, live and byte for byte.\n"
        "One word is taken as a shell command line (`workbench run -- 'make && make test'`);\n"
        "several are quoted one by one (`workbench run -- ls -l 'my file'`). Piped stdin is fed\n"
        "to it. " + follow_help,
        starting,
        epilog=exitcodes.TABLE,
        usage="workbench run [OPTIONS] -- COMMAND...",
    )
    if run is not None:
        run.add_argument("cmd", nargs=argparse.REMAINDER, metavar="COMMAND", help="the command")
        run.add_argument(
            "-i", "--interactive", action="store_true", help="keep its stdin open and send ours to it, live"
        )
        run.add_argument(
            "-t",
            "--tty",
            action="store_true",
            help="run it on a terminal of our window's size (with -i and our terminal: raw keys, "
            "Ctrl-P Ctrl-Q detaches)",
        )
        _add_service_options(run)
    code = command(
        "code",
        "run code in a language",
        "Run code (from FILE, - for stdin, or -c CODE) in a language of the image, e.g. python, bash,\n"
        "sh, node. "
        "Streams output like `run`. " + follow_help,
        starting,
        epilog=exitcodes.TABLE,
    )
    if code is not None:
        code.add_argument(
            "-l", "--language", help="python, bash, sh, node, ... (with --context: the context's own)"
        )
        code.add_argument("file", nargs="?", metavar="FILE|-", help="the code, or - to read it from stdin")
        code.add_argument(
            "-c", "--code", dest="code_text", metavar="CODE", help="the code itself, as `python -c`"
        )
        code.add_argument(
            "--context",
            metavar="ID",
            help="run it in this code context (`workbench context new`): its names persist; the\n"
            "value of a final expression is printed",
        )
    rerun = command(
        "rerun",
        "run an execution's spec again",
        "Start a new execution with the same command or code, cwd, image, session, env, stdin,\n"
        "metadata and timeouts (POST .../rerun: its record names the original in `rerunOf`), and\n"
        "follow it like `run`. secretEnv values are never kept: give them again with --secret-env.",
        epilog=exitcodes.TABLE,
    )
    if rerun is not None:
        rerun.add_argument("id", metavar="ID", help="an id, a unique prefix of one, or @last")
        rerun.add_argument(
            "--background", "-b", action="store_true", help="print the new id and return at once"
        )
        rerun.add_argument("--detach", action="store_true", help="start it detached, print its id and return")
        rerun.add_argument(
            "--secret-env",
            action="append",
            type=VARIABLE,
            metavar="K=V",
            help="a secret variable of the original, again",
        )
        rerun.add_argument("--idempotency-key", metavar="KEY", help="the same key never reruns it twice")


def _add_batch(command: Adder) -> None:
    """`batch`: many executions accepted as one."""
    batch = command(
        "batch",
        "run many executions as one batch",
        "Start a batch: every line of FILE (- for stdin) is a start body as JSON (its kind taken\n"
        "from `command` or `code` when it has none), or with --bash a command. All are accepted\n"
        "or none; each item is an ordinary execution. Prints a line per item as it ends, and\n"
        "exits 0 once every item completed, 1 when some did not, 124 when the batch timed out\n"
        "and 130 when it was cancelled. Ctrl-C cancels the batch.",
    )
    if batch is None:
        return
    batch.add_argument("file", metavar="FILE|-", help="the items, or - to read them from stdin")
    batch.add_argument("--bash", action="store_true", help="each line is a bash command")
    batch.add_argument("--concurrency", type=POSITIVE, metavar="N", help="at most N items run at once")
    batch.add_argument("--fail-fast", action="store_true", help="the first item that fails cancels the rest")
    batch.add_argument(
        "--timeout", metavar="DURATION", type=DEADLINE, help="the batch's deadline; no item runs past it"
    )
    batch.add_argument(
        "--background", "-b", action="store_true", help="print the batch's id and return at once"
    )
    batch.add_argument(
        "--detach", action="store_true", help="hand its outcome to the exits feed; print its id"
    )
    batch.add_argument("--idempotency-key", metavar="KEY", help="the same key never starts the batch twice")
    batch.add_argument("--json", action="store_true", help="print the batch's final record as JSON")


def _add_service_options(run: Any) -> None:
    """`run --service` and its readiness (see `workbench.cli.services`)."""
    service = run.add_argument_group("service options")
    service.add_argument(
        "--service",
        action="store_true",
        help="keep it up (no default deadline; its background processes live on); print its id once ready",
    )
    service.add_argument(
        "--ready-port", type=POSITIVE, metavar="PORT", help="ready once its tree listens on PORT"
    )
    service.add_argument("--ready-log", metavar="REGEX", help="ready once a line of its output matches REGEX")
    service.add_argument(
        "--ready-timeout",
        metavar="DURATION",
        type=DEADLINE,
        help="kill it if not ready within this long (default 60s)",
    )
