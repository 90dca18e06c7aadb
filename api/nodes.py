"""The route the nodes of a shared store call on each other: an artifact of an execution this node
ran, for another node that was asked for it (see `workbench.core.nodecalls`).

Its only credential is `WORKBENCH_NODE_TOKEN`, shared by the nodes; it is no principal's token and
opens nothing else. A node without one takes no node calls.
"""

from __future__ import annotations

import hmac

from quart import Response, request
from quart_trio import QuartTrio

from api.download import file_response
from api.operations import ANY, Op
from api.requests import check_query
from workbench.core.daemon import Daemon
from workbench.wire.errors import NotFound, Unauthorized


def node_operations() -> list[Op]:
    """The node-to-node route, for the OpenAPI document."""
    return [
        Op(
            "get",
            "/v1/nodes/{nodeId}/artifacts/{executionId}/{name}",
            "nodeArtifact",
            "For another node: an artifact of an execution this node ran (honours Range)",
            errors=(*ANY, "unauthorized", "not_found", "range_not_satisfiable", "unavailable"),
            headers=(
                (
                    "Authorization",
                    {"type": "string"},
                    "`Bearer ` and the nodes' shared `WORKBENCH_NODE_TOKEN` (no principal's token)",
                ),
                ("Range", {"type": "string"}, "one range: `bytes=a-b`, `bytes=a-` or `bytes=-n`"),
            ),
            raw={
                200: ("application/octet-stream", "the whole artifact"),
                206: ("application/octet-stream", "the range asked for (`Content-Range`)"),
            },
        )
    ]


def register(app: QuartTrio, daemon: Daemon) -> None:
    settings = daemon.settings

    @app.get("/v1/nodes/<node_id>/artifacts/<execution_id>/<name>")
    async def node_artifact(node_id: str, execution_id: str, name: str) -> Response:
        check_query()  # first, as on every route
        check_node_credential(settings.node_token, request.headers.get("Authorization"))
        if node_id != settings.node_id:
            raise NotFound(f"this is node {settings.node_id!r}, not {node_id[:63]!r}")
        path, size, content_type = await daemon.service.node_artifact_file(execution_id, name)
        return await file_response(path, size, content_type, name)


def check_node_credential(expected: str | None, header: str | None) -> None:
    """Unauthorized unless `header` is `Bearer <WORKBENCH_NODE_TOKEN>` (compared in constant time)."""
    if expected is None:
        raise Unauthorized("this node takes no node calls: WORKBENCH_NODE_TOKEN is not set on it")
    scheme, _, given = (header or "").partition(" ")
    if scheme != "Bearer" or not hmac.compare_digest(given.strip().encode(), expected.encode()):
        raise Unauthorized("a node call needs the nodes' shared WORKBENCH_NODE_TOKEN as its bearer token")
