"""A tree that floods its progress file cannot hold the daemon's event loop (security review):
the capture reads a bounded amount of it per turn, and the latest progress line still wins.

The capture reads the progress file on the trio thread; before, it read all of it in one loop,
so gigabytes of progress lines stalled every request of the daemon while it parsed them."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.core.capture import Capture
from workbench.core.follow import Inotify
from workbench.core.layout import ExecutionDir
from workbench.core.output import OutputCapture


@pytest.fixture
def inotify() -> Iterator[Inotify]:
    handle = Inotify()
    yield handle
    handle.close()


def _capture(directory: ExecutionDir, inotify: Inotify) -> Capture:
    for name in ("stdout", "stderr"):
        directory.spool(name).touch()
    return Capture(
        journal=None,  # type: ignore[arg-type]  # these reads journal nothing
        inotify=inotify,
        execution_id="ex_1",
        directory=directory,
        output=OutputCapture(delta_max_bytes=65536, budget_bytes=5 * 1024 * 1024),
        flush_ms=3,
    )


def _counting(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[int]:
    """The bytes each read of the progress file returned."""
    got: list[int] = []
    real = os.pread

    def pread(fd: int, size: int, offset: int) -> bytes:
        data = real(fd, size, offset)
        if os.path.samestat(os.fstat(fd), os.stat(path)):
            got.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", pread)
    return got


def _flood(path: Path, lines: int) -> None:
    path.write_bytes(b"1/2 step\n" * lines + b"%d/%d step\n" % (lines, lines))


@pytest.mark.parametrize("final", [False, True])
async def test_a_flooded_progress_file_is_read_in_a_bounded_piece_and_its_latest_line_wins(
    tmp_path: Path, inotify: Inotify, monkeypatch: pytest.MonkeyPatch, final: bool
) -> None:
    directory = ExecutionDir(tmp_path)
    _flood(directory.progress, 3_000_000)  # about 27 MB
    size = directory.progress.stat().st_size
    cap = _capture(directory, inotify)
    reads = _counting(monkeypatch, directory.progress)
    events: list[Any] = cap._progress_events(final=final)
    assert sum(reads) <= 1024 * 1024, f"read {sum(reads)} bytes of {size} in one turn"
    assert len(events) == 1
    body = json.loads(events[0][1](1, "running"))
    assert (body["progress"], body["total"], body["message"]) == (3_000_000, 3_000_000, "step")
    assert cap._progress_offset == size
    cap._close()


async def test_a_small_progress_file_is_read_whole_and_its_latest_valid_line_wins(
    tmp_path: Path, inotify: Inotify
) -> None:
    directory = ExecutionDir(tmp_path)
    directory.progress.write_bytes(b"1/4 a\n2/4 b\nnot progress\n")
    cap = _capture(directory, inotify)
    events = cap._progress_events(final=True)
    body = json.loads(events[0][1](1, "running"))
    assert (body["progress"], body["total"], body["message"]) == (2, 4, "b")
    cap._close()
