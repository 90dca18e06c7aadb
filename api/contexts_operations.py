"""The operations of the code context routes, for the OpenAPI document (see `api.operations`)."""

from __future__ import annotations

from api.operations import AUTHENTICATED, WITH_BODY, WRITES, Op
from workbench.wire.contexts import Context, ContextList, ContextRequest

CONTEXTS = "/v1/contexts"
CONTEXT = CONTEXTS + "/{contextId}"


def context_operations() -> list[Op]:
    """Every operation of the code context routes."""
    return [
        Op(
            "post",
            CONTEXTS,
            "createContext",
            "Start a code context: a long-lived interpreter whose names persist between executions",
            body=ContextRequest,
            ok={201: (Context, "started: `ready`, or `dead` with the `reason` it could not start")},
            errors=(
                *AUTHENTICATED,
                *WITH_BODY,
                "unknown_image",
                "image_unavailable",
                "unsupported_language",
                "too_many_executions",
                *WRITES,
            ),
        ),
        Op(
            "get",
            CONTEXTS,
            "listContexts",
            "The principal's code contexts",
            ok={200: (ContextList, "oldest first")},
        ),
        Op(
            "get",
            CONTEXT,
            "getContext",
            "One code context",
            ok={200: (Context, "the context")},
            errors=(*AUTHENTICATED, "not_found"),
        ),
        Op(
            "delete",
            CONTEXT,
            "deleteContext",
            "Kill a code context's interpreter tree and forget it (what waits in it fails)",
            ok={204: (None, "gone")},
            errors=(*AUTHENTICATED, "not_found"),
        ),
    ]
