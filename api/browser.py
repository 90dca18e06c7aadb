"""The routes of browsers (API.md v2, "Browsers"): login and logout, login links, the changes
stream, the dashboard's files, and CORS for the origins configured (none by default)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from functools import partial
from importlib import resources

import trio
from quart import Response, request
from quart_trio import QuartTrio

from api.errors import error_response, json_response
from api.requests import (
    EVENTS_AFTER,
    authenticate,
    check_query,
    one_header,
    parse_body,
    parse_sequence,
    session_alive,
)
from workbench.core.auth import READ
from workbench.core.browser import CSRF_HEADER, Session
from workbench.core.daemon import Daemon
from workbench.core.records import format_time
from workbench.core.service import Change, Principal
from workbench.core.waiting import first_of
from workbench.wire.browser import LoginRequest
from workbench.wire.errors import BadRequest, NotFound, Unauthorized

KEEPALIVE_S = 15.0
#: Changes read per query of the changes feed.
PAGE_CHANGES = 256
#: The dashboard's files (in the package: no build step, nothing fetched from elsewhere).
ASSETS = {
    "app.js": "text/javascript; charset=utf-8",
    "log.js": "text/javascript; charset=utf-8",
    "list.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
#: Pages of the dashboard load nothing but their own files, run no inline script, and cannot be
#: framed: output shown as text could not run even if it slipped into markup.
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
CORS_ALLOW_HEADERS = f"Authorization, Content-Type, Idempotency-Key, Last-Event-ID, {CSRF_HEADER}"
CORS_EXPOSE_HEADERS = "Idempotent-Replayed, Content-Range, Content-Disposition"


def _login_json(session: Session) -> dict[str, object]:
    return {
        "principal": session.principal.name,
        "scopes": sorted(session.principal.scopes),
        "csrfToken": session.csrf,
        "expiresAt": format_time(session.expires_at),
    }


def _change_frame(change: Change) -> str:
    execution = change.execution.wire()
    body = {
        "changeId": change.change_id,
        "change": change.change,
        "execution": execution,
        "progress": execution["progress"],
    }
    data = json.dumps(body, ensure_ascii=False)
    return f"id: {change.change_id}\nevent: {change.change}\ndata: {data}\n\n"


async def changes_stream(
    daemon: Daemon, principal: Principal, after: int | None, alive: Callable[[], bool]
) -> Response:
    """`GET /v1/events/stream`: a `ready` event with the cursor, then every change after it,
    while `alive()` (the session that opened it holds)."""
    store, svc = daemon.service.store, daemon.service
    head = await store.change_head()
    cursor = head if after is None else min(after, head)

    async def frames() -> AsyncIterator[bytes]:
        nonlocal cursor
        ready = json.dumps({"changeId": cursor})
        yield f"retry: 1000\nid: {cursor}\nevent: ready\ndata: {ready}\n\n".encode()
        watches = store.watches
        watch = watches.changes
        while not daemon.stopping.is_set() and alive():
            seen = watch.version
            page = await svc.changes(principal, cursor, PAGE_CHANGES)
            if page:
                cursor = page[-1].change_id
                yield "".join(_change_frame(c) for c in page).encode("utf-8")
                if len(page) == PAGE_CHANGES:
                    continue
            # A change, the daemon's stop, or a tick (every few seconds, and at a logout), after
            # which the loop sees whether it may go on; a keep-alive after a quiet spell.
            quiet_until = trio.current_time() + KEEPALIVE_S
            with trio.move_on_at(quiet_until):
                while watch.version == seen and alive() and not daemon.stopping.is_set():
                    await first_of(partial(watches.wait, watch, seen, watches.ticks), daemon.stopping.wait)
            if watch.version == seen and trio.current_time() >= quiet_until:
                yield b": keepalive\n\n"

    response = Response(
        frames(),
        status=200,
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
    response.timeout = None
    return response


def _cookie(response: Response, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=request.scheme == "https",
    )


def register(app: QuartTrio, daemon: Daemon) -> None:
    """Add the browsers' routes and the CORS answers to `app`."""
    browser = daemon.browser

    @app.post("/v1/login")
    async def login() -> Response:
        check_query()
        if request.mimetype != "application/json":
            # A form another site posts cannot be JSON without a preflight it would not pass.
            raise BadRequest("POST /v1/login takes a JSON body (Content-Type: application/json)")
        body = await parse_body(LoginRequest)
        if body.token is not None:
            session, cookie = browser.login(body.token)
        else:
            session, cookie = browser.login_with_code(body.code or "")
        response = json_response(_login_json(session))
        _cookie(response, browser.cookie_name, cookie, daemon.settings.session_ttl_ms // 1000)
        return response

    @app.post("/v1/logout")
    async def logout() -> Response:
        check_query()
        cookie = request.cookies.get(browser.cookie_name)
        response = Response("", status=204)
        if cookie is not None:
            try:
                session = browser.session(cookie)
            except Unauthorized:
                session = None  # ended already: only the cookie is left to clear
            if session is not None:
                browser.check_csrf(session, request.headers.get(CSRF_HEADER))
                browser.logout(session)
                # The streams it opened look at once (`session_alive`), and end.
                daemon.service.store.watches.tick()
        _cookie(response, browser.cookie_name, "", 0)
        return response

    @app.post("/v1/login/links")
    async def login_link() -> Response:
        check_query()
        header = request.headers.get("Authorization") or ""
        authenticate(daemon, READ)
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer":
            raise Unauthorized(
                "a login link is made with a bearer token: send 'Authorization: Bearer <token>'"
            )
        code, expires = browser.login_code(token.strip())
        return json_response({"code": code, "expiresAt": format_time(expires)}, 201)

    @app.get("/v1/events/stream")
    async def all_events() -> Response:
        principal = authenticate(daemon, READ)
        check_query(("after",))
        after = EVENTS_AFTER.read() if "after" in request.args else None
        last_event_id = one_header("Last-Event-ID")
        if last_event_id is not None:
            after = parse_sequence("Last-Event-ID", last_event_id)  # wins over ?after=
        return await changes_stream(daemon, principal, after, session_alive(daemon))

    @app.get("/")
    async def dashboard() -> Response:
        check_query()
        html = resources.files("api").joinpath("ui/index.html").read_text(encoding="utf-8")
        return Response(html, status=200, content_type="text/html; charset=utf-8", headers=PAGE_HEADERS)

    @app.get("/ui/<asset>")
    async def asset(asset: str) -> Response:
        check_query()
        content_type = ASSETS.get(asset)
        if content_type is None:
            raise NotFound(f"no file {asset!r} in the dashboard")
        data = resources.files("api").joinpath(f"ui/{asset}").read_bytes()
        return Response(data, status=200, content_type=content_type, headers=PAGE_HEADERS)

    _register_cors(app, daemon)


def _register_cors(app: QuartTrio, daemon: Daemon) -> None:
    origins = frozenset(daemon.settings.cors_origins)

    @app.before_request
    async def _preflight() -> Response | None:
        origin = request.headers.get("Origin")
        if request.method != "OPTIONS" or origin is None:
            return None
        if origin not in origins:
            return error_response("forbidden", f"the origin {origin[:100]!r} may not call this daemon")
        response = Response("", status=204)
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE"
        response.headers["Access-Control-Allow-Headers"] = CORS_ALLOW_HEADERS
        response.headers["Access-Control-Max-Age"] = "600"
        return response

    @app.after_request
    async def _cors(response: Response) -> Response:
        origin = request.headers.get("Origin")
        if origin is not None and origin in origins:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Credentials"] = "true"
            response.headers["Access-Control-Expose-Headers"] = CORS_EXPOSE_HEADERS
            response.headers.add("Vary", "Origin")
        return response
