"""persistShell's kept state, without processes: the state file a tree leaves is its own to write,
as big as its file size limit lets it (16 GiB on the `sandbox` image); the daemon never reads
more of it than a state may hold."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from workbench.core import shells
from workbench.core.layout import Layout
from workbench.wire.fields import MAX_ARG_BYTES, MAX_PERSIST_COMMAND_BYTES


def ran(tmp_path: Path) -> tuple[Layout, Any, Path]:
    """A data dir, the row of a persistShell execution of session "s" that ran in it, and the
    path its shell writes its state to (its directory made)."""
    layout = Layout(tmp_path)
    row: Any = SimpleNamespace(id="ex_1", secret_env_names_json=None, principal="admin", session_id="s")
    path = shells.state_file(layout.execution(row.id))
    path.parent.mkdir(parents=True)
    return layout, row, path


def test_a_state_past_its_cap_is_never_read_whole(tmp_path: Path) -> None:
    layout, row, path = ran(tmp_path)
    with open(path, "wb") as f:
        f.truncate(64 * shells.MAX_STATE_BYTES)  # sparse: takes no disk
    tracemalloc.start()
    try:
        shells.keep(layout, row)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * shells.MAX_STATE_BYTES, peak
    assert not shells.session_file(layout, "admin", "s").exists()  # too big to be a state


def test_a_state_within_its_cap_is_kept(tmp_path: Path) -> None:
    layout, row, path = ran(tmp_path)
    path.write_bytes(b"/work\0A=1\0\0")
    shells.keep(layout, row)
    assert shells.load(shells.session_file(layout, "admin", "s")) == shells.ShellState("/work", {"A": "1"})


def test_no_workbench_variable_is_carried() -> None:
    state = shells.parse(b"/w\0WORKBENCH_URL=x\0WORKBENCH_TOKEN=y\0WORKBENCHX=z\0\0", set())
    assert isinstance(state, shells.ShellState) and state.env == {"WORKBENCHX": "z"}


def test_a_state_not_written_whole_is_not_taken() -> None:
    """The shell ends its state with an empty entry: without it (the shell could not write it
    all), it is not a state, never one without variables."""
    assert shells.parse(b"/w\0\0", set()) == shells.ShellState("/w", {})
    for raw in (b"", b"/w\0", b"/w\0A=1\0", b"/w\0A=1"):
        assert not isinstance(shells.parse(raw, set()), shells.ShellState), raw


def test_a_variable_too_big_to_pass_on_is_left_out_with_a_note(tmp_path: Path) -> None:
    layout, row, path = ran(tmp_path)
    fits = b"F=" + b"y" * (shells.MAX_VARIABLE_BYTES - 3)  # with its NUL, just what one may be
    path.write_bytes(b"/w\0A=1\0BIG=" + b"y" * shells.MAX_VARIABLE_BYTES + b"\0" + fits + b"\0\0")
    note = shells.keep(layout, row)
    assert note is not None and "BIG" in note and "128 KiB" in note and "F" not in note.split(":")[0]
    kept = shells.load(shells.session_file(layout, "admin", "s"))
    assert kept is not None and sorted(kept.env) == ["A", "F"]


def test_a_state_not_taken_leaves_the_one_before_with_a_note(tmp_path: Path) -> None:
    layout, row, path = ran(tmp_path)
    path.write_bytes(b"/w\0A=1\0\0")
    assert shells.keep(layout, row) is None
    for raw, why in ((b"/v\0", "whole"), (b"/v\0B=" + b"y" * shells.MAX_STATE_BYTES + b"\0\0", "1 MiB")):
        path.write_bytes(raw)
        note = shells.keep(layout, row)
        assert note is not None and "not kept" in note and why in note, note
        assert shells.load(shells.session_file(layout, "admin", "s")) == shells.ShellState("/w", {"A": "1"})


def test_the_state_keeping_code_fits_the_room_a_persist_shell_command_leaves() -> None:
    """`MAX_PERSIST_COMMAND_BYTES` leaves the rest of the argument to the code run before the
    command, with the state file's path of a data dir 1 KiB deep."""
    longest = "#" * MAX_PERSIST_COMMAND_BYTES
    script = shells.wrap(longest, Path("/" + "d" * 1024) / "state")
    assert len(script.encode()) <= MAX_ARG_BYTES
