"""Runs the rows in order, each in a time box, and prints and saves the one table."""

from __future__ import annotations

import datetime
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from bench.context import Context
from bench.procs import ROOT, Registry, describe_machine, scratch_root
from bench.rows_agent import row14_mcp_bash, row15_preview
from bench.rows_cancel import row7_cancel
from bench.rows_clients import row13_client_events
from bench.rows_contexts import row19_context
from bench.rows_dashboard import row18_dashboard
from bench.rows_files import row16_file_round_trip, row17_service_ready
from bench.rows_latency import row1_run_wait, row2_cli, row8_containment, row10_code, row12_durability
from bench.rows_live import row5_tail, row6_fanout
from bench.rows_load import row3_many_jobs, row4_gigabyte, row9_thousand, row11_recovery
from bench.rows_nodes import row20_postgres_run_wait, row21_cross_node_tail, row22_three_nodes
from bench.rows_store import row24_store_bytes, row25_clients, row26_sse_rate
from bench.rows_tty import row23_tty_echo
from bench.table import Line, readme_section, render, to_json, update_readme

Row = Callable[[Context], Awaitable[list[Line]]]

#: number → (what it measures, the function, its time box in seconds: full, quick)
ROWS: dict[int, tuple[str, Row, tuple[float, float]]] = {
    1: ("run+wait `true`", row1_run_wait, (60, 30)),
    2: ("CLI `workbench run -- true`", row2_cli, (90, 30)),
    3: ("500 background `true` vs task-spooler", row3_many_jobs, (120, 40)),
    4: ("1 GB of stdout captured", row4_gigabyte, (120, 40)),
    5: ("tail latency", row5_tail, (60, 30)),
    6: ("200 SSE followers", row6_fanout, (90, 40)),
    7: ("cancel → terminal", row7_cancel, (90, 30)),
    8: ("containment cost at start", row8_containment, (90, 40)),
    9: ("1,000 concurrent `sleep 2`", row9_thousand, (90, 60)),
    10: ("`workbench_code` python `pass`", row10_code, (150, 45)),
    11: ("recovery after SIGKILL, 200 running", row11_recovery, (120, 60)),
    12: ("durability: data dir on disk vs tmpfs", row12_durability, (60, 30)),
    13: ("`events()` of 100,000 lines: TypeScript vs Python client", row13_client_events, (120, 60)),
    14: ("MCP `bash` tool round trip of `true`", row14_mcp_bash, (90, 40)),
    15: ("the record with its preview", row15_preview, (120, 60)),
    16: ("1 MiB file PUT + GET through the API vs `cp`", row16_file_round_trip, (60, 30)),
    17: ("`python -m http.server` service: start to ready", row17_service_ready, (120, 60)),
    18: ("a line from the process to the dashboard's DOM", row18_dashboard, (120, 60)),
    19: ("python `pass` in a code context", row19_context, (90, 30)),
    20: ("run+wait `true` on PostgreSQL vs SQLite", row20_postgres_run_wait, (120, 60)),
    21: ("a line written on node A read on node B", row21_cross_node_tail, (120, 60)),
    22: ("500 jobs over 3 nodes vs 1 node", row22_three_nodes, (240, 120)),
    23: ("keystroke echo through a tty execution", row23_tty_echo, (60, 30)),
    24: ("store bytes per byte of journaled output", row24_store_bytes, (120, 60)),
    25: ("1,000 clients at once: start + wait each", row25_clients, (180, 90)),
    26: ("one SSE client: events/s", row26_sse_rate, (120, 60)),
}

COMMAND = "python -m bench"
BUSY = " (the machine was busy with other work, which makes every figure noisier)"


def _describe_error(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[-1] if text else ''}".strip().rstrip(":")


async def _run_rows(ctx: Context, numbers: list[int]) -> list[Line]:
    lines: list[Line] = []
    try:
        for number in numbers:
            title, fn, (full, quick) = ROWS[number]
            box = quick if ctx.quick else full
            print(f"bench: row {number}: {title} …", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                with trio.fail_after(box):
                    got = await fn(ctx)
            except trio.TooSlowError:
                got = [Line(number, title, error=f"did not finish within its {box:.0f} s time box")]
            except Exception as exc:
                got = [Line(number, title, error=_describe_error(exc))]
            lines.extend(got)
            print(f"bench: row {number}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    finally:
        for daemon in list(ctx.registry.daemons):
            with trio.CancelScope(shield=True):
                await ctx.registry.stop_daemon(daemon)
    return lines


def _scrub(text: str, scratch: Path) -> str:
    """Paths of this machine out of a message (it may be committed with the results)."""
    for path, name in ((scratch, "<scratch>"), (ROOT, "<repo>"), (Path.home(), "~")):
        text = text.replace(str(path), name)
    return text


def run(*, quick: bool, only: list[int] | None, profile: str | None, keep: bool, readme: bool) -> int:
    """Run the rows (all, or `only`), print the table, save it; returns the exit status."""
    numbers = sorted(set(only)) if only else sorted(ROWS)
    unknown = [n for n in numbers if n not in ROWS]
    if unknown:
        print(f"bench: no row {unknown[0]}; rows are 1 to {max(ROWS)}", file=sys.stderr)
        return 2
    registry = Registry(scratch_root())
    ctx = Context(quick=quick, registry=registry, profile=profile)
    started = time.perf_counter()
    started_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    load_start = os.getloadavg()
    try:
        lines = trio.run(_run_rows, ctx, numbers)
    finally:
        killed = registry.cleanup(keep_files=keep)
        if killed:
            what = ", ".join(f"{count} {name}" for name, count in killed.most_common())
            print(f"bench: clean-up killed leftover processes: {what}", file=sys.stderr)
        if keep:
            print(f"bench: scratch kept in {registry.root}", file=sys.stderr)
    duration = time.perf_counter() - started
    load_end = os.getloadavg()
    for line in lines:
        line.note = _scrub(line.note, registry.root)
        line.error = None if line.error is None else _scrub(line.error, registry.root)
    table = render(lines)
    print(table)
    for label, summary in ctx.profiles.items():
        print(f"\nprofile of the daemon during {label}:\n{summary}", file=sys.stderr)
    machine = describe_machine()
    print(
        f"\nbench: {'quick' if quick else 'full'} run took {duration:.0f} s; load average "
        f"{load_start[0]:.2f} at start, {load_end[0]:.2f} at end",
        file=sys.stderr,
    )
    meta = {
        "command": COMMAND + (" --quick" if quick else ""),
        "mode": "quick" if quick else "full",
        "rows_run": numbers,
        "started_at": started_at,
        "duration_s": round(duration, 1),
        "machine": machine,
        "load_average": {"start": round(load_start[0], 2), "end": round(load_end[0], 2)},
    }
    if only is None:
        name = "results-quick.json" if quick else "results.json"
        (ROOT / "bench" / name).write_text(to_json(lines, meta), encoding="utf-8")
        if readme and not quick:
            sentence = (
                f"Measured on a {machine['cores']}-core {machine['cpu']} with {machine['memory_gib']} GiB "
                f"({machine['kernel']}, Python {machine['python']}): the full run took {duration:.0f} s, "
                f"with a load average of {load_start[0]:.1f} at its start and {load_end[0]:.1f} at its end"
                f"{BUSY if load_start[0] > 1 else ''}."
            )
            update_readme(ROOT / "README.md", readme_section(COMMAND, table, sentence))
    return 0
