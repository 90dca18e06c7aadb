"""`workbench ls`: executions newest first, as a table, ids only, JSON, or redrawn in place (`--watch`).

The API filters by one status at a time: several are one listing per status, merged by id (ids
sort by creation time), each read a page at a time as the merge needs it.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import sys
import time

from workbench.cli import render
from workbench.cli.exitcodes import UsageError
from workbench.cli.http import Http

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

NOT_ENDED = ("queued", "running", "cancel_requested")
PAGE_MAX = 1000
WATCH_EVERY_S = 1.0


def cmd_ls(http: Http, args: argparse.Namespace) -> int:
    if args.running and args.status:
        raise UsageError(
            "--running is --status queued,running,cancel_requested: give it or --status, not both"
        )
    statuses = [s for group in args.status or () for s in group] or (list(NOT_ENDED) if args.running else [])
    if args.watch:
        return _watch(http, args, statuses)
    records, more = newest(http, args, statuses, None if args.all else args.limit)
    if args.json:
        cursor = records[-1]["executionId"] if more else None
        print(json.dumps({"executions": records, "nextCursor": cursor}, indent=2, ensure_ascii=False))
    elif args.quiet:
        sys.stdout.write("".join(f"{r['executionId']}\n" for r in records))
    else:
        print(render.executions_table(records, trunc=not args.no_trunc, wide=args.wide))
    if more:
        print(
            f"workbench: the newest {len(records)} shown; there are more (--all, or --limit N)",
            file=sys.stderr,
        )
    return 0


def newest(
    http: Http, args: argparse.Namespace, statuses: list[str], limit: int | None
) -> tuple[list[dict[str, Any]], bool]:
    """Up to `limit` records (None: all), newest first, and whether there are more."""
    base = {
        "kind": args.kind,
        "sessionId": args.session,
        "service": "true" if getattr(args, "services", False) else None,
    }
    size = PAGE_MAX if limit is None else min(PAGE_MAX, limit + 1)
    wanted = dict.fromkeys(statuses) or [None]
    streams = [_pages(http, {**base, "status": status}, size) for status in wanted]
    merged = heapq.merge(*streams, key=lambda r: str(r["executionId"]), reverse=True)
    if limit is None:
        return list(merged), False
    records = list(itertools.islice(merged, limit + 1))
    return records[:limit], len(records) > limit


def _pages(http: Http, query: dict[str, Any], size: int) -> Iterator[dict[str, Any]]:
    cursor = None
    while True:
        page = http.json("GET", "/v1/executions", query={**query, "limit": size, "cursor": cursor})
        yield from page["executions"]
        cursor = page["nextCursor"]
        if cursor is None:
            return


def _watch(http: Http, args: argparse.Namespace, statuses: list[str]) -> int:
    """Redraw the table in place every second until Ctrl-C (which ends it normally: exit 0)."""
    if args.json or args.quiet:
        raise UsageError("--watch: not with --json or -q (it draws a table)")
    if not sys.stdout.isatty():
        raise UsageError("--watch: stdout is not a terminal (without --watch, ls prints the table once)")
    import shutil

    out = sys.stdout
    drawn = 0
    out.write("\x1b[?25l")  # no cursor blinking over the table
    try:
        while True:
            size = shutil.get_terminal_size()
            room = max(1, size.lines - 3)  # the header, the footer, and the line the cursor rests on
            limit = room if args.all else min(args.limit, room)
            records, more = newest(http, args, statuses, limit)
            # Each line fits in one row: moving up `drawn` rows lands on the first line again.
            cut = size.columns - 1
            lines = render.executions_table(records, trunc=True, columns=cut).splitlines()
            lines.append(
                f"{time.strftime('%H:%M:%S')}  every {WATCH_EVERY_S:g}s, Ctrl-C to stop"
                + ("  (more rows than the screen holds)" if more else "")
            )
            up = f"\r\x1b[{drawn}A" if drawn else ""
            out.write(up + "".join(f"\x1b[2K{line[:cut]}\n" for line in lines) + "\x1b[J")
            out.flush()
            drawn = len(lines)
            time.sleep(WATCH_EVERY_S)
    except KeyboardInterrupt:
        return 0
    finally:
        out.write("\x1b[?25h")
        out.flush()
