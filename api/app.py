"""The quart-trio application: authentication, body and parameter checks, errors, access log.

Routes are in `routes`. Every request, on every route, gets the same guards before its handler
runs: a body over the limit is `413` (and the connection is closed), any body is read whole before
the answer goes out, and every answer is logged as one `key=value` line without tokens or bodies.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from typing import Any

from quart import Response, g, request
from quart.routing import QuartRule
from quart_trio import QuartTrio
from werkzeug.exceptions import HTTPException
from werkzeug.routing import Rule

from api import contexts_routes, files_routes
from api.errors import error_response, from_exception
from api.requests import read_body, too_large
from workbench.core.daemon import Daemon
from workbench.wire.errors import WorkbenchError

access_log = logging.getLogger("workbench.access")

_CONVERTER = re.compile(r"<(?:[^<>]*:)?([A-Za-z_][A-Za-z0-9_]*)>")
_templates: dict[str, str] = {}


def route_template(rule: str) -> str:
    """`/v1/executions/<any(a, b):kind>/<execution_id>` → `/v1/executions/<kind>/<execution_id>`."""
    template = _templates.get(rule)
    if template is None:
        template = _templates[rule] = _CONVERTER.sub(r"<\1>", rule)
    return template


class LazyRule(QuartRule):
    """A route whose URL builders are compiled when first used.

    werkzeug compiles two URL-building functions per rule as it is added (Python source made and
    compiled): about 45 ms for this API's rules, most of the time an app takes to make, paid at
    every daemon start. Routes are matched, not built, here; a build still works, compiled then.
    """

    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        compiled: list[Callable[..., tuple[str, str]]] = []
        compile_now = super()._compile_builder

        def build(rule: Rule, **values: Any) -> tuple[str, str]:
            if not compiled:
                compiled.append(compile_now(append_unknown).__get__(rule, None))
            return compiled[0](**values)

        return build


def create_app(daemon: Daemon) -> QuartTrio:
    """The HTTP face of `daemon`."""
    app = QuartTrio("workbench")
    app.url_rule_class = LazyRule
    app.request_class = files_routes.request_class(daemon.settings.max_file_bytes)
    app.config["MAX_CONTENT_LENGTH"] = daemon.settings.max_body_bytes
    app.config["BODY_TIMEOUT"] = 60
    app.config["RESPONSE_TIMEOUT"] = None
    app.config["PROVIDE_AUTOMATIC_OPTIONS"] = False
    app.url_map.strict_slashes = False
    # A redirect (308) is no answer this API documents: `//` in a path is simply no route.
    app.url_map.merge_slashes = False

    @app.before_request
    async def _guard() -> None:
        g.started = time.perf_counter()
        g.principal = None
        if not files_routes.file_body(request.method, request.path):  # streamed by its handler
            await read_body(daemon.settings.max_body_bytes)

    @app.after_request
    async def _log(response: Response) -> Response:
        rule = route_template(request.url_rule.rule) if request.url_rule is not None else "-"
        principal = g.principal.name if getattr(g, "principal", None) is not None else "-"
        elapsed = (time.perf_counter() - getattr(g, "started", time.perf_counter())) * 1000
        # The route template, never the raw path: ids stay out, and odd paths cannot forge fields.
        # A stream's duration ends with its headers; its body may go on much longer.
        access_log.info(
            "method=%s route=%s status=%d duration_ms=%.1f principal=%s",
            request.method,
            rule,
            response.status_code,
            elapsed,
            principal,
        )
        return response

    @app.errorhandler(WorkbenchError)
    async def _workbench_error(exc: WorkbenchError) -> Response:
        return from_exception(exc)

    @app.errorhandler(HTTPException)
    async def _http_error(exc: HTTPException) -> Response:
        code = exc.code or 500
        if code in (404, 405):
            allowed = ", ".join(sorted(getattr(exc, "valid_methods", None) or []))
            return error_response(
                "not_found",
                f"no route {request.method} {request.path}" + (f" (it takes {allowed})" if allowed else ""),
            )
        if code == 413:
            if files_routes.file_body(request.method, request.path):  # its limit is the file's
                return from_exception(files_routes.too_large(request.path, daemon.settings.max_file_bytes))
            return from_exception(too_large(daemon.settings.max_body_bytes))
        if code >= 500:
            return error_response("internal", exc.description or str(exc))
        # Any other refusal of the HTTP layer (a body that never completes, ...) is a bad request.
        return error_response("bad_request", exc.description or "bad request")

    @app.errorhandler(Exception)
    async def _unexpected(exc: Exception) -> Response:
        rule = route_template(request.url_rule.rule) if request.url_rule is not None else "-"
        logging.getLogger("workbench.api").exception("unhandled error on %s %s", request.method, rule)
        return error_response("internal", "internal error; see the daemon's log")

    from api import browser, nodes, retention_routes, routes

    routes.register(app, daemon)
    nodes.register(app, daemon)
    retention_routes.register(app, daemon)
    files_routes.register(app, daemon)
    browser.register(app, daemon)
    contexts_routes.register(app, daemon)
    return app
