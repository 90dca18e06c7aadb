"""Calls between the nodes of a shared store: fetching an artifact from the node that holds it.

Artifacts stay on the disk of the node that ran the execution. Another node asked for one calls
that node's `GET /v1/nodes/{nodeId}/artifacts/{executionId}/{name}` at its `WORKBENCH_NODE_URL`
(from the `nodes` table) with the shared `WORKBENCH_NODE_TOKEN` as its bearer token, passes the
`Range` on, and streams the answer back chunk by chunk: nothing is held whole in memory. The
caller's own token and scopes were checked by the asking node before it calls.

An `https://` node URL is verified against `WORKBENCH_TLS_CA` when it is set, else against the
system's certificate store. A node that cannot be asked (no token here, no URL, a lapsed heartbeat,
a refused connection, a refused credential) is `NodeUnavailable` (503 `node_unavailable`).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx
import trio

from workbench.wire.errors import NodeUnavailable, NotFound

if TYPE_CHECKING:
    from workbench.core.settings import Settings
    from workbench.core.store.base import NodeStore

#: The route of a node that serves its own artifacts to the other nodes.
NODE_ARTIFACT_PATH = "/v1/nodes/{node}/artifacts/{execution_id}/{name}"
#: The headers of the owning node's answer that are passed on as they are.
PASSED_HEADERS = (
    "content-type",
    "content-length",
    "content-range",
    "accept-ranges",
    "content-disposition",
    "etag",
    "last-modified",
)
#: How long to wait for the owning node to accept the connection, and for each chunk.
CONNECT_S = 5.0
READ_S = 30.0


@dataclass
class RemoteFile:
    """The owning node's answer: its status (200, 206 or 416), headers and streamed body."""

    status: int
    headers: dict[str, str]
    body: AsyncIterator[bytes]


def node_tls_context(settings: Settings) -> ssl.SSLContext:
    """What `https://` node URLs are verified with: `WORKBENCH_TLS_CA`, else the system's store."""
    return ssl.create_default_context(cafile=str(settings.tls_ca) if settings.tls_ca else None)


class NodeCalls:
    """This node's calls to the other nodes of its shared store."""

    def __init__(self, settings: Settings, store: NodeStore) -> None:
        self.settings = settings
        self.store = store
        self._tls = node_tls_context(settings)

    async def fetch_artifact(
        self, node: str, execution_id: str, name: str, range_: str | None, *, method: str = "GET"
    ) -> RemoteFile:
        """Open the artifact `name` of `execution_id` on `node` (`HEAD`: its headers only);
        NodeUnavailable when it cannot be."""
        token = self.settings.node_token
        if token is None:
            raise NodeUnavailable(
                f"the artifact is on node {node!r}, and this node cannot fetch it: WORKBENCH_NODE_TOKEN "
                "is not set here (give every node the same one)"
            )
        url = (await self.store.live_nodes()).get(node, "") if node else ""
        if url == "":
            raise NodeUnavailable(
                f"the artifact is on node {node!r}, which is down (its heartbeat lapsed); it stays on "
                "that node's disk until the node is back"
            )
        if url is None:
            raise NodeUnavailable(
                f"the artifact is on node {node!r}, which has no WORKBENCH_NODE_URL: other nodes "
                "cannot reach it"
            )
        path = NODE_ARTIFACT_PATH.format(
            node=quote(node, safe=""), execution_id=quote(execution_id, safe=""), name=quote(name, safe="")
        )
        headers = {"Authorization": f"Bearer {token}"}
        if range_ is not None:
            headers["Range"] = range_
        client = httpx.AsyncClient(verify=self._tls, timeout=httpx.Timeout(READ_S, connect=CONNECT_S))
        try:
            response = await client.send(
                client.build_request(method, url.rstrip("/") + path, headers=headers), stream=True
            )
        except httpx.HTTPError as exc:
            await client.aclose()
            raise NodeUnavailable(
                f"the artifact is on node {node!r}, which cannot be reached at {url}: {exc}"
            ) from None
        if response.status_code in (200, 206, 416):
            passed = {k: v for k in PASSED_HEADERS if (v := response.headers.get(k)) is not None}
            return RemoteFile(response.status_code, passed, _stream(client, response))
        try:
            await response.aread()
            message = _message(response)
        finally:
            await response.aclose()
            await client.aclose()
        if response.status_code == 404:
            raise NotFound(message)
        if response.status_code == 401:
            raise NodeUnavailable(
                f"node {node!r} refused this node's credential ({message}): the nodes must share one "
                "WORKBENCH_NODE_TOKEN"
            )
        raise NodeUnavailable(f"node {node!r} answered {response.status_code}: {message}")


async def _stream(client: httpx.AsyncClient, response: httpx.Response) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.aiter_raw():
            yield chunk
    finally:
        with trio.CancelScope(shield=True):
            await response.aclose()
            await client.aclose()


def _message(response: httpx.Response) -> str:
    try:
        body: Any = response.json()
        return str(body["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase
