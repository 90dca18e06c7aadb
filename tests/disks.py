"""A small filesystem of a test's own (a tmpfs, mounted as root), to fill up and free again."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class Disk:
    """A mounted tmpfs, and a file that fills it."""

    def __init__(self, mount: Path) -> None:
        self.mount = mount
        self.filler = mount / "filler"

    def fill(self) -> None:
        """Write until the filesystem has no block left."""
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1024 * 1024, 4096, 1):
                block = b"\0" * size
                while True:
                    try:
                        os.write(fd, block)
                    except OSError as exc:
                        if exc.errno != errno.ENOSPC:
                            raise
                        break
        finally:
            os.close(fd)

    def take(self, size: int) -> None:
        """Take `size` bytes of the filesystem with the filler (`free` gives them back)."""
        with open(self.filler, "ab") as f:
            f.write(b"\0" * size)

    def grow(self, size: str) -> None:
        """Make the filesystem `size` (`16m`) big, as a volume an operator enlarges."""
        subprocess.run(["mount", "-o", f"remount,size={size}", str(self.mount)], check=True)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)


@contextlib.contextmanager
def small_disk(where: Path, size: str = "16m") -> Iterator[Disk]:
    """Mount a tmpfs of `size` at `where` (made if missing) for the block; skips without root."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    disk = Disk(where)
    try:
        yield disk
    finally:
        disk.free()
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)
