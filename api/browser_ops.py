"""The operations of the browsers' routes, for the OpenAPI document (see `api.operations`)."""

from __future__ import annotations

from api.contexts_operations import context_operations
from api.files_operations import file_operations
from api.nodes import node_operations
from api.operations import ANY, PER_EXECUTION, WITH_BODY, Op, operations, with_and_without_kind
from api.requests import EVENTS_AFTER
from api.retention_operations import retention_operations
from workbench.wire.browser import Login, LoginLink, LoginRequest, StreamToken

CHANGES_DESCRIPTION = """First `event: ready` with `id:` the cursor the stream starts from (the
latest change, or `after` / `Last-Event-ID`). Then, for each execution that changed since, once,
in the order of the changes: `id: CHANGE_ID`, `event: created|status|progress|terminal`,
`data: CHANGE_JSON` (a `Change`: the record as it is now and its latest progress). Resuming with
the last `id:` seen gives every execution that changed meanwhile. A `: keepalive` comment comes
at least every 15 seconds."""


def browser_operations() -> list[Op]:
    """The routes of `api.browser`; the per-execution `stream-token` comes with `per_execution()`."""
    return [
        Op(
            "get",
            "/",
            "dashboard",
            "The dashboard (HTML)",
            errors=ANY,
            public=True,
            raw={200: ("text/html", "the dashboard's page")},
        ),
        Op(
            "get",
            "/ui/{asset}",
            "dashboardAsset",
            "A file of the dashboard (script or style sheet)",
            errors=(*ANY, "not_found"),
            public=True,
            raw={200: ("text/plain", "the file")},
        ),
        Op(
            "post",
            "/v1/login",
            "login",
            "Trade a token (or a one-time code) for a session cookie",
            LoginRequest,
            ok={
                200: (
                    Login,
                    "logged in: `Set-Cookie: workbench_session_<daemon>=...; HttpOnly; SameSite=Strict`",
                )
            },
            errors=(*ANY, *WITH_BODY, "unauthorized"),
            public=True,
        ),
        Op(
            "post",
            "/v1/logout",
            "logout",
            "End the session of the cookie",
            ok={204: (None, "logged out (the cookie is cleared)")},
            errors=(*ANY, "forbidden"),
            public=True,
        ),
        Op(
            "post",
            "/v1/login/links",
            "loginLink",
            "A one-time login code for a browser",
            ok={201: (LoginLink, "the code; `/#login=CODE` opens the dashboard logged in")},
        ),
        Op(
            "get",
            "/v1/events/stream",
            "changesStream",
            "Follow every visible execution's changes (server-sent events)",
            ok={},
            query=((EVENTS_AFTER.name, EVENTS_AFTER.schema(), "the last change id already seen"),),
            headers=(
                (
                    "Last-Event-ID",
                    {"type": "string", "pattern": "^[0-9]+$"},
                    "the last `id:` seen; wins over `after`",
                ),
            ),
            raw={200: ("text/event-stream", CHANGES_DESCRIPTION)},
        ),
    ]


def stream_token_operation() -> Op:
    """`POST .../stream-token`, with a path relative to the execution's."""
    return Op(
        "post",
        "/stream-token",
        "streamToken",
        "A token that opens this execution's stream for 10 minutes",
        ok={200: (StreamToken, "use it as `?streamToken=` on this execution's stream only")},
        errors=PER_EXECUTION,
    )


def all_operations() -> list[Op]:
    """Every operation of the API: those of `api.routes`, `api.files_routes`, `api.contexts_routes`
    and `api.browser`."""
    return [
        *operations(),
        *file_operations(),
        *context_operations(),
        *retention_operations(),
        *node_operations(),
        *browser_operations(),
        *with_and_without_kind(stream_token_operation()),
    ]
