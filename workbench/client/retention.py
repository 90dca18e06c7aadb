"""The retention methods of both clients: `prune` (a bulk delete on the daemon) and `stats`."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import UTC, datetime

import httpx

from workbench.client.base import Base
from workbench.client.calls import Call, _expect
from workbench.client.config import parse_duration_ms
from workbench.client.plan import Plan, method, send
from workbench.wire.stats import DeleteResult, Stats
from workbench.wire.status import StatusName


def _before(before: datetime | str | float) -> str:
    """`before` as the route takes it: a datetime (naive: UTC) or a duration text (`7d`) or
    seconds back from now (a number)."""
    if isinstance(before, datetime):
        when = before if before.tzinfo is not None else before.replace(tzinfo=UTC)
        return when.isoformat()
    if isinstance(before, str):
        return f"{parse_duration_ms(before)}ms"
    if before < 0:
        raise ValueError("before: seconds back from now, 0 or more")
    return f"{round(before * 1000)}ms"


def prune_call(statuses: Iterable[str] | None, before: datetime | str | float | None) -> Call[DeleteResult]:
    @_expect(200)
    def parse(response: httpx.Response) -> DeleteResult:
        return DeleteResult.model_validate_json(response.content)

    params: dict[str, str] = {}
    if statuses is not None:
        params["status"] = ",".join(statuses)
    if before is not None:
        params["before"] = _before(before)
    # Resending it after a broken connection deletes nothing twice: what is gone stays gone.
    return Call("DELETE", "/v1/executions", parse, params=params)


def stats_call() -> Call[Stats]:
    @_expect(200)
    def parse(response: httpx.Response) -> Stats:
        return Stats.model_validate_json(response.content)

    return Call("GET", "/v1/stats", parse)


@method
def prune(
    client: Base,
    *,
    status: StatusName | builtins.list[StatusName] | None = None,
    before: datetime | str | float | None = None,
) -> Plan[int]:
    """Delete the ended executions that `status` (one or several ended statuses) and `before`
    (a datetime, `"7d"`, or seconds back from now) select, with their events, files and acked
    exits, in one request: how many. At least one of the two; live executions are never touched."""
    if status is None and before is None:
        raise ValueError("prune: give status, before, or both")
    statuses = None if status is None else [status] if isinstance(status, str) else status
    return (yield from send(client, prune_call(statuses, before))).deleted


@method
def stats(client: Base) -> Plan[Stats]:
    """Your executions by status (admin: everyone's), the store's size and the data dir's."""
    return (yield from send(client, stats_call()))
