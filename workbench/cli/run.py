"""The CLI commands that start, follow and wait: `run`, `code`, `rerun`, `wait`, `logs`."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from workbench.cli.http import Http
from workbench.cli.output import STREAMS, Interrupts, Output, Progress
from workbench.client.config import Target, parse_duration_ms

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: `waitTimeoutMs` is at most this on the wire; longer waits are several long-polls.
MAX_WAIT_MS = 600_000
TERMINAL = frozenset({"completed", "failed", "cancelled", "timed_out"})


class UsageError(Exception):
    """A command line that cannot be run (exit status 2)."""


def exit_status(status: str, exit_code: int | None, signal_name: str | None) -> int:
    """The exit status `run` and `wait` end with: the command's own, 124, 128+N, or 130."""
    if status == "completed":
        return 0
    if status == "timed_out":
        return 124
    if status == "cancelled":
        return 130
    if signal_name:
        try:
            return 128 + signal.Signals[signal_name].value
        except KeyError:
            return 1
    if exit_code is not None and 0 < exit_code < 256:
        return exit_code
    return 1


def report(execution_id: str, end: dict[str, Any]) -> None:
    """One line on stderr for an end that is not the command's own exit."""
    status, error = end["status"], end.get("error")
    if error and status != "completed":
        print(f"workbench: {error['code']}: {execution_id}: {error['message']}", file=sys.stderr)
    elif status == "cancelled":
        print(f"workbench: cancelled: {execution_id}", file=sys.stderr)
    elif status == "timed_out":
        print(f"workbench: timed_out: {execution_id}: its deadline passed", file=sys.stderr)
    elif end.get("signal"):
        print(f"workbench: {execution_id}: killed by {end['signal']}", file=sys.stderr)


def duration_ms(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    try:
        return parse_duration_ms(text)
    except ValueError as exc:
        raise UsageError(f"{option}: {exc}") from None


def start_options(args: argparse.Namespace) -> dict[str, Any]:
    """The start-body fields the options of `run` and `code` set."""
    body: dict[str, Any] = {"background": True}
    if args.timeout is not None:
        body["timeoutMs"] = duration_ms(args.timeout, "--timeout")
    if args.idle_timeout is not None:
        body["idleTimeoutMs"] = duration_ms(args.idle_timeout, "--idle-timeout")
    if args.cwd is not None:
        body["cwd"] = os.path.abspath(args.cwd)
    if args.env:
        env: dict[str, str] = {}
        for item in args.env:
            name, eq, value = item.partition("=")
            if not eq:
                if name not in os.environ:
                    raise UsageError(f"--env {name}: not set here; pass --env {name}=VALUE")
                value = os.environ[name]
            env[name] = value
        body["env"] = env
    if args.image is not None:
        body["image"] = args.image
    if args.session is not None:
        body["sessionId"] = args.session
    if args.metadata is not None:
        try:
            body["metadata"] = json.loads(args.metadata)
        except ValueError as exc:
            raise UsageError(f"--metadata: not JSON: {exc}") from None
    if args.stdin is not None:
        body["stdin"] = read_text(args.stdin, "--stdin")
    if args.detach:
        body["detached"] = True
    return body


def read_text(source: str, option: str) -> str:
    """The UTF-8 text of file `source`, or of our stdin for `-`."""
    try:
        if source == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(source, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise UsageError(f"{option}: cannot read {source}: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{option}: {source} is not UTF-8 text") from None


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
    return launch(http, args, "workbench_bash", {"command": command, **start_options(args)})


def cmd_code(http: Http, args: argparse.Namespace) -> int:
    body = {"language": args.language, "code": read_text(args.file, "FILE"), **start_options(args)}
    return launch(http, args, "workbench_code", body)


def cmd_rerun(http: Http, args: argparse.Namespace) -> int:
    old = http.json("GET", f"/v1/executions/{args.id}")
    body: dict[str, Any] = {"background": True}
    kind = old["executionKind"]
    if kind == "workbench_code":
        body.update(language=old["language"], code=old["code"])
    else:
        body["command"] = old["command"]
    for key in ("cwd", "image", "sessionId", "env", "metadata", "timeoutMs", "idleTimeoutMs"):
        if old.get(key) is not None:
            body[key] = old[key]
    if args.detach:
        body["detached"] = True
    return launch(http, args, kind, body)


def launch(http: Http, args: argparse.Namespace, kind: str, body: dict[str, Any]) -> int:
    """Start an execution; print its id (background) or follow it to the end and exit like it."""
    key = getattr(args, "idempotency_key", None)
    headers = {"Idempotency-Key": key} if key else None
    record = http.json(
        "POST", f"/v1/executions/{kind}", body, headers=headers, ok=(200, 201, 202), resend=bool(key)
    )
    execution_id = record["executionId"]
    if args.background or args.detach:
        print(execution_id)
        return 0
    end = follow(http, record, cancel_on_interrupt=True, label="running")
    report(execution_id, end)
    return exit_status(end["status"], end.get("exitCode"), end.get("signal"))


def follow(
    http: Http,
    record: dict[str, Any],
    *,
    cancel_on_interrupt: bool,
    label: str,
    streams: tuple[str, ...] = STREAMS,
) -> dict[str, Any]:
    """Write the execution's output live until it ends; returns the terminal event.

    With `cancel_on_interrupt`, a first Ctrl-C cancels the execution and keeps following to its
    end; a second one (or the first, without it) raises KeyboardInterrupt.
    """
    execution_id = record["executionId"]
    interrupts = Interrupts()
    interrupts.install()
    progress = Progress(label)
    output = Output(
        streams,
        trust_display=not record["output"]["truncated"],
        progress=progress if progress.enabled else None,
        interrupts=interrupts,
    )
    last, cancelled = 0, False
    end: dict[str, Any] | None = None
    try:
        while end is None:
            try:
                for kind, data in http.stream(execution_id, last):
                    with interrupts.deferred():
                        if kind == "event":
                            output.event(data)
                            last = data["sequence"]
                            if data["eventType"] == "status" and data["status"] in TERMINAL:
                                end = data
                        elif kind == "live":
                            output.live(data)
                        elif kind == "gap":
                            output.stop()
                        elif kind == "reconnected":
                            output.reconnected()
            except KeyboardInterrupt:
                if not cancel_on_interrupt or cancelled:
                    raise
                cancelled = True
                if sys.stderr.isatty():
                    progress.stop()  # the line would hide this one
                    print(
                        f"\nworkbench: cancelling {execution_id} (Ctrl-C again to stop waiting)",
                        file=sys.stderr,
                    )
                http.request(
                    "POST",
                    f"/v1/executions/{execution_id}/cancel",
                    {"reason": "interrupted (Ctrl-C)"},
                    ok=(200, 202),
                )
                output.reconnected()  # the stream is opened again: display output in between is lost
    finally:
        progress.stop()
    for warning in output.finish(http, execution_id):
        print(f"workbench: warning: {warning}", file=sys.stderr)
    assert end is not None
    return end


def cmd_wait(http: Http, args: argparse.Namespace) -> int:
    timeout_ms = duration_ms(args.timeout, "--timeout")
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
    progress = Progress("waiting")
    if progress.enabled:
        import threading

        threading.Thread(target=_feed_progress, args=(http.target, args.id, progress), daemon=True).start()
    try:
        while True:
            left_ms = MAX_WAIT_MS if deadline is None else max(0, round((deadline - time.monotonic()) * 1000))
            left_ms = min(left_ms, MAX_WAIT_MS)
            result = http.json(
                "POST", f"/v1/executions/{args.id}/wait", {"waitTimeoutMs": left_ms}, wait_s=left_ms / 1000
            )
            if not result["waitTimedOut"] or (deadline is not None and time.monotonic() >= deadline):
                break
    finally:
        progress.stop()
    record = result["execution"]
    if args.json:
        print(json.dumps(record, indent=2, ensure_ascii=False))
    if result["waitTimedOut"]:
        print(
            f"workbench: wait timed out: {record['executionId']} is still {record['status']}", file=sys.stderr
        )
        return 124
    if not args.json:
        report(record["executionId"], record)
    return exit_status(record["status"], record.get("exitCode"), record.get("signal"))


def _feed_progress(target: Target, execution_id: str, progress: Progress) -> None:
    """Follow the events in a thread, for the `progress` events of the progress line."""
    try:
        for kind, data in Http(target).stream(execution_id, 0):
            if kind == "event" and data["eventType"] == "progress":
                progress.update(data.get("progress"), data.get("total"), data.get("message"))
    except Exception:  # the line is a nicety: never let it break the wait
        return


def cmd_logs(http: Http, args: argparse.Namespace) -> int:
    streams = ("stdout",) if args.stdout else ("stderr",) if args.stderr else STREAMS
    record = http.json("GET", f"/v1/executions/{args.id}")
    execution_id = record["executionId"]
    terminal = record["status"] in TERMINAL
    if args.follow and not terminal:
        follow(http, record, cancel_on_interrupt=False, label="following", streams=streams)
        return 0
    output = Output(streams)
    artifacts = {a["name"] for a in record["artifacts"]}
    sizes = record["output"]
    need_events = False
    for name in streams:
        if name in artifacts:
            output.from_artifact(name)
        elif sizes.get(f"{name}Bytes", 0) > 0:
            need_events = True
    after = 0
    while need_events:
        page = http.json(
            "GET", f"/v1/executions/{execution_id}/events", query={"after": after, "limit": 10000}
        )
        for event in page["events"]:
            output.event(event)
        if page["terminal"] or page["nextAfter"] == after:
            break
        after = page["nextAfter"]
    # A running execution has no artifacts yet: what the journal holds is all there is to show.
    output.finish(http, execution_id, record if terminal else {"artifacts": []})
    if not terminal and sizes.get("truncated"):
        print(
            f"workbench: {execution_id} is still running and passed the event budget: the rest of its "
            "output will be in its artifacts when it ends (or follow it with -f)",
            file=sys.stderr,
        )
    return 0
