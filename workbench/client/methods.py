"""Every public method of `Client` and `AsyncClient`, written once: its signature, docstring and plan.

Each function here is a method of both clients with `client` in place of `self`; `Client` runs its
plan blocking and `AsyncClient` awaited (see `workbench.client.plan`). The requests themselves are
described in `workbench.client.calls`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from workbench.client import calls
from workbench.client.base import Base
from workbench.client.calls import ExecutionRef
from workbench.client.config import seconds_to_ms
from workbench.client.plan import (
    Plan,
    consume,
    method,
    send,
)
from workbench.client.reading import _follow, get, wait
from workbench.wire.models import (
    CancelResult,
    DetachResult,
    Event,
    Execution,
    Exit,
    LiveEvent,
    OnWaitTimeout,
    PreviewFormat,
)

#: A callback of `run_bash`/`run_code` that takes each piece of a stream's text as it comes.
Output = Callable[[str], object]

# -- starting ---------------------------------------------------------------------------------


@method
def run_bash(
    client: Base,
    command: str,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    metadata: Any = None,
    image: str | None = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
    preview_bytes: int | None = None,
    preview_format: PreviewFormat | None = None,
    on_wait_timeout: OnWaitTimeout = "return",
    on_stdout: Output | None = None,
    on_stderr: Output | None = None,
    secret_env: Mapping[str, str] | None = None,
    service: bool = False,
    ready_port: int | None = None,
    ready_log: str | None = None,
    ready_timeout: float | None = None,
    open_stdin: bool = False,
    tty: bool | tuple[int, int] = False,
    persist_shell: bool = False,
    node: str | None = None,
) -> Plan[Execution]:
    """Start `command` (run by bash) and return its record (docs/python.md tells each option).

    With `background=True` the record comes back at once; otherwise this waits for the end, at
    most `wait_timeout` seconds if given (then `on_wait_timeout`: `"return"` the record, `"detach"`
    or `"cancel"` the run). `timeout` is its deadline from acceptance, `idle_timeout` ends it after
    that long without output; one `idempotency_key` never runs twice; `secret_env` is like `env`
    but never returned or stored. `cwd` defaults to the session's workspace. The record's `preview`
    holds the head and tail of its output (`preview_bytes`, `preview_format="plain"`).
    `on_stdout`/`on_stderr` get each piece of text as it is written (they should not block).

    `service=True`: it stays up, ready once its tree listens on `ready_port`, a line matches
    `ready_log`, or it runs; killed if not ready within `ready_timeout` (60 s); unless
    `background`, this returns once it is ready or ended. `open_stdin=True` keeps stdin open for
    `send_input`; `tty=True` (or `(rows, cols)`) runs it on a terminal; `persist_shell=True`
    carries its session's shell directory and exported variables from one command to the next.
    `node` runs it on that node of a shared store only (`WORKBENCH_NODE_ID`).
    """
    service_body = calls.service_fields(service, ready_port, ready_log, ready_timeout)
    body = calls.start_body(
        background=background,
        wait_timeout=wait_timeout,
        timeout=timeout,
        idle_timeout=idle_timeout,
        cwd=cwd,
        env=env,
        stdin=stdin,
        metadata=metadata,
        image=image,
        session_id=session_id,
        detached=detached,
        preview_bytes=preview_bytes,
        preview_format=preview_format,
        on_wait_timeout=on_wait_timeout,
        secret_env=secret_env,
        open_stdin=open_stdin,
        tty=tty,
        persist_shell=persist_shell,
        node=node,
    )
    body = {"command": command, **body}
    output = _outputs(on_stdout, on_stderr)
    if service_body:
        return (yield from _start_service(client, {**body, **service_body}, idempotency_key, wait_timeout))
    return (yield from _start(client, "workbench_bash", body, idempotency_key, wait_timeout, output))


@method
def run_code(
    client: Base,
    language: str,
    code: str,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    metadata: Any = None,
    image: str | None = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
    preview_bytes: int | None = None,
    preview_format: PreviewFormat | None = None,
    on_wait_timeout: OnWaitTimeout = "return",
    on_stdout: Output | None = None,
    on_stderr: Output | None = None,
    secret_env: Mapping[str, str] | None = None,
    context_id: str | None = None,
    open_stdin: bool = False,
    tty: bool | tuple[int, int] = False,
    node: str | None = None,
) -> Plan[Execution]:
    """Run `code` in `language` (`python`, `bash`, `sh`, ... as the image has them); as `run_bash`.

    `context_id`: run it in that code context (`create_context`), whose names persist; the
    record's `result` then holds the value of the code's final expression."""
    body = calls.start_body(
        background=background,
        wait_timeout=wait_timeout,
        timeout=timeout,
        idle_timeout=idle_timeout,
        cwd=cwd,
        env=env,
        stdin=stdin,
        metadata=metadata,
        image=image,
        session_id=session_id,
        detached=detached,
        preview_bytes=preview_bytes,
        preview_format=preview_format,
        on_wait_timeout=on_wait_timeout,
        secret_env=secret_env,
        open_stdin=open_stdin,
        tty=tty,
        node=node,
    )
    body = {"language": language, "code": code, **body}
    if context_id is not None:
        body["contextId"] = context_id
    output = _outputs(on_stdout, on_stderr)
    return (yield from _start(client, "workbench_code", body, idempotency_key, wait_timeout, output))


def _outputs(on_stdout: Output | None, on_stderr: Output | None) -> dict[str, Output] | None:
    given = {"stdout": on_stdout, "stderr": on_stderr}
    return {name: fn for name, fn in given.items() if fn is not None} or None


@method
def run_batch(
    client: Base,
    items: Sequence[Mapping[str, Any]],
    *,
    concurrency: int | None = None,
    fail_fast: bool = False,
    background: bool = False,
    wait_timeout: float | None = None,
    timeout: float | None = None,
    metadata: Any = None,
    session_id: str | None = None,
    detached: bool = False,
    idempotency_key: str | None = None,
) -> Plan[Execution]:
    """Start a batch of executions, accepted all or none, and return the batch's record.

    Each item is a start body as the API takes it, with its `kind`: `{"kind": "workbench_bash",
    "command": "make"}` or `{"kind": "workbench_code", "language": "python", "code": "..."}`,
    and any other start field (`cwd`, `env`, `timeoutMs`, ...). At most `concurrency` run at
    once; with `fail_fast` the first item that does not complete cancels the rest. The batch
    ends `completed`, `failed`, `partial_failed`, `cancelled` or `timed_out` (`timeout`: its
    deadline in seconds, which no item outlives). Waits like `run_bash`.
    """
    body: dict[str, Any] = {"items": [dict(item) for item in items], "background": background}
    if not background:
        body["waitTimeoutMs"] = seconds_to_ms(
            calls.MAX_WAIT_S if wait_timeout is None else min(wait_timeout, calls.MAX_WAIT_S)
        )
    optional = {
        "concurrency": concurrency,
        "timeoutMs": seconds_to_ms(timeout),
        "metadata": metadata,
        "sessionId": session_id,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if fail_fast:
        body["failFast"] = True
    if detached:
        body["detached"] = True
    return (yield from _started(client, calls.batch(body, idempotency_key), background, wait_timeout))


@method
def rerun(
    client: Base,
    execution: ExecutionRef,
    *,
    background: bool = False,
    wait_timeout: float | None = None,
    command: str | None = None,
    code: str | None = None,
    timeout: float | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    secret_env: Mapping[str, str] | None = None,
    stdin: str | None = None,
    image: str | None = None,
    session_id: str | None = None,
    idempotency_key: str | None = None,
) -> Plan[Execution]:
    """Start a new execution with the same spec as `execution` (its stdin too) and return it.

    Each argument given replaces the original's; `secret_env` must give again the values of
    the original's `secret_env_names` (they are never kept). The new record's `rerun_of` names
    the original. Waits like `run_bash`.
    """
    body: dict[str, Any] = {"background": background}
    if not background:
        body["waitTimeoutMs"] = seconds_to_ms(
            calls.MAX_WAIT_S if wait_timeout is None else min(wait_timeout, calls.MAX_WAIT_S)
        )
    optional = {
        "command": command,
        "code": code,
        "timeoutMs": seconds_to_ms(timeout),
        "cwd": cwd,
        "env": dict(env) if env is not None else None,
        "secretEnv": dict(secret_env) if secret_env else None,
        "stdin": stdin,
        "image": image,
        "sessionId": session_id,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    call = calls.rerun(execution, body, idempotency_key)
    return (yield from _started(client, call, background, wait_timeout))


def _started(
    client: Base, call: calls.Call[Execution], background: bool, wait_timeout: float | None
) -> Plan[Execution]:
    began = time.monotonic()
    execution = yield from send(client, call)
    if background or execution.terminal:
        return execution
    left = None if wait_timeout is None else wait_timeout - (time.monotonic() - began)
    if left is not None and left <= 0:
        return execution
    return (yield from wait(client, execution, timeout=left))


def _start(
    client: Base,
    kind: str,
    body: dict[str, Any],
    key: str | None,
    wait_timeout: float | None,
    output: dict[str, Output] | None,
) -> Plan[Execution]:
    began = time.monotonic()
    if output is not None and not body["background"]:
        return (yield from _start_following(client, kind, body, key, wait_timeout, output))
    execution = yield from send(client, calls.start(kind, body, key))
    # The daemon has done what `onWaitTimeout` asked for when its wait passed.
    if body["background"] or execution.terminal or "onWaitTimeout" in body:
        return execution
    # The start's long-poll is capped (`MAX_WAIT_S`): an unfinished run may still have time left.
    left = None if wait_timeout is None else wait_timeout - (time.monotonic() - began)
    if left is not None and left <= 0:
        return execution
    return (yield from wait(client, execution, timeout=left))


def _start_service(
    client: Base, body: dict[str, Any], key: str | None, wait_timeout: float | None
) -> Plan[Execution]:
    """A service: started in the background, then (unless `background`) waited for until ready."""
    background = body["background"]
    started = {k: v for k, v in body.items() if k not in ("waitTimeoutMs", "onWaitTimeout")}
    execution = yield from send(client, calls.start("workbench_bash", {**started, "background": True}, key))
    if background or execution.ready or execution.terminal:
        return execution
    return (yield from wait(client, execution, timeout=wait_timeout, until="ready"))


def _start_following(
    client: Base,
    kind: str,
    body: dict[str, Any],
    key: str | None,
    wait_timeout: float | None,
    output: dict[str, Output],
) -> Plan[Execution]:
    """A foreground start whose output is handed to callbacks as it comes: started in the
    background and followed on the event stream, within `wait_timeout`, then `onWaitTimeout`."""
    began = time.monotonic()
    action = body.get("onWaitTimeout", "return")
    background = {k: v for k, v in body.items() if k not in ("waitTimeoutMs", "onWaitTimeout")}
    execution = yield from send(client, calls.start(kind, {**background, "background": True}, key))
    deadline = None if wait_timeout is None else began + wait_timeout
    ended = False

    def take(event: Event | LiveEvent) -> bool:
        nonlocal ended
        if event.event_type == "output" and event.output_delta and event.stream in output:
            output[event.stream](event.output_delta)
        ended = calls.is_last(event)
        return True

    yield from consume(_follow(client, execution, 0, True, deadline), take)
    if not ended and action == "detach":
        detached = yield from detach(client, execution)
        if detached.execution is not None:
            return detached.execution
    elif not ended and action == "cancel":
        yield from cancel(client, execution, "the wait passed (on_wait_timeout: cancel)")
        return (yield from wait(client, execution))
    return (yield from get(client, execution))


# -- changing ---------------------------------------------------------------------------------


@method
def ack_exit(client: Base, delivery: Exit | str) -> Plan[None]:
    """Mark an exit delivered: it is never handed out again."""
    delivery_id = delivery.delivery_id if isinstance(delivery, Exit) else delivery
    yield from send(client, calls.ack_exit(delivery_id))


@method
def cancel(
    client: Base, execution: ExecutionRef, reason: str | None = None, *, grace: float | None = None
) -> Plan[CancelResult]:
    """Cancel: kill the whole tree (SIGTERM and `grace` seconds first, when given).

    `cancelled` is False when it had already ended; its outcome then stands.
    """
    return (yield from send(client, calls.cancel(execution, reason, grace)))


@method
def detach(client: Base, execution: ExecutionRef) -> Plan[DetachResult]:
    """Hand the outcome to the exits feed (or get the record if it had already ended)."""
    return (yield from send(client, calls.detach(execution)))


@method
def delete(client: Base, execution: ExecutionRef) -> Plan[None]:
    """Dispose of an ended execution and its files; Conflict while it runs."""
    yield from send(client, calls.delete(execution))
