"""The end of an execution: its artifacts, the exit of a detached run, and the terminal transition.

`finish()` is the one place an execution becomes terminal: artifacts first (with their events),
then the terminal transition with the exit of a detached execution in the same transaction, then
the tidying up, scheduled to run after the waiters are answered. Its caller (the supervisor task)
runs it under a cancel shield, so that a shutdown cannot drop it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import trio

from workbench.core import shells
from workbench.core.capture import Capture
from workbench.core.layout import STREAMS, ExecutionDir
from workbench.core.live import Live, Outcome, RunContext
from workbench.core.preview import execution_preview
from workbench.core.records import event_builder, format_time, now_ms, usage_of
from workbench.core.store import ArtifactRow, ExecutionRow
from workbench.core.store.base import ExitBody
from workbench.core.store.rows import EventBuilder
from workbench.wire.status import ExecutionStatus as S

log = logging.getLogger("workbench.core.finish")

#: The last bytes of each stream kept in an exit record.
EXIT_TAIL_BYTES = 16 * 1024


@dataclass
class Ending:
    """What `finish` needs of a run."""

    live: Live
    directory: ExecutionDir
    capture: Capture | None
    #: The supervisor's name of the tree while it still holds it (released when tidying up).
    held: str | None


async def finish(
    ctx: RunContext,
    ending: Ending,
    status: S,
    fields: dict[str, Any],
    outcome: Outcome,
    *,
    force: bool = False,
    owner: str | None = None,
) -> None:
    """Publish artifacts, then commit the terminal status (with the exit record if detached);
    with `owner`, only if the execution is still that node's (`Store.begin_transition`)."""
    live = ending.live
    kept: set[str] = set()
    capture = ending.capture
    # The output of the capture's last read: it goes with the first of these commits, with the
    # offsets it reaches (a restart resumes from those), and stays held until it is committed.
    held: list[tuple[str, EventBuilder]] = []
    if capture is not None:
        fields = {**capture.fields(), **fields}
        held = capture.held()
        kept = set(capture.result.kept)
        if kept:
            await _publish_artifacts(ctx, live.id, ending.directory, capture, held)
            capture.committed_held()
            held = []
    if live.row.persist_shell and outcome.exit_code is not None and status in (S.COMPLETED, S.FAILED):
        # Before the terminal status: whoever learns of the end and starts the next finds it.
        note = await trio.to_thread.run_sync(shells.keep, ctx.settings.layout, live.row)
        if note is not None:  # what of the state is not kept, and why
            noted = [*held, ("status", event_builder("status", message=note))]
            await ctx.journal.append(live.id, noted, capture.fields() if capture is not None else None)
            if capture is not None:
                capture.committed_held()
            held = []
    # Made now, while the spool files are there: tidying up removes those not kept.
    preview = await execution_preview(ending.directory, live.row, final=True)
    fields = {**fields, "preview_json": preview.model_dump_json(by_alias=True)}
    live.ending = True  # before the commit: whoever learns of the end sees it so
    sequence = await _commit(ctx, ending, status, fields, outcome, owner, held)
    if sequence is None and status is S.TIMED_OUT:
        # Another node recorded a cancel while the tree was being killed for its deadline
        # (`cancel_requested`, from which no timeout leads): the end is the cancel's.
        status, outcome = S.CANCELLED, Outcome(S.CANCELLED, outcome.exit_code, outcome.signal)
        fields = {k: v for k, v in fields.items() if k not in ("error_code", "error_message")}
        sequence = await _commit(ctx, ending, status, fields, outcome, owner, held)
    if capture is not None:
        capture.committed_held()  # or refused with the end: nothing is written after a terminal status
    if sequence is None and not force:
        log.warning("execution %s: terminal transition to %s refused or not recorded", live.id, status)
    live.status = status
    ctx.displays.forget(live.id)
    ctx.tidy(live.id, ending.held, kept)


async def _commit(
    ctx: RunContext,
    ending: Ending,
    status: S,
    fields: dict[str, Any],
    outcome: Outcome,
    owner: str | None,
    held: list[tuple[str, EventBuilder]],
) -> int | None:
    """The guarded terminal transition of `finish`, after the `held` events: its sequence, or
    None when refused (then none of them is written either)."""
    return await ctx.journal.transition(
        ending.live.id,
        status,
        fields=fields,
        message=outcome.error["message"] if outcome.error else None,
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        error=outcome.error,
        exit_body=exit_body(ending.directory, outcome),
        owner=owner,
        before=held,
    )


async def _publish_artifacts(
    ctx: RunContext,
    execution_id: str,
    directory: ExecutionDir,
    capture: Capture,
    held: list[tuple[str, EventBuilder]],
) -> None:
    """The artifacts and their events, after the `held` output events (with the offsets they
    reach), in one transaction."""
    artifacts = [
        ArtifactRow(name, directory.spool(name).stat().st_size, digest, "application/octet-stream")
        for name, digest in sorted(capture.result.kept.items())
    ]
    events = [
        ("artifact", event_builder("artifact", message=a.name, stream=a.name if a.name in STREAMS else None))
        for a in artifacts
    ]
    await ctx.journal.append(
        execution_id, [*held, *events], capture.fields(), artifacts=artifacts, created_at=now_ms()
    )


def exit_body(directory: ExecutionDir, outcome: Outcome, tails: tuple[str, str] | None = None) -> ExitBody:
    """The exit saved with the terminal status when the execution is detached (decided in-tx);
    its tails from `directory`'s files, or `tails` (stdout, stderr) when given."""

    def body(row: ExecutionRow) -> dict[str, Any]:
        # Read only for a detached execution, inside the transaction that decides it.
        usage = usage_of(row)
        return {
            "executionId": row.id,
            "executionKind": row.kind,
            "status": row.status.value,
            "exitCode": outcome.exit_code,
            "signal": outcome.signal,
            "error": outcome.error,
            "metadata": json.loads(row.metadata_json) if row.metadata_json else None,
            "stdoutTail": tails[0] if tails is not None else tail(directory.stdout),
            "stderrTail": tails[1] if tails is not None else tail(directory.stderr),
            "usage": usage.wire() if usage is not None else None,
            "finishedAt": format_time(row.finished_at),
        }

    return body


def tail(path: Any) -> str:
    """The last EXIT_TAIL_BYTES of a file as text, starting on a UTF-8 character boundary."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - EXIT_TAIL_BYTES))
            data = f.read(EXIT_TAIL_BYTES)
    except OSError:
        return ""
    return _tail(data, cut=size > EXIT_TAIL_BYTES)


def tail_text(data: bytes) -> str:
    """`tail` of a stream's bytes held in memory (as the journal's output events give them)."""
    return _tail(data[-EXIT_TAIL_BYTES:], cut=len(data) > EXIT_TAIL_BYTES)


def _tail(data: bytes, *, cut: bool) -> str:
    start = 0
    if cut:
        # Skip continuation bytes so the tail does not begin inside a character.
        while start < min(4, len(data)) and (data[start] & 0xC0) == 0x80:
            start += 1
    return data[start:].decode("utf-8", errors="replace")
