"""The routes of retention and operations: bulk delete, `/v1/stats` and `/metrics`."""

from __future__ import annotations

import datetime
import re

from quart import Response, request
from quart_trio import QuartTrio

from api.errors import json_response
from api.requests import authenticate, check_query
from workbench.core.auth import EXECUTE, READ
from workbench.core.daemon import Daemon
from workbench.core.metrics import CONTENT_TYPE
from workbench.core.principals import ADMIN
from workbench.core.records import now_ms
from workbench.core.settings import MAX_DURATION_MS, DurationTooLong, is_loopback, parse_duration
from workbench.wire.errors import BadRequest, Forbidden
from workbench.wire.status import TERMINAL, ExecutionStatus

_ENDED = ", ".join(sorted(s.value for s in TERMINAL))


def parse_statuses(raw: str | None) -> list[ExecutionStatus] | None:
    """`?status=completed,failed` → those statuses (None: every ended one); 400 for any other."""
    if raw is None:
        return None
    wanted = []
    for name in raw.split(","):
        try:
            status = ExecutionStatus(name.strip())
        except ValueError:
            raise BadRequest(
                f"query parameter status must be ended statuses ({_ENDED}), not {name[:40]!r}"
            ) from None
        if not status.terminal:
            raise BadRequest(
                f"query parameter status: {status.value} executions are not deleted; only {_ENDED}"
            )
        wanted.append(status)
    return wanted


#: An RFC 3339 time (section 5.6): a date, `T`, a time with optional fractions, an offset.
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)
_TIME_HINT = (
    "query parameter before must be an RFC 3339 time with its offset "
    "(2026-01-31T12:00:00Z) or a duration back from now (7d, 12h, 30m, 45s, 500ms)"
)


def parse_before(raw: str | None, now: int) -> int | None:
    """`?before=` as milliseconds since the epoch: an RFC 3339 time with its offset, or a duration
    back from now (`7d`, `12h`, `30m`, `45s`, `500ms`); either at most 100 years back; 400 for
    anything else."""
    if raw is None:
        return None
    try:
        return now - parse_duration(raw, zero=True)
    except DurationTooLong as exc:
        raise BadRequest(f"query parameter before: {exc}") from None
    except ValueError:
        pass
    found = _RFC3339.fullmatch(raw.strip())
    if found is None:
        raise BadRequest(_TIME_HINT)
    date, clock, fraction, offset = found.groups()
    offset = "+00:00" if offset in "Zz" else offset
    micros = f".{fraction[:6].ljust(6, '0')}" if fraction else ""
    try:
        when = datetime.datetime.fromisoformat(f"{date}T{clock}{micros}{offset}")
        ms = int(when.timestamp() * 1000)
    except (ValueError, OverflowError):  # a day or an hour that is none, or before the year 1
        raise BadRequest(_TIME_HINT) from None
    if now - ms > MAX_DURATION_MS:
        raise BadRequest(f"query parameter before {raw[:40]!r} goes back more than 100 years (36500d)")
    return ms


def register(app: QuartTrio, daemon: Daemon) -> None:
    """Add the routes to `app`."""

    @app.delete("/v1/executions")
    async def delete_executions() -> Response:
        principal = authenticate(daemon, EXECUTE)
        check_query(("status", "before"))
        raw_status, raw_before = request.args.get("status"), request.args.get("before")
        if raw_status is None and raw_before is None:
            raise BadRequest("give status, before, or both: a bulk delete never means every execution")
        statuses = parse_statuses(raw_status)
        before = parse_before(raw_before, now_ms())
        deleted = await daemon.retention.delete(principal, statuses, before)
        return json_response({"deleted": deleted})

    @app.get("/v1/stats")
    async def stats() -> Response:
        principal = authenticate(daemon, READ)
        check_query()
        return json_response(await daemon.retention.stats(principal))

    @app.get("/metrics")
    async def metrics() -> Response:
        open_here = daemon.settings.metrics_open and is_loopback(request.remote_addr or "")
        if not open_here and authenticate(daemon, READ).name != ADMIN:
            raise Forbidden(
                "/metrics counts every principal's executions: it needs a token of the principal 'admin'"
            )
        check_query()
        body = await daemon.render_metrics()
        return Response(body, status=200, content_type=CONTENT_TYPE)
