"""The changes feed (`GET /v1/events/stream`): each execution that changed, once, as it is now."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.core.principals import Principal
from workbench.core.records import execution_from
from workbench.core.store import Store
from workbench.wire.models import Execution


@dataclass(frozen=True)
class Change:
    """One entry of the changes feed: its number, what changed, the record, its latest progress."""

    change_id: int
    change: str
    execution: Execution
    progress_json: str | None


async def changes_after(store: Store, principal: Principal, after: int, limit: int) -> list[Change]:
    """The changes after `after`: each execution of `principal`'s (every one for an admin) that
    changed since, once, as it is now, in the order of those changes."""
    owner = None if principal.sees_all else principal.name
    found = await store.read_changes(owner, after, limit)
    return [
        Change(f.row.change_seq, f.row.change_type, execution_from(f), f.row.progress_json) for f in found
    ]
