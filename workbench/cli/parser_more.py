"""The grammar of the commands that read and manage executions (`workbench.cli.parser` has the rest)."""

from __future__ import annotations

from workbench.cli import exitcodes
from workbench.cli.argtypes import (
    CONTEXT,
    COUNT,
    DEADLINE,
    DEFAULT_GRACE,
    DURATION,
    KIND,
    POSITIVE,
    SESSION,
    STATUS_LIST,
    VARIABLE,
    Parser,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from workbench.cli.argtypes import Adder

ID_HELP = "an id, a unique prefix of one (with or without ex_, any case), or @last"


def add_reading(command: Adder, as_json: Parser) -> None:
    """`ls`, `show`, `logs`, `events`, `wait`: the commands that read."""
    _add_ls(command, as_json)
    show = command("show", "show one execution", "Show one execution's record.", as_json)
    if show is not None:
        show.add_argument("id", metavar="ID", help=ID_HELP)
    _add_logs(command)
    events = command(
        "events",
        "print an execution's event journal",
        "Print an execution's event journal (its trace), status messages included.\n"
        "With --json, one event per line (JSON Lines).",
        as_json,
    )
    if events is not None:
        events.add_argument("id", metavar="ID", help=ID_HELP)
        events.add_argument("-f", "--follow", action="store_true", help="follow live until it ends")
    wait = command(
        "wait",
        "wait for executions to end",
        "Wait for executions to end, and exit like the first that did not complete (in the order\n"
        "given; each is reported on stderr when there are several). A wait that times out changes\n"
        f"nothing and exits {exitcodes.WAIT_GAVE_UP}. Ctrl-C stops waiting, not the executions.",
        as_json,
        epilog=exitcodes.TABLE,
    )
    if wait is not None:
        wait.add_argument("ids", nargs="+", metavar="ID", help=ID_HELP)
        wait.add_argument(
            "--timeout",
            metavar="DURATION",
            type=DURATION,
            help="give up after this long, e.g. 30s (default: never)",
        )


def _add_ls(command: Adder, as_json: Parser) -> None:
    ls = command(
        "ls",
        "list executions, newest first",
        "List executions, newest first, as a table (ids shortened to what tells them apart).\n"
        "A line on stderr says when there are more than it shows.",
        as_json,
    )
    if ls is not None:
        ls.add_argument(
            "--status",
            action="append",
            type=STATUS_LIST,
            metavar="STATUS",
            help="only these (repeatable, or a,b): queued, running, cancel_requested, completed, failed, "
            "cancelled, timed_out, partial_failed",
        )
        ls.add_argument(
            "--running", action="store_true", help="only those not ended (queued, running, cancel_requested)"
        )
        ls.add_argument(
            "--kind", type=KIND, help="bash, code or batch (workbench_bash, workbench_code, batch)"
        )
        ls.add_argument("--session", metavar="ID", type=SESSION, help="only this session's")
        ls.add_argument("--limit", type=POSITIVE, default=20, help="at most this many (default 20)")
        ls.add_argument("--all", "-a", action="store_true", help="every one: page through them all")
        ls.add_argument("--quiet", "-q", action="store_true", help="print whole ids only, one a line")
        ls.add_argument("--no-trunc", action="store_true", help="whole ids and commands")
        ls.add_argument("--wide", action="store_true", help="also what each used: CPU time and peak memory")
        ls.add_argument("--services", action="store_true", help="only services (`run --service`)")
        ls.add_argument(
            "--watch", "-w", action="store_true", help="redraw the table in place every second (a terminal)"
        )


def _add_logs(command: Adder) -> None:
    logs = command(
        "logs",
        "print an execution's output",
        "Print an execution's whole output, stdout to stdout and stderr to stderr, byte for byte\n"
        "(from its artifacts where the output passed the event budget or was not UTF-8).\n"
        "-f follows it live to its end, resuming by itself after a dropped connection.\n"
        "--tail keeps the last lines of each stream; --since and -t work on the journal's lines.",
    )
    if logs is not None:
        logs.add_argument("id", metavar="ID", help=ID_HELP)
        logs.add_argument("-f", "--follow", action="store_true", help="follow live until it ends")
        which = logs.add_mutually_exclusive_group()
        which.add_argument("--stdout", action="store_true", help="only stdout")
        which.add_argument("--stderr", action="store_true", help="only stderr")
        logs.add_argument("--tail", metavar="N", type=COUNT, help="only the last N lines of each stream")
        logs.add_argument(
            "--since", metavar="WHEN", help="only lines written since, e.g. 10m (ago) or 2026-11-29T12:00:00Z"
        )
        logs.add_argument(
            "-t", "--timestamps", action="store_true", help="begin each line with the time it was written"
        )


def add_acting(command: Adder, as_json: Parser) -> None:
    """`cancel`, `artifacts`, `exits`, `rm`, `images`, `detach`."""
    cancel = command(
        "cancel",
        "cancel executions",
        f"Cancel executions: SIGTERM to each whole process tree, SIGKILL {DEFAULT_GRACE} later (--now: at\n"
        "once), and wait until every tree is dead. Goes on past an id it cannot cancel, reporting each.",
        as_json,
    )
    if cancel is not None:
        cancel.add_argument("ids", nargs="+", metavar="ID", help=ID_HELP)
        cancel.add_argument("--reason", help="kept in the record")
        grace = cancel.add_mutually_exclusive_group()
        grace.add_argument(
            "--grace",
            metavar="DURATION",
            type=DURATION,
            help=f"between SIGTERM and SIGKILL (default {DEFAULT_GRACE})",
        )
        grace.add_argument("--now", action="store_true", help="SIGKILL at once")

    artifacts = command(
        "artifacts",
        "list or download artifacts",
        "List an execution's artifacts, or write one (NAME) to stdout or to -o FILE.",
        as_json,
    )
    if artifacts is not None:
        artifacts.add_argument("id", metavar="ID", help=ID_HELP)
        artifacts.add_argument("name", nargs="?", help="the artifact to download, e.g. stdout")
        artifacts.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")

    exits = command(
        "exits",
        "read the exits feed",
        "Read the outcomes of detached executions. Reading alone hides nothing; with --ack the\n"
        "exits printed are marked delivered, and never handed out again.",
        as_json,
    )
    if exits is not None:
        exits.add_argument("--ack", action="store_true", help="mark the exits printed as delivered")
        exits.add_argument(
            "--wait",
            metavar="DURATION",
            type=DURATION,
            help="wait up to this long for one (default: do not wait)",
        )
        exits.add_argument("--limit", type=POSITIVE, default=100, help="at most this many (default 100)")
        exits.add_argument("--no-trunc", action="store_true", help="whole ids")

    _add_rm(command)
    command("images", "list images", "List the images executions can run in.", as_json)

    detach = command(
        "detach",
        "hand an execution's outcome to the exits feed",
        "Detach a running execution: its outcome goes to the exits feed.",
        as_json,
    )
    if detach is not None:
        detach.add_argument("id", metavar="ID", help=ID_HELP)
    _add_interactive(command)


def _add_interactive(command: Adder) -> None:
    send = command(
        "send",
        "type input into a running execution",
        "Write TEXT and a newline (as typed, then Enter) to the open stdin or terminal of a running\n"
        "execution started with `run -i` or `-t`; or, with -, all of stdin, bytes as they are.",
    )
    if send is not None:
        send.add_argument("id", metavar="ID", help=ID_HELP)
        send.add_argument("text", metavar="TEXT|-", help="the text, or - to read the input from stdin")
        send.add_argument("-n", "--no-newline", action="store_true", help="TEXT without the newline")
        send.add_argument("--eof", action="store_true", help="then close its stdin (Ctrl-D on a terminal)")
        send.add_argument("--no-record", action="store_true", help="keep the bytes out of its journal")
        send.add_argument(
            "--timeout",
            metavar="DURATION",
            type=DURATION,
            help="how long a piece waits for the execution to read what was sent before, e.g. 5m "
            "(default 1m; 0: not at all)",
        )
    attach = command(
        "attach",
        "join a running interactive execution",
        "Join a running execution started with -i or -t: replay its output from the journal (on a\n"
        "terminal: its screen), then follow it live while our keys go to it (raw, Ctrl-C included;\n"
        "Ctrl-P Ctrl-Q detaches and leaves it running). Exits like it once it ends.",
    )
    if attach is not None:
        attach.add_argument("id", metavar="ID", help=ID_HELP)
    kill = command(
        "kill",
        "send a signal to a running execution",
        "Send a signal to a running execution without ending it: on a terminal to its foreground\n"
        "process group (as Ctrl-C does with INT), else to every process of its tree.\n"
        "`workbench cancel` is what ends a tree.",
    )
    if kill is not None:
        kill.add_argument("id", metavar="ID", help=ID_HELP)
        kill.add_argument(
            "-s",
            "--signal",
            default="TERM",
            metavar="SIGNAL",
            help="HUP, INT, QUIT, TERM (default), USR1, USR2, WINCH, CONT, STOP or TSTP",
        )


def _add_rm(command: Adder) -> None:
    rm = command(
        "rm",
        "delete ended executions",
        "Delete ended executions with their events and files: those named, or every one that\n"
        "--status and --before select. Prints each id deleted; goes on past one it cannot delete.",
    )
    if rm is not None:
        rm.add_argument("ids", nargs="*", metavar="ID", help=ID_HELP)
        rm.add_argument(
            "--status",
            action="append",
            type=STATUS_LIST,
            metavar="STATUS",
            help="every ended one of these statuses (repeatable, or a,b): completed, failed, cancelled, "
            "timed_out",
        )
        rm.add_argument(
            "--before", metavar="WHEN", help="every ended one created before, e.g. 7d (ago) or 2026-11-29"
        )


def add_retention(command: Adder, as_json: Parser) -> None:
    """`prune` and `stats`: bulk deletes on the daemon, and what its store holds."""
    prune = command(
        "prune",
        "delete ended executions in bulk, on the daemon",
        "Delete every ended execution that --before and --status select, with its events, files\n"
        "and acked exits, in one request; the daemon gives the space back. Prints how many, and\n"
        "the store's size after.",
        as_json,
    )
    if prune is not None:
        prune.add_argument(
            "--status",
            action="append",
            type=STATUS_LIST,
            metavar="STATUS",
            help="only these ended statuses (repeatable, or a,b): completed, failed, cancelled, timed_out, "
            "partial_failed",
        )
        prune.add_argument(
            "--before", metavar="WHEN", help="only those that ended before, e.g. 7d (ago) or 2026-11-29"
        )
    command(
        "stats",
        "what the daemon's store holds",
        "Executions by status (yours; admin: everyone's), the store's size and the data dir's.",
        as_json,
    )


def add_files(command: Adder, as_json: Parser) -> None:
    """`cp`, `files` and `session`: the sessions' workspaces."""
    cp = command(
        "cp",
        "copy files into or out of a session's workspace",
        "Copy a file or a directory between here and a session's workspace, as `docker cp` does:\n"
        "`workbench cp ./src my-session:app` or `workbench cp my-session:app/out.log .`.\n"
        "A directory copied to a directory that exists goes inside it; - is stdin or stdout.",
    )
    if cp is not None:
        cp.add_argument("source", metavar="SOURCE", help="a local path, or SESSION:PATH")
        cp.add_argument("target", metavar="TARGET", help="SESSION:PATH, or a local path")
    files = command("files", "list a session's workspace", "List the files of a session's workspace.")
    if files is not None:
        actions = files.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser)
        ls = actions.add_parser("ls", help="list a directory", parents=[as_json])
        ls.add_argument(
            "where", metavar="SESSION[:DIR]", help="the session, and a directory in its workspace"
        )
        ls.add_argument("--depth", type=COUNT, default=1, help="levels to go down (default 1)")
    session = command(
        "session",
        "list or remove sessions",
        "Sessions: the workspaces that a session's executions share (`--session ID`), made on\n"
        "first use. `ls` lists them with their sizes and what holds them; `rm` removes their\n"
        "workspaces with every file in them (refused while an execution of one is queued or\n"
        "running, or a code context of one lives).",
    )
    if session is not None:
        actions = session.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser)
        actions.add_parser("ls", help="list the sessions", parents=[as_json])
        rm = actions.add_parser("rm", help="remove sessions with their files")
        rm.add_argument("ids", nargs="*", metavar="ID", type=SESSION, help="a session id")
        rm.add_argument("--all", action="store_true", help="every session (all, or none while one is held)")


def add_ui(command: Adder, as_json: Parser) -> None:
    """`ui`: the dashboard, logged in."""
    ui = command(
        "ui",
        "print a one-time link that opens the dashboard logged in",
        "Ask the daemon for a one-time login code and print the dashboard's link with it: opened in\n"
        "a browser within 5 minutes, it logs that browser in as the token's principal. The code\n"
        "works once; the link leaves the browser's history once used.",
        as_json,
    )
    if ui is not None:
        ui.add_argument(
            "--ui-url",
            metavar="URL",
            help="the dashboard's address, when the browser reaches the daemon elsewhere",
        )


def add_contexts(command: Adder, as_json: Parser) -> None:
    """`context new|ls|rm`: code contexts."""
    context = command(
        "context",
        "manage code contexts (interpreters whose names persist)",
        "Code contexts: long-lived interpreters, contained like any execution, whose names persist\n"
        "between `workbench code --context ID` runs.",
    )
    if context is None:
        return
    actions = context.add_subparsers(dest="action", required=True, metavar="ACTION", parser_class=Parser)
    new = actions.add_parser("new", help="start a context and print its id", parents=[as_json])
    new.add_argument("-l", "--language", default="python", help="the interpreter: python (default) or node")
    new.add_argument("--image", help="the image to run in (default host)")
    new.add_argument("--session", metavar="ID", type=SESSION, help="its session (default: default)")
    new.add_argument(
        "--env", "-e", action="append", type=VARIABLE, metavar="K=V", help="set a variable (repeatable)"
    )
    new.add_argument(
        "--idle-timeout", metavar="DURATION", type=DEADLINE, help="kill it after this long without a run"
    )
    actions.add_parser("ls", help="list the contexts", parents=[as_json])
    rm = actions.add_parser("rm", help="kill contexts and forget them")
    rm.add_argument("ids", nargs="+", metavar="ID", type=CONTEXT, help="a context id (cx_...)")
