"""How the CLI shows records, events, artifacts, exits and images to a person (`--json` skips all this)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from datetime import UTC, datetime
from typing import Any

from workbench.cli import ids
from workbench.cli.output import format_seconds

KIND_SHORT = {"workbench_bash": "bash", "workbench_code": "code"}


def parse_time(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def age(text: str | None, now: datetime) -> str:
    """`5s`, `3m`, `2h`, `4d` since `text`."""
    when = parse_time(text)
    if when is None:
        return "-"
    seconds = max(0, int((now - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def duration(record: dict[str, Any], now: datetime) -> str:
    """From start to finish (or to now while running)."""
    started = parse_time(record.get("startedAt"))
    if started is None:
        return "-"
    finished = parse_time(record.get("finishedAt")) or now
    return format_seconds(max(0.0, (finished - started).total_seconds()))


def outcome(record: dict[str, Any]) -> str:
    """The EXIT column: the exit code, the signal, or `-`."""
    if record.get("signal"):
        return str(record["signal"])
    if record.get("exitCode") is not None:
        return str(record["exitCode"])
    return "-"


def what(record: dict[str, Any]) -> str:
    """The command, or `LANGUAGE: first line of the code`, on one line."""
    if record.get("executionKind") == "workbench_code":
        first = (record.get("code") or "").strip().splitlines()
        text = f"{record.get('language')}: {first[0] if first else ''}"
    else:
        text = record.get("command") or ""
    return " ".join(text.split())


def width() -> int | None:
    """The terminal's width when stdout is one (or COLUMNS is set); None: do not cut."""
    if "COLUMNS" in os.environ or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def table(headers: list[str], rows: list[list[str]], *, cut_last_to: int | None = None) -> str:
    """Aligned columns; the last column is cut to fit `cut_last_to` characters in all."""
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers) - 1)]
    lines = []
    for row in [headers, *rows]:
        head = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False))
        last = row[-1]
        if cut_last_to is not None:
            room = max(10, cut_last_to - len(head) - 2)
            if len(last) > room:
                last = last[: room - 1] + "…"
        lines.append(f"{head}  {last}".rstrip())
    return "\n".join(lines)


def executions_table(records: list[dict[str, Any]], *, trunc: bool = True, columns: int | None = None) -> str:
    """The table of `ls`; `trunc`: short ids, and the command cut to `columns` (default: the
    terminal's width, when stdout is one)."""
    now = datetime.now(UTC)
    short = ids.shortest(r["executionId"] for r in records) if trunc else {}
    rows = [
        [
            short.get(r["executionId"], r["executionId"]),
            KIND_SHORT.get(r["executionKind"], r["executionKind"]),
            r["status"],
            outcome(r),
            age(r.get("createdAt"), now),
            duration(r, now),
            what(r),
        ]
        for r in records
    ]
    cut = (columns or width()) if trunc else None
    return table(["ID", "KIND", "STATUS", "EXIT", "AGE", "DURATION", "COMMAND"], rows, cut_last_to=cut)


def show(record: dict[str, Any]) -> str:
    """One record as `field: value` lines, the empty ones left out."""
    now = datetime.now(UTC)
    out = record.get("output") or {}
    lines = [
        ("id", record["executionId"]),
        ("kind", record["executionKind"]),
        ("status", record["status"]),
        ("exit", outcome(record)),
    ]
    if record.get("error"):
        lines.append(("error", f"{record['error']['code']}: {record['error']['message']}"))
    if record.get("cancelReason"):
        lines.append(("cancel reason", record["cancelReason"]))
    if record.get("executionKind") == "workbench_code":
        lines += [("language", record.get("language")), ("code", record.get("code"))]
    else:
        lines.append(("command", record.get("command")))
    lines += [
        ("cwd", record.get("cwd")),
        ("image", record.get("image")),
        ("session", record.get("sessionId")),
        ("env", " ".join(f"{k}={v}" for k, v in (record.get("env") or {}).items()) or None),
        ("metadata", json.dumps(record["metadata"]) if record.get("metadata") is not None else None),
        ("idempotency key", record.get("idempotencyKey")),
        ("created", f"{record.get('createdAt')} ({age(record.get('createdAt'), now)} ago)"),
        ("started", record.get("startedAt")),
        ("finished", record.get("finishedAt")),
        ("duration", duration(record, now)),
        ("deadline", record.get("deadlineAt")),
        (
            "output",
            f"stdout {out.get('stdoutBytes', 0)} B, stderr {out.get('stderrBytes', 0)} B"
            + (" (past the event budget: whole in the artifacts)" if out.get("truncated") else ""),
        ),
        ("artifacts", ", ".join(f"{a['name']} ({a['sizeBytes']} B)" for a in record.get("artifacts", []))),
        ("detached", "yes" if record.get("detached") else None),
        ("containment", record.get("containment")),
        ("events", str(record.get("lastSequence"))),
    ]
    shown = [(k, v) for k, v in lines if v not in (None, "")]
    pad = max(len(k) for k, _ in shown) + 1
    return "\n".join(f"{(k + ':').ljust(pad)} {v}" for k, v in shown)


def event_line(event: dict[str, Any]) -> str:
    """One journal event on one line: sequence, time, type, and what it says."""
    stamp = (event.get("timestamp") or "")[11:23]
    kind = event["eventType"]
    detail = ""
    if kind == "output":
        text = event.get("outputDelta") or ""
        shown = json.dumps(text[:200], ensure_ascii=False)
        more = f" …({len(text.encode())} bytes)" if len(text) > 200 else ""
        detail = f"{event.get('stream')} {shown}{more}"
    elif kind == "status":
        detail = event["status"]
        if event.get("exitCode") is not None:
            detail += f" exit={event['exitCode']}"
        if event.get("signal"):
            detail += f" signal={event['signal']}"
        error = event.get("error")
        if error:
            detail += f" error={error['code']}: {error['message']}"
        message = event.get("message")
        if message and not (error and message == error["message"]):
            # The cancel's reason, "adopted after a daemon restart", ...
            detail += f" ({message})" if detail else message
    elif kind == "signal":
        detail = event.get("signal") or event.get("message") or ""
    elif kind == "progress":
        detail = f"{event.get('progress')}/{event.get('total')} {event.get('message') or ''}".rstrip()
    else:
        detail = event.get("message") or ""
    return f"{event['sequence']:>6}  {stamp}  {kind:<16} {detail}".rstrip()


def artifacts_table(artifacts: list[dict[str, Any]]) -> str:
    rows = [[a["name"], str(a["sizeBytes"]), a["sha256"]] for a in artifacts]
    return table(["NAME", "SIZE", "SHA256"], rows)


def exits_table(exits: list[dict[str, Any]], *, trunc: bool = True) -> str:
    """The table of `exits`; `trunc`: short ids."""
    short = (
        ids.shortest([*(e["deliveryId"] for e in exits), *(e["executionId"] for e in exits)]) if trunc else {}
    )
    rows = [
        [
            short.get(e["deliveryId"], e["deliveryId"]),
            short.get(e["executionId"], e["executionId"]),
            e["status"],
            outcome(e),
            str(e.get("attempt", 1)),
            e.get("finishedAt") or "-",
        ]
        for e in exits
    ]
    return table(["DELIVERY", "EXECUTION", "STATUS", "EXIT", "ATTEMPT", "FINISHED"], rows)


def images_table(images: list[dict[str, Any]]) -> str:
    rows = [
        [
            i["name"],
            "yes" if i.get("available") else f"no: {i.get('unavailableReason') or ''}".rstrip(": "),
            ",".join(i.get("languages", [])),
            i.get("description") or "",
        ]
        for i in images
    ]
    return table(["NAME", "AVAILABLE", "LANGUAGES", "DESCRIPTION"], rows, cut_last_to=width())
