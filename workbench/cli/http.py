"""The CLI's HTTP: a plain-socket HTTP/1.1 client (`_cli_wire`), JSON as dicts, errors as `WorkbenchError`s.

The CLI does not use the Python client (httpx and pydantic), nor `http.client`: importing them
costs several times the interpreter's own start, and `workbench run -- true` must stay cheap.
The wire is the same.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

from workbench.cli.wire import Connection, ProtocolError, Response
from workbench.client.config import Target

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time: it costs the CLI's start
    from typing import Any, Protocol

    class Sink(Protocol):
        """Where downloaded bytes go (a binary file, or a hasher)."""

        def write(self, data: bytes, /) -> object: ...


#: Socket timeout of ordinary requests, in seconds (long-polls add their wait).
TIMEOUT_S = 30.0
#: A stream that sends nothing for this long is dead (the daemon sends a keepalive every 15 s).
STREAM_IDLE_S = 45.0
#: How long a follower keeps reconnecting to a daemon that went away, in seconds.
RECONNECT_FOR_S = 60.0
_TERMINAL = frozenset({"completed", "failed", "cancelled", "timed_out", "partial_failed"})


class ApiError(Exception):
    """An error the CLI reports: the API's error code and message (`unavailable` when unreachable).

    The CLI does not import `workbench.wire.errors` (nor `typing`, which it pulls in) to start faster;
    the codes are the same.
    """

    def __init__(self, code: str, message: str, status: int = 0, details: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.status, self.details = code, message, status, details


class Unreachable(ApiError):
    """`unavailable`: no connection to the daemon could be made, or it broke before the answer."""

    def __init__(self, message: str) -> None:
        super().__init__("unavailable", message)


def daemon_away(error: ApiError) -> bool:
    """Whether `error` says the daemon is away for now (stopping, restarting, unreachable), so
    that asking again later may work: a follower or a wait keeps asking for `RECONNECT_FOR_S`."""
    return isinstance(error, Unreachable) or (error.code == "unavailable" and error.status == 503)


class Reply:
    """A whole response: status, headers (lowercase names) and body."""

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status, self.headers, self.body = status, headers, body

    def json(self) -> Any:
        return json.loads(self.body)


def error_of(status: int, body: bytes) -> ApiError | None:
    """The error of a JSON error body (its code and message); None when it is not one."""
    try:
        error = json.loads(body)["error"]
        return ApiError(str(error["code"]), str(error["message"]), status, error.get("details"))
    except (ValueError, KeyError, TypeError):
        return None


def authority(url: str) -> tuple[str, int | None]:
    """(host, port) of an `http(s)://` URL, as `urllib.parse.urlsplit` gives them (its import
    costs a CLI command 4 ms: the start path does without it). Raises ValueError for a port
    that is not one."""
    rest = url.partition("://")[2].partition("/")[0].rpartition("@")[2]
    if rest.startswith("["):  # an IPv6 address
        host, _, tail = rest[1:].partition("]")
        port = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port = rest.partition(":")
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        raise ValueError(f"bad port in {url!r}")
    return host.lower(), int(port) if port else None


class Http:
    """Requests to one daemon over one keep-alive connection; streams and downloads get their own."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._tls = target.base_url.startswith("https://")
        host, port = authority(target.base_url)
        self._host = host or "127.0.0.1"
        self._port = port or (443 if self._tls else 80)
        self._conn: Connection | None = None
        self._headers = {"Accept": "application/json", **target.headers()}

    def _new(self) -> Connection:
        return Connection(
            self._host,
            self._port,
            unix_path=self.target.socket_path,
            tls=self._tls,
            ca_file=self.target.ca_file,
        )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def not_workbench(self, what: str) -> ApiError:
        """The error for an answer that no Workbench daemon gives (another server at that URL)."""
        return ApiError(
            "unavailable",
            f"{self.target.display_url} is not a Workbench daemon: {what} (check --url or WORKBENCH_URL)",
        )

    def unreachable(self, exc: BaseException) -> ApiError:
        if isinstance(exc, ProtocolError) and str(exc).startswith("not an HTTP answer"):
            return self.not_workbench("it does not answer HTTP")
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
        if "CERTIFICATE_VERIFY_FAILED" in reason:
            return ApiError(
                "unavailable",
                f"cannot trust the daemon at {self.target.display_url}: {reason} (set WORKBENCH_TLS_CA "
                "to the certificate of the CA that signed its certificate)",
            )
        return Unreachable(
            f"cannot reach the daemon at {self.target.display_url}: {reason[:1].lower()}{reason[1:]} "
            "(is it running? start it with `workbench serve`, or set WORKBENCH_URL)",
        )

    def _raise(self, status: int, headers: dict[str, str], body: bytes) -> None:
        error = error_of(status, body)
        if error is None:
            kind = headers.get("content-type", "no content type").partition(";")[0]
            raise self.not_workbench(f"it answered HTTP {status} ({kind})")
        if error.code == "unauthorized" and self.target.token is None:
            error = ApiError(
                "unauthorized",
                f"{error.message} (no token found: set WORKBENCH_TOKEN or pass --token, or run the daemon "
                "with the same WORKBENCH_DATA_DIR)",
            )
        raise error

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        query: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        ok: tuple[int, ...] = (200,),
        wait_s: float = 0.0,
        resend: bool = True,
        content: bytes | None = None,
    ) -> Reply:
        """Send one request; raises the API's error (any status outside `ok`) or Unavailable.

        When a kept-alive connection turns out closed by the daemon, the request goes again on a
        new one if `resend` (never for a start without an idempotency key: it could run twice).
        """
        if query:
            from urllib.parse import urlencode  # not on `run`'s path: it costs the start 4 ms

            path += "?" + urlencode({k: v for k, v in query.items() if v is not None})
        all_headers = dict(self._headers)
        data: bytes | None = None
        if body is not None:
            data = json.dumps(body).encode()
            all_headers["Content-Type"] = "application/json"
        elif content is not None:
            data = content
            all_headers["Content-Type"] = "application/octet-stream"
        if headers:
            all_headers.update(headers)
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = self._new()
            conn = self._conn
            reused = conn.used > 0
            try:
                response = conn.send(method, path, all_headers, data, TIMEOUT_S + wait_s)
                payload = response.read_all()
                response.close()
            except OSError as exc:
                self.close()
                if attempt == 1 and reused and resend:
                    continue
                raise self.unreachable(exc) from None
            except BaseException:
                self.close()  # a signal mid-answer: the connection's state is unknown
                raise
            if not response.keep_alive:
                self.close()
            if response.status not in ok:
                self._raise(response.status, response.headers, payload)
            return Reply(response.status, response.headers, payload)
        raise AssertionError("unreachable")

    def request_bytes(self, method: str, path: str, content: bytes, **kw: Any) -> Reply:
        """`request` with a body of raw bytes (`application/octet-stream`), never resent."""
        return self.request(method, path, None, content=content, resend=False, **kw)

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        reply = self.request(method, path, body, **kw)
        try:
            value = reply.json()
        except ValueError:
            kind = reply.headers.get("content-type", "no content type").partition(";")[0]
            raise self.not_workbench(f"it answered HTTP {reply.status} ({kind}), not JSON") from None
        if not isinstance(value, dict):
            raise self.not_workbench(f"it answered HTTP {reply.status} with JSON that is not an object")
        return value

    def _open(self, path: str, headers: dict[str, str], timeout: float) -> Response:
        conn = self._new()
        try:
            return conn.send("GET", path, {**self._headers, **headers}, None, timeout)
        except OSError as exc:
            conn.close()
            raise self.unreachable(exc) from None

    def download(self, path: str, out: Sink, start: int = 0, end: int | None = None) -> int:
        """Copy the bytes at `path` from `start` to `end` (exclusive; None: the end) into `out`.

        Uses a Range request when not from the start; returns how many bytes it copied.
        """
        headers = {}
        if start or end is not None:
            headers["Range"] = f"bytes={start}-{'' if end is None else end - 1}"
        response = self._open(path, headers, TIMEOUT_S)
        try:
            if response.status == 416:
                return 0
            if response.status not in (200, 206):
                self._raise(response.status, response.headers, response.read_all())
            count = 0
            try:
                while chunk := response.read():
                    out.write(chunk)
                    count += len(chunk)
            except OSError as exc:
                raise self.unreachable(exc) from None
            return count
        finally:
            response.discard()

    def stream(self, execution_id: str, after: int) -> Iterator[tuple[str, Any]]:
        """Follow an execution's SSE stream to its terminal event, reconnecting as needed.

        Yields `("event", event)` for each journal event after `after` (gapless, no duplicate),
        `("live", event)` for display output past the budget, `("gap", data)` when display output
        was missed, and `("reconnected", None)` after a new connection replaced a broken one.
        Raises the API's error for a refused stream, Unavailable after `RECONNECT_FOR_S` of failures.
        """
        from urllib.parse import quote

        from workbench.client.sse import FrameReader  # only for a stream

        path = f"/v1/executions/{quote(execution_id)}/events/stream"
        last = after
        failing_since: float | None = None
        delay = 0.05
        broken_before = False
        while True:
            error: BaseException | None = None
            response: Response | None = None
            try:
                response = self._open(
                    path, {"Accept": "text/event-stream", "Last-Event-ID": str(last)}, STREAM_IDLE_S
                )
                if response.status == 204:
                    return  # reconnected after the terminal event: nothing more will come
                if response.status != 200:
                    body = response.read_all()
                    if response.status != 503:
                        self._raise(response.status, response.headers, body)
                    raise error_of(response.status, body) or ApiError("unavailable", "HTTP 503", 503)
                if broken_before:
                    yield ("reconnected", None)
                reader = FrameReader()
                while raw := response.readline():
                    frame = reader.line(raw.decode("utf-8").rstrip("\r\n"))
                    if frame is None:
                        continue
                    if frame.id is not None:
                        if frame.id <= last:
                            continue
                        event = json.loads(frame.data)
                        last, failing_since, delay = frame.id, None, 0.05
                        yield ("event", event)
                        if event["eventType"] == "status" and event["status"] in _TERMINAL:
                            return
                    elif frame.event in ("output", "gap"):
                        yield ("live" if frame.event == "output" else "gap", json.loads(frame.data or "{}"))
            except OSError as exc:
                error = exc
            except ApiError as exc:
                if exc.code != "unavailable":
                    raise
                error = exc
            finally:
                if response is not None:
                    response.discard()
            # The stream ended before the terminal event: the daemon stopped or the link broke.
            broken_before = True
            now = time.monotonic()
            failing_since = failing_since if failing_since is not None else now
            if now - failing_since > RECONNECT_FOR_S:
                if isinstance(error, ApiError):  # already the line to print (unreachable, or a 503)
                    raise error
                raise self.unreachable(error or ConnectionError("the event stream ended early"))
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
