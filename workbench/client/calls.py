"""The requests of the Python client, built and parsed without I/O, so `Client` and `AsyncClient` share them.

Each request is one `Call`: what to send, whether it is safe to send again after a broken
connection, and how to turn the response into a typed result. The methods of the clients
(`workbench.client.methods`) are written from these; the twins only differ in how they send them.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from workbench.client.config import seconds_to_ms
from workbench.client.sse import Frame
from workbench.wire.errors import BY_CODE, InvalidRequest, Unavailable, WorkbenchError
from workbench.wire.fields import DELIVERY_ID, EXECUTION_ID
from workbench.wire.models import (
    ArtifactList,
    CancelResult,
    DetachResult,
    Event,
    EventPage,
    Execution,
    ExecutionList,
    ExitList,
    Health,
    ImageList,
    LiveEvent,
    WaitResult,
)

T = TypeVar("T")

#: An execution as the client methods take it: its id, or a record returned earlier.
ExecutionRef = str | Execution

#: The most the daemon waits in one long-poll (`waitTimeoutMs` at most 600000).
MAX_WAIT_S = 600.0
#: Extra time an HTTP request gets beyond the long-poll it asks the daemon for.
SLACK_S = 30.0
#: A stream that sends nothing for this long is dead (the daemon sends a keepalive every 15 s).
STREAM_READ_S = 45.0


@dataclass(frozen=True)
class Call(Generic[T]):
    """One HTTP request and how to read its answer."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    json: Any = None
    #: A body of raw bytes (a file, an archive) in place of `json`.
    content: bytes | None = None
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: True when sending it twice cannot do anything twice (reads, or a start with an idempotency key).
    retry: bool = True
    #: A delete: resent after a broken connection too, and a `NotFound` to a resend means that the
    #: first try did it (its answer was lost), so it is done.
    deletes: bool = False
    #: Read timeout for this request in seconds (long-polls), or None for the client's default.
    timeout: float | None = None


def execution_id(ref: ExecutionRef) -> str:
    """The id of `ref`; InvalidRequest, before anything is sent, for a text that is no execution id."""
    if isinstance(ref, Execution):
        return ref.execution_id
    return checked_id(ref, EXECUTION_ID, "an execution id (`ex_` + 26 characters)")


def checked_id(value: object, pattern: re.Pattern[str], what: str) -> str:
    """`value` if it is an id `pattern` matches; else InvalidRequest (it would only make a wrong URL)."""
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise InvalidRequest(f"{value!r} is not {what}")
    return value


def segment(name: str) -> str:
    """`name` as one segment of a URL path, escaped (`.` and `..` too, which would be resolved away)."""
    return "%2E" * len(name) if name in (".", "..") else quote(name, safe="")


class UnknownCodeError(WorkbenchError):
    """An error of a code this client does not know (a newer daemon's): `code` is the daemon's."""

    def __init__(self, message: str | None = None, *, details: Any = None, code: str = "internal") -> None:
        super().__init__(message, details=details)
        # An instance's own code, kept in its __dict__: pickling carries it (the class has none).
        self.__dict__["code"] = code


class ClientClosed(WorkbenchError):
    """This client was closed: make another to talk to the daemon."""


def unexpected(response: httpx.Response, exc: Exception) -> WorkbenchError:
    """The error of an answer that is not what the client expects (not the model it should be)."""
    request = response.request
    return WorkbenchError(
        f"the daemon's answer to {request.method} {request.url.path} (HTTP {response.status_code}) "
        f"is not what this client expects: {exc}"
    )


def error_from(response: httpx.Response) -> WorkbenchError:
    """The `WorkbenchError` subclass named by the JSON error of `response` (BY_CODE), with its message."""
    try:
        body = json.loads(response.content)
        error = body["error"]
        code, message, details = str(error["code"]), str(error["message"]), error.get("details")
    except (ValueError, KeyError, TypeError):
        text = response.content[:200].decode("utf-8", "replace").strip()
        return WorkbenchError(
            f"HTTP {response.status_code} from the daemon: {text or response.reason_phrase}"
        )
    cls = BY_CODE.get(code)
    if cls is None:
        # A code this client does not know (a newer daemon): keep it, under the base class.
        return UnknownCodeError(message, details=details, code=code)
    return cls(message, details=details)


def _expect(*statuses: int) -> Callable[[Callable[[httpx.Response], T]], Callable[[httpx.Response], T]]:
    def decorate(read: Callable[[httpx.Response], T]) -> Callable[[httpx.Response], T]:
        def parse(response: httpx.Response) -> T:
            if response.status_code not in statuses:
                raise error_from(response)
            return read(response)

        return parse

    return decorate


#: The response check of a call: raises the API's error unless the status is one of `statuses`.
expect = _expect


def unreachable(url: str, exc: Exception) -> Unavailable:
    """The error raised when the daemon cannot be reached or stops answering."""
    reason, cause = str(exc), exc.__cause__ or exc.__context__
    while not reason and cause is not None:  # httpx's own errors may say nothing, their causes do
        reason, cause = str(cause), cause.__cause__ or cause.__context__
    reason = reason or type(exc).__name__
    if "CERTIFICATE_VERIFY_FAILED" in reason:
        return Unavailable(
            f"cannot trust the daemon at {url}: {reason} (pass ca_file= or set WORKBENCH_TLS_CA to the "
            "certificate of the CA that signed its certificate)"
        )
    return Unavailable(f"cannot reach the daemon at {url}: {reason}")


# -- starting ----------------------------------------------------------------------------------


def start_body(
    *,
    background: bool,
    wait_timeout: float | None,
    timeout: float | None,
    idle_timeout: float | None,
    cwd: str | None,
    env: Mapping[str, str] | None,
    stdin: str | None,
    metadata: Any,
    image: str | None,
    session_id: str | None,
    detached: bool,
    preview_bytes: int | None = None,
    preview_format: str | None = None,
    on_wait_timeout: str = "return",
    secret_env: Mapping[str, str] | None = None,
    open_stdin: bool = False,
    tty: bool | tuple[int, int] = False,
    persist_shell: bool = False,
    node: str | None = None,
) -> dict[str, Any]:
    """The common fields of a start body, camelCase, leaving out what the daemon defaults.

    Raises ValueError for an `on_wait_timeout` other than `return` without a `wait_timeout` the
    daemon can hold in one wait: it would act when the daemon's wait ends, not the caller's.
    """
    body: dict[str, Any] = {"background": background}
    if on_wait_timeout != "return":
        if background or wait_timeout is None or wait_timeout > MAX_WAIT_S:
            raise ValueError(
                f"on_wait_timeout={on_wait_timeout!r} needs a foreground start with a wait_timeout "
                f"of at most {MAX_WAIT_S:g} seconds"
            )
        body["onWaitTimeout"] = on_wait_timeout
    if not background:
        wait_ms = seconds_to_ms(MAX_WAIT_S if wait_timeout is None else min(wait_timeout, MAX_WAIT_S))
        body["waitTimeoutMs"] = wait_ms
    optional = {
        "timeoutMs": seconds_to_ms(timeout),
        "idleTimeoutMs": seconds_to_ms(idle_timeout),
        "cwd": cwd,
        "env": dict(env) if env else None,
        "secretEnv": dict(secret_env) if secret_env else None,
        "stdin": stdin,
        "metadata": metadata,
        "image": image,
        "sessionId": session_id,
        "previewBytes": preview_bytes,
        "previewFormat": preview_format,
        "node": node,
    }
    body.update({k: v for k, v in optional.items() if v is not None})
    if detached:
        body["detached"] = True
    if open_stdin:
        body["openStdin"] = True
    if tty is not False:
        body["tty"] = True
        if isinstance(tty, tuple):
            body["ttySize"] = {"rows": tty[0], "cols": tty[1]}
    if persist_shell:
        body["persistShell"] = True
    return body


def start(kind: str, body: dict[str, Any], idempotency_key: str | None) -> Call[Execution]:
    """`POST /v1/executions/{kind}`. Without a key the client makes one, so a retry never runs it twice."""
    return _starting(f"/v1/executions/{kind}", body, idempotency_key)


def batch(body: dict[str, Any], idempotency_key: str | None) -> Call[Execution]:
    """`POST /v1/executions/batch`, with an idempotency key as a start has."""
    return _starting("/v1/executions/batch", body, idempotency_key)


def rerun(ref: ExecutionRef, body: dict[str, Any], idempotency_key: str | None) -> Call[Execution]:
    """`POST .../rerun`, with an idempotency key as a start has."""
    return _starting(f"/v1/executions/{execution_id(ref)}/rerun", body, idempotency_key)


def _starting(path: str, body: dict[str, Any], idempotency_key: str | None) -> Call[Execution]:
    key = idempotency_key or f"wbc-{uuid.uuid4().hex}"

    @_expect(200, 201, 202)
    def parse(response: httpx.Response) -> Execution:
        return Execution.model_validate_json(response.content)

    wait_ms = body.get("waitTimeoutMs")
    timeout = None if body.get("background") or wait_ms is None else wait_ms / 1000 + SLACK_S
    return Call("POST", path, parse, json=body, headers={"Idempotency-Key": key}, timeout=timeout)


# -- reading -----------------------------------------------------------------------------------


@_expect(200)
def _execution(response: httpx.Response) -> Execution:
    return Execution.model_validate_json(response.content)


def get(ref: ExecutionRef) -> Call[Execution]:
    return Call("GET", f"/v1/executions/{execution_id(ref)}", _execution)


def list_page(
    *,
    status: str | None,
    kind: str | None,
    session_id: str | None,
    limit: int,
    cursor: str | None,
    preview: bool = False,
    rerun_of: str | None = None,
    batch_id: str | None = None,
) -> Call[ExecutionList]:
    params = {
        "status": status,
        "kind": kind,
        "sessionId": session_id,
        "limit": limit,
        "cursor": cursor,
        "include": "preview" if preview else None,
        "rerunOf": rerun_of,
        "batchId": batch_id,
    }

    @_expect(200)
    def parse(response: httpx.Response) -> ExecutionList:
        return ExecutionList.model_validate_json(response.content)

    return Call("GET", "/v1/executions", parse, params={k: v for k, v in params.items() if v is not None})


def service_fields(
    service: bool, ready_port: int | None, ready_log: str | None, ready_timeout: float | None
) -> dict[str, Any]:
    """The start-body fields of a service (`service`, `readiness`, `readyTimeoutMs`).

    Raises ValueError for readiness options without `service`, or both a port and a pattern.
    """
    if not service:
        if ready_port is not None or ready_log is not None or ready_timeout is not None:
            raise ValueError("ready_port, ready_log and ready_timeout need service=True")
        return {}
    if ready_port is not None and ready_log is not None:
        raise ValueError("a service is ready by ready_port or by ready_log, not both")
    body: dict[str, Any] = {"service": True}
    if ready_port is not None:
        body["readiness"] = {"port": ready_port}
    elif ready_log is not None:
        body["readiness"] = {"logPattern": ready_log}
    if ready_timeout is not None:
        if "readiness" not in body:
            raise ValueError("ready_timeout needs ready_port or ready_log")
        body["readyTimeoutMs"] = seconds_to_ms(ready_timeout)
    return body


def wait_once(ref: ExecutionRef, wait_s: float, until: str = "end") -> Call[WaitResult]:
    """One long-poll of at most `MAX_WAIT_S` (`until`: `end`, or `ready` for a service)."""
    wait_s = max(0.0, min(wait_s, MAX_WAIT_S))

    @_expect(200)
    def parse(response: httpx.Response) -> WaitResult:
        return WaitResult.model_validate_json(response.content)

    return Call(
        "POST",
        f"/v1/executions/{execution_id(ref)}/wait",
        parse,
        json={"waitTimeoutMs": seconds_to_ms(wait_s), **({"until": until} if until != "end" else {})},
        timeout=wait_s + SLACK_S,
    )


def events_page(ref: ExecutionRef, after: int, limit: int = 1000) -> Call[EventPage]:
    @_expect(200)
    def parse(response: httpx.Response) -> EventPage:
        return EventPage.model_validate_json(response.content)

    return Call(
        "GET", f"/v1/executions/{execution_id(ref)}/events", parse, params={"after": after, "limit": limit}
    )


@_expect(200)
def _stream_head(response: httpx.Response) -> httpx.Response:
    return response


def stream(ref: ExecutionRef, after: int, read_s: float = STREAM_READ_S) -> Call[httpx.Response]:
    """`GET .../events/stream` from sequence `after`; its parse raises the error of a refused stream.

    `read_s`: how long a read may wait for the next bytes before the stream counts as broken.
    """
    return Call(
        "GET",
        f"/v1/executions/{execution_id(ref)}/events/stream",
        _stream_head,
        headers={"Last-Event-ID": str(after)},
        timeout=read_s,
    )


def stream_event(frame: Frame) -> Event | LiveEvent | None:
    """The event a stream frame carries (None for a frame Workbench does not send)."""
    if frame.id is not None:
        return Event.model_validate_json(frame.data)
    if frame.event == "gap":
        missed = json.loads(frame.data).get("missedBytes") if frame.data else None
        return LiveEvent(event_type="gap", missed_bytes=missed)
    if frame.event == "output":
        data = json.loads(frame.data)
        return LiveEvent(
            event_type="output",
            timestamp=data.get("timestamp"),
            stream=data.get("stream"),
            output_delta=data.get("outputDelta"),
        )
    return None


def is_last(event: Event | LiveEvent) -> bool:
    """True for the terminal status event, the last event of an execution."""
    return isinstance(event, Event) and event.event_type == "status" and event.status.terminal


def artifacts(ref: ExecutionRef) -> Call[ArtifactList]:
    @_expect(200)
    def parse(response: httpx.Response) -> ArtifactList:
        return ArtifactList.model_validate_json(response.content)

    return Call("GET", f"/v1/executions/{execution_id(ref)}/artifacts", parse)


def artifact(ref: ExecutionRef, name: str, start: int = 0, end: int | None = None) -> Call[bytes]:
    """The bytes of artifact `name`, from byte `start` to `end` (exclusive; None: to the end)."""
    headers: dict[str, str] = {}
    if start or end is not None:
        headers["Range"] = f"bytes={start}-{'' if end is None else end - 1}"

    def parse(response: httpx.Response) -> bytes:
        if response.status_code == 416:
            return b""  # asked from the end (or beyond): nothing more to read
        if response.status_code not in (200, 206):
            raise error_from(response)
        return response.content

    return Call("GET", artifact_path(ref, name), parse, headers=headers)


def artifact_path(ref: ExecutionRef, name: str) -> str:
    return f"/v1/executions/{execution_id(ref)}/artifacts/{segment(name)}"


def images() -> Call[ImageList]:
    @_expect(200)
    def parse(response: httpx.Response) -> ImageList:
        return ImageList.model_validate_json(response.content)

    return Call("GET", "/v1/images", parse)


def health() -> Call[Health]:
    @_expect(200)
    def parse(response: httpx.Response) -> Health:
        return Health.model_validate_json(response.content)

    return Call("GET", "/healthz", parse)


def exits(limit: int, wait_timeout: float, lease: float | None) -> Call[ExitList]:
    wait_s = max(0.0, min(wait_timeout, MAX_WAIT_S))
    params: dict[str, Any] = {"limit": limit, "waitTimeoutMs": seconds_to_ms(wait_s)}
    if lease is not None:
        params["leaseMs"] = seconds_to_ms(lease)

    @_expect(200)
    def parse(response: httpx.Response) -> ExitList:
        return ExitList.model_validate_json(response.content)

    # Handing out exits leases them; a resent request only hands out what is still unleased.
    return Call("GET", "/v1/exits", parse, params=params, timeout=wait_s + SLACK_S)


# -- changing ----------------------------------------------------------------------------------


def cancel(ref: ExecutionRef, reason: str | None, grace: float | None) -> Call[CancelResult]:
    body: dict[str, Any] = {}
    if reason is not None:
        body["reason"] = reason
    if grace:
        body["graceMs"] = seconds_to_ms(grace)

    @_expect(200, 202)
    def parse(response: httpx.Response) -> CancelResult:
        return CancelResult.model_validate_json(response.content)

    timeout = (grace or 0) + SLACK_S
    return Call("POST", f"/v1/executions/{execution_id(ref)}/cancel", parse, json=body, timeout=timeout)


def detach(ref: ExecutionRef) -> Call[DetachResult]:
    @_expect(200)
    def parse(response: httpx.Response) -> DetachResult:
        return DetachResult.model_validate_json(response.content)

    return Call("POST", f"/v1/executions/{execution_id(ref)}/detach", parse)


def delete(ref: ExecutionRef) -> Call[None]:
    @_expect(204, 200)
    def parse(response: httpx.Response) -> None:
        return None

    return Call("DELETE", f"/v1/executions/{execution_id(ref)}", parse, deletes=True)


def ack_exit(delivery_id: str) -> Call[None]:
    @_expect(204, 200)
    def parse(response: httpx.Response) -> None:
        return None

    delivery_id = checked_id(delivery_id, DELIVERY_ID, "a delivery id (`dl_` + 26 characters)")
    return Call("POST", f"/v1/exits/{delivery_id}/ack", parse)
