"""The routes of code contexts (`docs/api.md`, "Code contexts"): each parses, makes one call of
the daemon's contexts (`workbench.core.contexts`) and serialises."""

from __future__ import annotations

from quart import Response
from quart_trio import QuartTrio

from api.errors import json_response
from api.requests import authenticate, check_query, parse_body
from workbench.core.auth import EXECUTE, READ
from workbench.core.daemon import Daemon
from workbench.wire.contexts import ContextList, ContextRequest
from workbench.wire.errors import NotFound, Unavailable
from workbench.wire.fields import CONTEXT_ID

CONTEXTS = "/v1/contexts"
CONTEXT = CONTEXTS + "/<context_id>"


def _context_id(context_id: str) -> str:
    if not CONTEXT_ID.fullmatch(context_id):
        raise NotFound(f"no context {context_id}")
    return context_id


def register(app: QuartTrio, daemon: Daemon) -> None:
    """Add the code context routes to `app`."""
    contexts = daemon.executor.contexts

    @app.post(CONTEXTS)
    async def create_context() -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        req = await parse_body(ContextRequest)
        if not daemon.executor.accepting:
            raise Unavailable("the daemon is shutting down")
        daemon.service.store.health.check_accepting()
        return json_response(await contexts.create(principal, req), 201)

    @app.get(CONTEXTS)
    async def list_contexts() -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        return json_response(ContextList(contexts=contexts.listing(principal)))

    @app.get(CONTEXT)
    async def get_context(context_id: str) -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        return json_response(contexts.get(principal, _context_id(context_id)).record())

    @app.delete(CONTEXT)
    async def delete_context(context_id: str) -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query()
        await contexts.delete(principal, _context_id(context_id))
        return Response("", status=204)
