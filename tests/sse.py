"""A minimal SSE reader for tests: frames as (id, event, data) with comments kept apart."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import httpx
import trio

from tests import ceilings


@dataclass
class Frame:
    id: int | None
    event: str
    data: str
    comment: str | None = None

    @property
    def json(self) -> Any:
        return json.loads(self.data)


async def frames(response: httpx.Response) -> AsyncIterator[Frame]:
    """Parse a `text/event-stream` response into frames (a comment is a frame with `comment`)."""
    fields: dict[str, str] = {}
    async for line in response.aiter_lines():
        if line == "":
            if fields:
                raw_id = fields.get("id")
                yield Frame(
                    int(raw_id) if raw_id is not None else None,
                    fields.get("event", "message"),
                    fields.get("data", ""),
                )
                fields = {}
            continue
        if line.startswith(":"):
            yield Frame(None, "", "", comment=line[1:].strip())
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


def stream_of(
    client: httpx.AsyncClient,
    execution_id: str,
    headers: dict[str, str] | None = None,
    params: Any = None,
) -> AbstractAsyncContextManager[httpx.Response]:
    """The SSE stream of an execution's events, as `client.stream` opens it."""
    return client.stream(
        "GET", f"/v1/executions/{execution_id}/events/stream", headers=headers, params=params
    )


async def collect(
    client: httpx.AsyncClient,
    execution_id: str,
    headers: dict[str, str] | None = None,
    params: Any = None,
    within_s: float = 60,
    status: int = 200,
) -> list[Frame]:
    """Every frame of a stream until the server ends it (which it does once the execution ends).

    `status=204`: the stream must answer 204 with no body (resumed after the terminal event)."""
    out = []
    with ceilings.within(within_s, f"the event stream of {execution_id} to end"):
        async with stream_of(client, execution_id, headers, params) as response:
            assert response.status_code == status, await response.aread()
            async for frame in frames(response):
                out.append(frame)
    return out


async def keepalive_after_quiet(
    response: httpx.Response,
    quiet_from: Callable[[Frame], bool],
    then: Callable[[], Awaitable[object]],
    until: Callable[[Frame], bool],
) -> float:
    """The seconds from the frame `quiet_from` accepts to the stream's first `: keepalive`, which
    only a quiet spell may bring (no frame but a comment between them); after it, `then()` makes
    a change, and the stream is read on until a frame `until` accepts."""
    quiet_at = kept_at = None
    async for frame in frames(response):
        if quiet_at is None:
            if quiet_from(frame):
                quiet_at = trio.current_time()
        elif kept_at is None:
            if frame.comment == "keepalive":
                kept_at = trio.current_time()
                await then()
            else:
                assert frame.comment is not None, f"{frame} before the keep-alive"
        elif frame.comment is None and until(frame):
            return kept_at - quiet_at
    raise AssertionError(f"the stream ended (quiet from {quiet_at}, kept alive at {kept_at})")
