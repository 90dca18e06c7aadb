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


def test_a_state_past_its_cap_is_never_read_whole(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    row: Any = SimpleNamespace(id="ex_1", secret_env_names_json=None, principal="admin", session_id="s")
    path = shells.state_file(layout.execution(row.id))
    path.parent.mkdir(parents=True)
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
    layout = Layout(tmp_path)
    row: Any = SimpleNamespace(id="ex_1", secret_env_names_json=None, principal="admin", session_id="s")
    path = shells.state_file(layout.execution(row.id))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"/work\0A=1\0")
    shells.keep(layout, row)
    assert shells.load(shells.session_file(layout, "admin", "s")) == shells.ShellState("/work", {"A": "1"})


def test_no_workbench_variable_is_carried() -> None:
    state = shells.parse(b"/w\0WORKBENCH_URL=x\0WORKBENCH_TOKEN=y\0WORKBENCHX=z\0\0", set())
    assert state is not None and state.env == {"WORKBENCHX": "z"}
