"""The data dir's layout: paths of executions and workspaces, and the move to per-principal workspaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.layout import Layout


def test_workspaces_are_per_principal_and_names_stay_one_component(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    assert layout.workspace("alice", "s") == tmp_path / "workspaces" / "alice" / "s"
    assert layout.workspace("alice", "s") != layout.workspace("bob", "s")
    for principal, session in (("..", "s"), ("alice", ".."), ("a/b", "s"), ("alice", ""), ("", "s")):
        with pytest.raises(ValueError):
            layout.workspace(principal, session)


def test_shared_workspaces_of_the_first_layout_go_to_admin_once(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    old = layout.workspaces_dir / "default"
    old.mkdir(parents=True)
    (old / "notes.txt").write_text("kept")
    (layout.workspaces_dir / "admin").mkdir()  # a session that happened to be called admin
    assert layout.adopt_shared_workspaces("admin") == ["admin", "default"]
    assert (layout.workspace("admin", "default") / "notes.txt").read_text() == "kept"
    assert layout.workspace("admin", "admin").is_dir()
    assert sorted(p.name for p in layout.workspaces_dir.iterdir()) == ["admin"]
    assert (tmp_path / ".workspaces-per-principal").exists()
    # Once moved, a later start moves nothing, even a principal's own directory.
    layout.workspace("bob", "x").mkdir(parents=True)
    assert layout.adopt_shared_workspaces("admin") == []
    assert layout.workspace("bob", "x").is_dir()


def test_a_new_data_dir_is_marked_per_principal(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    layout.workspaces_dir.mkdir(parents=True)
    assert layout.adopt_shared_workspaces("admin") == []
    layout.workspace("admin", "default").mkdir(parents=True)
    assert layout.adopt_shared_workspaces("admin") == []
    assert layout.workspace("admin", "default").is_dir()
