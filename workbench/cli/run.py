"""The CLI commands that start an execution and follow it: `run`, `code`, `rerun`."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from workbench.cli import exitcodes
from workbench.cli.env import default_cwd, piped_stdin, shell_environment
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import ApiError, Http
from workbench.cli.signals import Interrupted, Signals, died

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TERMINAL = frozenset({"completed", "failed", "cancelled", "timed_out", "partial_failed"})
#: A foreground start waits this long for the end in its own request: a short command then takes
#: one request in all; a longer one is followed live from there (its output replayed first).
QUICK_WAIT_MS = 50
STDIN_HINT = (
    " (stdin goes in the start request: too much for it can be a file the command reads instead, "
    "or --no-stdin)"
)
CWD_HINT = (
    " (with a daemon on this machine, the working directory is ours unless --cwd or --session says otherwise)"
)


def start_options(http: Http, args: argparse.Namespace, *, stdin_is_code: bool = False) -> dict[str, Any]:
    """The start-body fields the options of `run` and `code` set."""
    body: dict[str, Any] = {}
    if args.timeout is not None:
        body["timeoutMs"] = args.timeout
    if args.idle_timeout is not None:
        body["idleTimeoutMs"] = args.idle_timeout
    # A node of its own runs it in the session's workspace there, not in our directory.
    cwd = (
        os.path.abspath(args.cwd)
        if args.cwd is not None
        else None
        if getattr(args, "node", None) is not None
        else default_cwd(http.target, args.image, args.session)
    )
    if cwd is not None:
        body["cwd"] = cwd
    env = shell_environment(os.environ) if args.env_from_shell else {}
    env.update(variables(args.env or [], "--env"))
    if env:
        body["env"] = env
    if getattr(args, "secret_env", None):
        body["secretEnv"] = variables(args.secret_env, "--secret-env")
    if args.image is not None:
        body["image"] = args.image
    if args.session is not None:
        body["sessionId"] = args.session
    if getattr(args, "node", None) is not None:
        body["node"] = args.node
    if args.metadata is not None:
        try:
            body["metadata"] = json.loads(args.metadata)
        except ValueError as exc:
            raise UsageError(f"--metadata: not JSON: {exc}") from None
    if args.stdin is not None:
        body["stdin"] = read_text(args.stdin, "--stdin")
    elif not args.no_stdin and not stdin_is_code:
        data = piped_stdin()
        if data:
            body["stdin"] = decode(data, "stdin (piped)", "; pass --no-stdin to feed nothing")
    if args.detach:
        body["detached"] = True
    return body


def decode(data: bytes, what: str, hint: str = "") -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{what} is not UTF-8 text, which is all an execution can be fed{hint}") from None


def variables(given: list[str], option: str) -> dict[str, str]:
    """`K=V` and `K` (our own value of K) options as a dict."""
    env: dict[str, str] = {}
    for item in given:
        name, eq, value = item.partition("=")
        if not eq:
            if name not in os.environ:
                raise UsageError(f"{option} {name}: not set here; pass {option} {name}=VALUE")
            value = os.environ[name]
        env[name] = value
    return env


def read_text(source: str, option: str) -> str:
    """The UTF-8 text of file `source`, or of our stdin for `-`."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read() if sys.stdin is not None else b""
        else:
            with open(source, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise UsageError(f"{option}: cannot read {source}: {exc.strerror}") from None
    return decode(data, f"{option} {source}")


def cmd_run(http: Http, args: argparse.Namespace) -> int:
    words: list[str] = args.cmd
    if words and words[0] == "--":
        words = words[1:]
    if not words:
        raise UsageError("run: no command given (workbench run [OPTIONS] -- COMMAND...)")
    if len(words) == 1:
        command = words[0]
    else:
        import shlex  # only here: the one-word command is the common, fast case

        command = shlex.join(words)
    if args.interactive or args.tty:
        if args.stdin is not None:
            option = "-i" if args.interactive else "-t"
            raise UsageError(f"--stdin cannot be given with {option}: ours goes to it live")
        args.no_stdin = True  # ours goes to it live, not at the start
        body = {"command": command, **start_options(http, args), **_interactive_fields(args)}
        if not (args.background or args.detach):
            from workbench.cli.attach import run_interactive

            return run_interactive(http, body, getattr(args, "idempotency_key", None))
        return launch(http, args, "workbench_bash", body)
    return launch(http, args, "workbench_bash", {"command": command, **start_options(http, args)})


def _interactive_fields(args: argparse.Namespace) -> dict[str, Any]:
    if not args.tty:
        return {"openStdin": True}
    fields: dict[str, Any] = {"tty": True}
    if os.isatty(1):
        size = os.get_terminal_size(1)
        fields["ttySize"] = {"rows": min(size.lines, 1000) or 24, "cols": min(size.columns, 1000) or 80}
    return fields


def cmd_code(http: Http, args: argparse.Namespace) -> int:
    if args.file is not None and args.code_text is not None:
        raise UsageError("code: give the code either FILE or -c CODE, not both")
    if args.file is None and args.code_text is None:
        raise UsageError("code: the code is missing: give FILE, - or -c CODE")
    code = args.code_text if args.code_text is not None else read_text(args.file, "FILE")
    if args.context is not None:
        if args.language is None:
            # The context runs one language: ask it (its 404 is the error for a wrong id).
            from urllib.parse import quote  # only here: it costs `run` 4 ms

            context = http.json("GET", f"/v1/contexts/{quote(args.context, safe='')}")
            args.language = context["language"]
        return launch(http, args, "workbench_code", context_body(args, code))
    if args.language is None:
        raise UsageError("code: -l/--language is required (python, bash, sh, node, ...) without --context")
    options = start_options(http, args, stdin_is_code=args.file == "-")
    body = {"language": args.language, "code": code, **options}
    return launch(http, args, "workbench_code", body)


#: The options of `code` that a context fixes when it is made (refused with --context).
FIXED_BY_CONTEXT = (
    ("cwd", "--cwd"),
    ("env", "--env"),
    ("secret_env", "--secret-env"),
    ("env_from_shell", "--env-from-shell"),
    ("image", "--image"),
    ("node", "--node"),
    ("session", "--session"),
    ("stdin", "--stdin"),
    ("idle_timeout", "--idle-timeout"),
)


def context_body(args: argparse.Namespace, code: str) -> dict[str, Any]:
    """The start body of `workbench code --context ID`: the context's own settings apply."""
    given = [option for name, option in FIXED_BY_CONTEXT if getattr(args, name, None)]
    if given:
        raise UsageError(f"code: {', '.join(given)} cannot be given with --context (the context's own apply)")
    body: dict[str, Any] = {"language": args.language, "code": code, "contextId": args.context}
    if args.timeout is not None:
        body["timeoutMs"] = args.timeout
    if args.metadata is not None:
        try:
            body["metadata"] = json.loads(args.metadata)
        except ValueError as exc:
            raise UsageError(f"--metadata: not JSON: {exc}") from None
    if args.detach:
        body["detached"] = True
    return body


def cmd_rerun(http: Http, args: argparse.Namespace) -> int:
    from workbench.cli.ids import resolve

    # The daemon copies the spec (its stdin too): POST .../rerun names the original in `rerunOf`.
    body: dict[str, Any] = {}
    if args.detach:
        body["detached"] = True
    if args.secret_env:
        body["secretEnv"] = variables(args.secret_env, "--secret-env")
    return launch(http, args, f"{resolve(http, args.id)}/rerun", body)


def _start(http: Http, args: argparse.Namespace, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """POST /v1/executions/`kind` (a kind, or `ID/rerun`)."""
    key = getattr(args, "idempotency_key", None)
    headers = {"Idempotency-Key": key} if key else None
    try:
        record: dict[str, Any] = http.json(
            "POST", f"/v1/executions/{kind}", body, headers=headers, ok=(200, 201, 202), resend=bool(key)
        )
    except ApiError as exc:
        defaulted = "cwd" in body and getattr(args, "cwd", "") is None
        if exc.code == "invalid_request" and "cwd" in exc.message and defaulted:
            raise ApiError(exc.code, exc.message + CWD_HINT, exc.status) from None
        if exc.code == "payload_too_large" and "stdin" in body:
            raise ApiError(exc.code, exc.message + STDIN_HINT, exc.status) from None
        raise
    return record


def launch(http: Http, args: argparse.Namespace, kind: str, body: dict[str, Any]) -> int:
    """Start an execution (`kind`: its kind, or `ID/rerun`); print its id (background) or follow
    it to the end and exit like it."""
    if args.background or args.detach:
        print(_start(http, args, kind, {**body, "background": True})["executionId"])
        return exitcodes.OK
    # A start with a key is sent as a background start whatever the options, so that `run -b -k K`
    # and `run -k K` make one request body, and a retry of either replays the first.
    quick = {"waitTimeoutMs": QUICK_WAIT_MS} if not getattr(args, "idempotency_key", None) else {}
    signals = Signals((signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    signals.install()
    record: dict[str, Any] | None = None
    pending: Interrupted | None = None
    try:
        with signals.deferred():
            record = _start(http, args, kind, {**body, "background": not quick, **quick})
    except Interrupted as sig:
        if record is None:  # the start itself failed: there is nothing to cancel
            return died(sig)
        pending = sig
    return _until_end(http, record, signals, pending)


def _until_end(http: Http, record: dict[str, Any], signals: Signals, pending: Interrupted | None) -> int:
    output = record["output"]
    wrote = record["artifacts"] or output["stdoutBytes"] or output["stderrBytes"]
    if record["status"] in TERMINAL and not wrote:
        # Ended within its own request and wrote nothing: the quick case, without more imports.
        signals.restore()
        if pending is not None:
            return died(pending)
        _show_result(record)
        exitcodes.report(record["executionId"], record)
        return exitcodes.of_record(record)
    return _follow(http, record, signals, pending)


def _show_result(end: dict[str, Any]) -> None:
    """A code context's run: the value of its final expression on stdout, a traceback on stderr."""
    result = end.get("result")
    if result and "text/plain" in result:
        output = sys.modules.get("workbench.cli.output")  # imported when something was written
        if output is not None and not output.STDOUT.at_line_start:
            print()
        print(result["text/plain"], flush=True)
    error = end.get("error")
    if error and error.get("traceback"):
        print(error["traceback"], end="", file=sys.stderr, flush=True)


def _follow(http: Http, record: dict[str, Any], signals: Signals, pending: Interrupted | None) -> int:
    from workbench.cli.follow import RunReactions, Stopped, follow, react_all
    from workbench.cli.output import write_recorded

    execution_id = record["executionId"]
    react = RunReactions(http, execution_id, signals)
    try:
        if record["status"] in TERMINAL:
            if pending is not None:
                return died(pending)
            end = record
            with signals.deferred():
                write_recorded(http, record)
        else:
            if pending is not None:
                react_all(react, pending, None)
            end = follow(http, record, signals=signals, react=react, label="running")
    except Stopped as stop:
        return stop.status
    except BrokenPipeError:
        return react.stopping if react.stopping is not None else react.closed_stdout()
    except OSError:
        if react.stopping is None:
            raise
        return react.stopping  # SIGHUP: the terminal it wrote to is gone
    except Interrupted as sig:  # after the end, writing what the artifacts hold
        return react.stopping if react.stopping is not None else died(sig)
    finally:
        signals.restore()
    if end is not record and record.get("contextId"):
        # A cell's value and traceback are in its record, not in the terminal event followed.
        end = http.json("GET", f"/v1/executions/{execution_id}")
    _show_result(end)
    exitcodes.report(execution_id, end)
    return react.stopping if react.stopping is not None else exitcodes.of_record(end)
