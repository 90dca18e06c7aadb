"""`workbench mcp`'s execution tool reading logs page by page, through the official MCP client
against a real daemon: a page holds at most `maxBytes` (cut inside an event, never inside a
character, the next page going on from there), and output past the event budget is said to be
missing from the events, with where to read it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_mcp import PYTHON, call, data, session, text
from tests.conftest import DaemonHandle

pytest.importorskip("mcp", reason="the optional dependency of `workbench mcp` (workbench[mcp])")


async def _pages(client: Any, eid: str, **arguments: Any) -> list[dict[str, Any]]:
    pages: list[dict[str, Any]] = []
    cursor: dict[str, Any] = {}
    while not (pages and pages[-1]["done"]):
        assert len(pages) < 200, "the pages must come to an end"
        page = await call(client, "execution", action="logs", executionId=eid, **arguments, **cursor)
        assert not page.is_error, text(page)
        pages.append(data(page))
        cursor = {"afterSequence": data(page)["nextSequence"]}
        if data(page)["nextSkipBytes"]:
            cursor["skipBytes"] = data(page)["nextSkipBytes"]
    return pages


@pytest.mark.timeout(180)
async def test_a_page_of_logs_holds_at_most_max_bytes(wb: DaemonHandle, tmp_path: Path) -> None:
    # Large events (up to 64 KiB each), of two-byte characters then one-byte ones.
    program = "import sys; sys.stdout.write('é' * 50000 + '\\n' + 'a' * 70000 + '\\n')"
    expected = "é" * 50000 + "\n" + "a" * 70000 + "\n"
    async with session(wb.url, tmp_path) as client:
        ran = await call(client, "bash", command=f'{PYTHON} -c "{program}"', waitSeconds=60)
        assert data(ran)["exitCode"] == 0, text(ran)
        eid = data(ran)["executionId"]
        first = await call(client, "execution", action="logs", executionId=eid)
        assert len(data(first)["text"].encode()) <= 16384 and data(first)["done"] is False
        assert f"skipBytes {data(first)['nextSkipBytes']}" in text(first)
        for size in (16384, 5001):
            pages = await _pages(client, eid, maxBytes=size)
            assert all(len(p["text"].encode()) <= size for p in pages)
            assert "".join(p["text"] for p in pages) == expected
            assert pages[-1]["truncated"] is False
        # A page smaller than a character still moves on, one character at a time.
        tiny = await call(client, "execution", action="logs", executionId=eid, maxBytes=1)
        assert data(tiny)["text"] == "é" and data(tiny)["nextSkipBytes"] == 2


@pytest.mark.timeout(180)
async def test_logs_say_when_output_went_past_the_event_budget(make_daemon: Any, tmp_path: Path) -> None:
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=10_000)
    expected = "".join(f"{i}\n" for i in range(1, 20_001))
    async with session(wb.url, tmp_path) as client:
        ran = await call(client, "bash", command="seq 1 20000", waitSeconds=60)
        eid = data(ran)["executionId"]
        page = await call(client, "execution", action="logs", executionId=eid, maxBytes=1_000_000)
        answer = data(page)
        assert answer["done"] is True and len(answer["text"]) <= 10_000 < len(expected)
        assert answer["truncated"] is True and answer["stdoutBytes"] == len(expected)
        assert "that is all of it" not in text(page) and "offset" in text(page), text(page)
        rest = await call(
            client, "execution", action="logs", executionId=eid, stream="stdout",
            offset=len(answer["text"]), maxBytes=1_000_000,
        )  # fmt: skip
        assert answer["text"] + data(rest)["text"] == expected and data(rest)["done"] is True


@pytest.mark.timeout(180)
async def test_logs_by_offset_never_cut_a_character(wb: DaemonHandle, tmp_path: Path) -> None:
    """By byte offset, a page ends before a character its edge would cut (which starts the next
    page); bytes that are not UTF-8 still come as U+FFFD."""
    # 300 two-byte characters: a page edge falls inside one at every size below (a size of 3 bytes
    # takes some 200 calls; 3000 of them took 2000 calls and a minute and a half of a CI run).
    program = "import sys; sys.stdout.buffer.write(('é' * 300 + 'ab€').encode() + b'\\xff!')"
    expected = "é" * 300 + "ab€" + "\ufffd!"
    async with session(wb.url, tmp_path) as client:
        ran = await call(client, "bash", command=f'{PYTHON} -c "{program}"', waitSeconds=60)
        eid = data(ran)["executionId"]
        for size in (101, 64, 3):
            pages: list[dict[str, Any]] = []
            offset = 0
            while not (pages and pages[-1]["done"]):
                assert len(pages) < 5000, "the pages must come to an end"
                page = await call(
                    client,
                    "execution",
                    action="logs",
                    executionId=eid,
                    stream="stdout",
                    offset=offset,
                    maxBytes=size,
                )
                assert not page.is_error, text(page)
                pages.append(data(page))
                assert pages[-1]["nextOffset"] > offset, pages[-1]
                offset = pages[-1]["nextOffset"]
            assert "".join(p["text"] for p in pages) == expected, size
        # A page smaller than a character gets that character, whole.
        tiny = await call(
            client, "execution", action="logs", executionId=eid, stream="stdout", offset=0, maxBytes=1
        )
        assert data(tiny)["text"] == "é" and data(tiny)["nextOffset"] == 2
