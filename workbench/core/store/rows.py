"""The typed rows the store hands out and takes: executions, artifacts, events, exits."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.wire.models import ExecutionKind
from workbench.wire.status import ExecutionStatus

#: Renders an event's JSON once the store has given it a sequence and knows the status then.
EventBuilder = Callable[[int, str], str]
#: The `item` event a batch's journal gets when one of its items was created or changed status,
#: made from the item's row as it is now.
ItemEvent = Callable[["ExecutionRow"], EventBuilder]

#: How an output event's body leaves its delta out: the delta is stored as bytes beside it and
#: put back in when the event is read (`render_body`).
DELTA_PLACEHOLDER = '"outputDelta": null'


class WithData:
    """An event builder whose output delta is stored as raw bytes, not inside its JSON text.

    JSON text costs six bytes per control character (`\\u0000`) and two per quote or backslash;
    bytes cost one. The body is rendered with `"outputDelta": null`, filled in on read.
    """

    __slots__ = ("_build", "data")

    def __init__(self, build: EventBuilder, data: bytes) -> None:
        self._build = build
        self.data = data

    def __call__(self, sequence: int, status: str) -> str:
        return self._build(sequence, status)


def render_body(body: str, data: bytes | None) -> str:
    """An event's JSON as served: its stored body with its stored delta put back."""
    if data is None:
        return body
    delta = json.dumps(data.decode("utf-8"), ensure_ascii=False)
    return body.replace(DELTA_PLACEHOLDER, '"outputDelta": ' + delta, 1)


_BOOLEANS = frozenset(
    {
        "truncated",
        "stdout_invalid",
        "stderr_invalid",
        "detached",
        "fail_fast",
        "service",
        "open_stdin",
        "stdin_closed",
        "persist_shell",
    }
)
#: The deadline of an execution without one (a service started without `timeoutMs`), stored with
#: `timeout_ms` 0: the last millisecond of the year 9999, which no clock reaches.
NO_DEADLINE_MS = 253_402_300_799_999


@dataclass(slots=True)
class ExecutionRow:
    """One execution as stored: what was asked, where it is, what it did so far."""

    id: str
    kind: ExecutionKind
    principal: str
    session_id: str
    status: ExecutionStatus
    cwd: str
    image: str
    created_at: int
    deadline_at: int
    timeout_ms: int
    budget_bytes: int
    command: str | None = None
    language: str | None = None
    code: str | None = None
    env_json: str = "{}"
    stdin: str | None = None
    metadata_json: str | None = None
    idempotency_key: str | None = None
    request_hash: str | None = None
    started_at: int | None = None
    finished_at: int | None = None
    idle_timeout_ms: int | None = None
    exit_code: int | None = None
    signal: str | None = None
    error_code: str | None = None
    error_message: str | None = None
    cancel_reason: str | None = None
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    event_bytes: int = 0
    truncated: bool = False
    stdout_offset: int = 0
    stderr_offset: int = 0
    stdout_invalid: bool = False
    stderr_invalid: bool = False
    progress_offset: int = 0
    #: The sequence of the newest event (the first status event is 1).
    last_sequence: int = 1
    detached: bool = False
    containment: str | None = None
    child_json: str | None = None
    #: The preview asked for at the start, and the final one (JSON of `Preview`) once terminal.
    preview_bytes: int = 16384
    preview_format: str = "raw"
    preview_json: str | None = None
    #: The names of its secret variables as a JSON list (the values are never stored).
    secret_env_names_json: str | None = None
    #: Grows by one with every change of the row (the store keeps it).
    row_version: int = 1
    rerun_of: str | None = None
    batch_id: str | None = None
    #: A batch's: how many of its items run at once, and whether the first failure ends it.
    concurrency: int | None = None
    fail_fast: bool = False
    cpu_user_ms: int | None = None
    cpu_system_ms: int | None = None
    peak_memory_bytes: int | None = None
    #: A service (see `workbench.core.services`): meant to stay up until cancelled.
    service: bool = False
    readiness_json: str | None = None
    ready_timeout_ms: int | None = None
    ready_at: int | None = None
    #: The number of its latest change in the changes feed, what that change was, and the JSON
    #: of its latest progress event.
    change_seq: int = 0
    change_type: str = "created"
    progress_json: str | None = None
    #: The code context it runs in, the value of its final expression (JSON of
    #: `{"text/plain": ...}`) and an uncaught exception's traceback.
    context_id: str | None = None
    result_json: str | None = None
    error_traceback: str | None = None
    #: The node that runs it (None while queued in a shared store and not claimed yet).
    node_id: str | None = None
    #: The only node that may claim it (`node` in the start), if any.
    node_pin: str | None = None
    #: The grace of a cancel asked for on another node than the one running it.
    cancel_grace_ms: int | None = None
    #: Interactive (see `workbench.core.interactive`): stdin kept open; the terminal's size as
    #: JSON when it runs on one; whether an end of file closed its stdin; a persistent shell.
    open_stdin: bool = False
    tty_json: str | None = None
    stdin_closed: bool = False
    persist_shell: bool = False

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> ExecutionRow:
        """A row from a database row's columns (integers for booleans, text for the status)."""
        data = dict(values)
        data["status"] = ExecutionStatus(data["status"])
        for name in _BOOLEANS:
            if name in data:
                data[name] = bool(data[name])
        return cls(**data)

    def columns(self) -> dict[str, Any]:
        """The row as database values, by column name."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["status"] = self.status.value
        for name in _BOOLEANS:
            data[name] = int(data[name])
        return data


#: The column names of `executions`; `fields` given to the store must be among them.
EXECUTION_COLUMNS = frozenset(f.name for f in dataclasses.fields(ExecutionRow))


def check_columns(fields: Mapping[str, Any]) -> None:
    """Refuse a name that is not a column (names end up in SQL text)."""
    unknown = (set(fields) - EXECUTION_COLUMNS) | (_MANAGED & set(fields))
    if unknown:
        raise ValueError(f"not columns the caller may set: {sorted(unknown)}")


def column_values(fields: Mapping[str, Any]) -> tuple[Any, ...]:
    """The values of `fields` (checked by `check_columns`) as database values, in order: a yes/no
    column given a bool gets 0 or 1, as `ExecutionRow.columns` does (PostgreSQL's integer column
    refuses a boolean)."""
    check_columns(fields)
    return tuple(int(v) if isinstance(v, bool) else v for v in fields.values())


#: Columns only the store sets: through transitions, or on every change.
_MANAGED = frozenset({"status", "id", "row_version"})


@dataclass(frozen=True, slots=True)
class ArtifactRow:
    name: str
    size_bytes: int
    sha256: str
    content_type: str


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One item of a batch as its batch's record shows it (and its usage, which the batch sums)."""

    id: str
    kind: ExecutionKind
    status: ExecutionStatus
    exit_code: int | None
    cpu_user_ms: int | None
    cpu_system_ms: int | None
    peak_memory_bytes: int | None


@dataclass(frozen=True, slots=True)
class Found:
    """An execution with its artifacts (and, for a batch, its items in order)."""

    row: ExecutionRow
    artifacts: list[ArtifactRow]
    items: list[ItemRow] | None = None


@dataclass(frozen=True, slots=True)
class EventRow:
    sequence: int
    event_type: str
    body: str


@dataclass(frozen=True, slots=True)
class EventsRead:
    """A page of events and the execution as it was when they were read (one snapshot)."""

    events: list[EventRow]
    row: ExecutionRow | None
    #: The sequence of the `output_truncated` event, when asked for and there is one.
    truncated_at: int | None = None


@dataclass(frozen=True, slots=True)
class ExitLease:
    delivery_id: str
    body: str
    attempt: int


@dataclass(frozen=True, slots=True)
class ListFilter:
    """Which executions a listing shows (None: any)."""

    principal: str | None = None
    status: str | None = None
    kind: str | None = None
    session_id: str | None = None
    #: Only the reruns of this execution, only the items of this batch.
    rerun_of: str | None = None
    batch_id: str | None = None
    service: bool | None = None
    #: Text found (ignoring case) in the id, the command, the code or the metadata's JSON.
    text: str | None = None


@dataclass(frozen=True)
class StoreStats:
    """What the store holds: executions by status, and its size."""

    #: Status → how many executions have it (statuses with none are left out).
    counts: dict[str, int]
    #: The bytes the store takes on disk now (for SQLite: the database file with its WAL).
    store_bytes: int
    #: Of those, the bytes that are free inside it: reused by later writes, or given back by
    #: `reclaim`.
    free_bytes: int
