"""What `Client` and `AsyncClient` share besides their methods: settings, and the state of a follow."""

from __future__ import annotations

import ssl
import time
from functools import cache
from typing import Any

import httpx

from workbench.client import calls
from workbench.client.calls import Call
from workbench.client.config import Target, resolve
from workbench.client.sse import Frame
from workbench.wire.errors import WorkbenchError
from workbench.wire.models import Event, LiveEvent

BACKOFF_FIRST_S = 0.05
BACKOFF_MAX_S = 2.0


@cache
def no_certificates() -> ssl.SSLContext:
    """The TLS context of a client of a daemon without TLS: it trusts no certificate at all.

    Left to itself, httpx loads the system's certificate store for every client it makes, which
    costs about 30 ms of CPU, for connections that never use TLS. This context loads none and
    still requires a verified certificate, so a TLS connection made through it would fail, never
    pass unchecked. One, shared: httpx only reads it."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class Base:
    """Settings of a client: the daemon found, default timeout, how long to keep reconnecting."""

    def __init__(
        self,
        url: str | None,
        token: str | None,
        timeout: float,
        reconnect_for: float,
        ca_file: str | None = None,
    ) -> None:
        self._target: Target = resolve(url, token, ca_file=ca_file)
        self._timeout = timeout
        self._reconnect_for = reconnect_for

    def _verify(self) -> ssl.SSLContext | bool:
        """What httpx verifies an `https://` daemon with: `ca_file`/`$WORKBENCH_TLS_CA`, else the
        system's store. A plain `http://` or Unix-socket daemon gets `no_certificates()`."""
        if not self._target.tls:
            return no_certificates()
        if self._target.ca_file:
            return ssl.create_default_context(cafile=self._target.ca_file)
        return True

    @property
    def url(self) -> str:
        """The daemon's URL (`unix:///...` for a Unix socket)."""
        return self._target.display_url

    def _request_args(self, call: Call[Any]) -> dict[str, Any]:
        read = call.timeout if call.timeout is not None else self._timeout
        return {
            "json": call.json,
            "content": call.content,
            "params": call.params,
            "headers": call.headers,
            "timeout": httpx.Timeout(self._timeout, read=read),
        }

    def _follow(self, after: int, live: bool) -> Follow:
        return Follow(self.url, after, live, self._reconnect_for)


class Follow:
    """The state of one `events()` follow: where to resume, what to drop, when to give up."""

    def __init__(self, url: str, after: int, live: bool, reconnect_for: float) -> None:
        self.url = url
        self.last = after
        self.live = live
        self.reconnect_for = reconnect_for
        self.truncated = False
        #: Whether a stream was ever opened: before that, a daemon that cannot be reached is an error
        #: at once (nothing to resume), not a reason to keep trying.
        self.ever_connected = False
        self.failing_since: float | None = None
        self.delay = BACKOFF_FIRST_S
        #: When the last stream opened: one that stayed open a while ends the backing off.
        self.opened_at: float | None = None

    def connected(self) -> LiveEvent | None:
        """Called when a stream opens: after a reconnect past the budget, a gap (display was missed).

        The daemon answered: it has not gone away, so `reconnect_for` counts again from the next
        failure (a proxy that ends quiet streams is no reason to give up)."""
        self.ever_connected = True
        self.opened_at = time.monotonic()
        reconnected, self.failing_since = self.failing_since is not None, None
        if self.truncated and self.live and reconnected:
            return LiveEvent(event_type="gap")
        return None

    def take(self, frame: Frame) -> Event | LiveEvent | None:
        """The event of `frame` to hand out, or None (a duplicate, or live output not wanted)."""
        try:
            event = calls.stream_event(frame)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # ValidationError too
            raise WorkbenchError(f"an event of the stream is not what this client expects: {exc}") from exc
        if isinstance(event, Event):
            if event.sequence <= self.last:
                return None
            self.last, self.failing_since, self.delay = event.sequence, None, BACKOFF_FIRST_S
            self.truncated = self.truncated or event.event_type == "output_truncated"
            return event
        return event if self.live else None

    def broke(self, error: Exception | None) -> float:
        """The stream ended before the terminal event: the pause before reconnecting, or raise.

        Raises `Unavailable` at once when no stream was ever opened and the daemon cannot be
        reached; once one was, after `reconnect_for` seconds of failed reconnects.
        """
        if not self.ever_connected and isinstance(error, httpx.TransportError):
            raise calls.unreachable(self.url, error)
        now = time.monotonic()
        if self.opened_at is not None and now - self.opened_at > BACKOFF_MAX_S:
            self.delay = BACKOFF_FIRST_S
        self.opened_at = None
        if self.failing_since is None:
            self.failing_since = now
        if now - self.failing_since > self.reconnect_for:
            raise calls.unreachable(self.url, error or ConnectionError("the event stream ended early"))
        delay = self.delay
        self.delay = min(self.delay * 2, BACKOFF_MAX_S)
        return delay
