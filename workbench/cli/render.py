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

KIND_SHORT = {"workbench_bash": "bash", "workbench_code": "code", "batch": "batch"}


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


def progress_text(progress: dict[str, Any] | None) -> str | None:
    """A record's latest progress, e.g. `3/10 (30%) building`, or None before the first."""
    if not progress or progress.get("progress") is None:
        return None
    done, share = progress["progress"], progress_share(progress)
    text = f"{done:g}/{progress['total']:g} ({share})" if share else f"{done:g}"
    return f"{text} {progress['message']}" if progress.get("message") else text


def progress_share(progress: dict[str, Any] | None) -> str | None:
    """`30%` of a progress with a total, else None."""
    if not progress or not progress.get("total") or progress.get("progress") is None:
        return None
    return f"{round(100 * progress['progress'] / progress['total'])}%"


def cpu(usage: dict[str, Any] | None) -> str:
    """User + system CPU time of a `usage`, e.g. `1.02s`, or `-`."""
    if not usage or usage.get("cpuUserMs") is None:
        return "-"
    return format_seconds(((usage.get("cpuUserMs") or 0) + (usage.get("cpuSystemMs") or 0)) / 1000)


def size(value: int | None) -> str:
    """`200M`, `1.5G`, `512K`, or `-`."""
    if value is None:
        return "-"
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if value >= factor:
            number = value / factor
            return f"{number:.1f}{unit}" if number < 10 else f"{number:.0f}{unit}"
    return f"{value}B"


def usage_text(usage: dict[str, Any] | None) -> str | None:
    """`cpu 1.02s (user 980 ms, system 40 ms), peak memory 201M`, or None before the end."""
    if not usage:
        return None
    user, system = usage.get("cpuUserMs"), usage.get("cpuSystemMs")
    parts = []
    if user is not None:
        parts.append(f"cpu {cpu(usage)} (user {user} ms, system {system} ms)")
    peak = usage.get("peakMemoryBytes")
    if peak is not None:
        parts.append(f"peak memory {size(peak)}")
    return ", ".join(parts) or "not measured here"


def what(record: dict[str, Any]) -> str:
    """The command, or `LANGUAGE: first line of the code`, on one line."""
    if record.get("executionKind") == "batch":
        items = record.get("items") or []
        done = sum(1 for i in items if i["status"] in ("completed", "failed", "cancelled", "timed_out"))
        return f"batch of {len(items)} ({done} ended)"
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


def executions_table(
    records: list[dict[str, Any]], *, trunc: bool = True, columns: int | None = None, wide: bool = False
) -> str:
    """The table of `ls`; `trunc`: short ids, and the command cut to `columns` (default: the
    terminal's width, when stdout is one); `wide` adds what each used (CPU time, peak memory)."""
    now = datetime.now(UTC)
    short = ids.shortest(r["executionId"] for r in records) if trunc else {}
    rows = []
    for r in records:
        share = progress_share(r.get("progress")) if r["status"] == "running" else None
        row = [
            short.get(r["executionId"], r["executionId"]),
            KIND_SHORT.get(r["executionKind"], r["executionKind"]),
            f"{r['status']} {share}" if share else r["status"],
            outcome(r),
            age(r.get("createdAt"), now),
            duration(r, now),
        ]
        if wide:
            usage = r.get("usage")
            row += [cpu(usage), size(usage.get("peakMemoryBytes") if usage else None)]
        rows.append([*row, what(r)])
    headers = [
        "ID",
        "KIND",
        "STATUS",
        "EXIT",
        "AGE",
        "DURATION",
        *(["CPU", "PEAK"] if wide else []),
        "COMMAND",
    ]
    cut = (columns or width()) if trunc else None
    return table(headers, rows, cut_last_to=cut)


def show(record: dict[str, Any], reruns: list[str] | None = None) -> str:
    """One record as `field: value` lines, the empty ones left out (`reruns`: the executions
    that re-run it)."""
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
    elif record.get("executionKind") == "batch":
        items = record.get("items") or []
        counts: dict[str, int] = {}
        for item in items:
            counts[item["status"]] = counts.get(item["status"], 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        lines.append(("items", f"{len(items)}: {summary}" if items else "none"))
        lines.append(("concurrency", str(record.get("concurrency"))))
        lines.append(("fail fast", "yes" if record.get("failFast") else None))
    else:
        lines.append(("command", record.get("command")))
    lines += [
        ("cwd", record.get("cwd")),
        ("image", record.get("image")),
        ("node", record.get("nodeId")),
        ("session", record.get("sessionId")),
        ("env", " ".join(f"{k}={v}" for k, v in (record.get("env") or {}).items()) or None),
        ("secret env", " ".join(record.get("secretEnvNames") or []) or None),
        ("metadata", json.dumps(record["metadata"]) if record.get("metadata") is not None else None),
        ("idempotency key", record.get("idempotencyKey")),
        ("created", f"{record.get('createdAt')} ({age(record.get('createdAt'), now)} ago)"),
        ("started", record.get("startedAt")),
        ("finished", record.get("finishedAt")),
        ("duration", duration(record, now)),
        ("progress", progress_text(record.get("progress"))),
        ("deadline", record.get("deadlineAt")),
        (
            "output",
            f"stdout {out.get('stdoutBytes', 0)} B, stderr {out.get('stderrBytes', 0)} B"
            + (" (past the event budget: whole in the artifacts)" if out.get("truncated") else ""),
        ),
        ("artifacts", ", ".join(f"{a['name']} ({a['sizeBytes']} B)" for a in record.get("artifacts", []))),
        ("usage", usage_text(record.get("usage"))),
        ("detached", "yes" if record.get("detached") else None),
        ("containment", record.get("containment")),
        ("rerun of", record.get("rerunOf")),
        ("reruns", ", ".join(reruns or []) or None),
        ("batch", record.get("batchId")),
        ("events", str(record.get("lastSequence"))),
        ("version", str(record.get("rowVersion")) if record.get("rowVersion") is not None else None),
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
            # The cancel's reason, a rerun's origin, "adopted after a daemon restart", ...
            detail += f" ({message})" if detail else message
    elif kind == "signal":
        detail = event.get("signal") or event.get("message") or ""
    elif kind == "item" and event.get("item"):
        item = event["item"]
        detail = f"{item['executionId']} {item['status']}"
        if item.get("exitCode") is not None:
            detail += f" exit={item['exitCode']}"
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
            cpu(e.get("usage")),
            size((e.get("usage") or {}).get("peakMemoryBytes")),
            e.get("finishedAt") or "-",
        ]
        for e in exits
    ]
    return table(["DELIVERY", "EXECUTION", "STATUS", "EXIT", "ATTEMPT", "CPU", "PEAK", "FINISHED"], rows)


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
