"""Images and session workspaces against a real daemon: listing, choosing, errors, persistence."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DaemonHandle, daemon_settings
from workbench.core import daemon as daemon_module
from workbench.core.daemon import open_daemon
from workbench.core.images import EXECUTION_PATH, Image, default_images_dir, load_images
from workbench.wire.errors import ConfigError

BASH = "/v1/executions/workbench_bash"


@pytest.fixture
def images_dir(tmp_path: Path) -> Path:
    """A copy of the images folder, for a test to change."""
    copy = tmp_path / "images"
    shutil.copytree(default_images_dir(), copy)
    return copy


async def test_images_lists_every_image_with_what_runs_here(wb: DaemonHandle) -> None:
    response = await wb.client.get("/v1/images")
    assert response.status_code == 200
    images = {i["name"]: i for i in response.json()["images"]}
    assert {"host", "sandbox"} <= set(images)
    host = images["host"]
    assert host["available"] is True and host["unavailableReason"] is None
    assert host["isolation"] == {"filesystem": "host", "network": True, "pidNamespace": False}
    assert {"bash", "sh", "python"} <= set(host["languages"])
    has_node = shutil.which("node", path=EXECUTION_PATH) is not None
    assert ("node" in host["languages"]) == has_node
    assert host["description"]
    box = images["sandbox"]
    assert box["isolation"] == {"filesystem": "sandbox", "network": False, "pidNamespace": True}
    if shutil.which("bwrap") is None:
        assert box["available"] is False and "bubblewrap" in box["unavailableReason"]
    assert set(box) == set(host) == {
        "name", "description", "languages", "isolation", "available", "unavailableReason"
    }  # fmt: skip
    bad = await wb.client.get("/v1/images", params={"all": "1"})
    assert bad.status_code == 400


async def test_an_unknown_image_is_refused_naming_the_images(wb: DaemonHandle) -> None:
    """Promise 7: a clear error that changes nothing."""
    response = await wb.client.post(BASH, json={"command": "true", "image": "ubuntu"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "unknown_image"
    assert "ubuntu" in error["message"] and "host" in error["message"] and "sandbox" in error["message"]
    code = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "python", "code": "1", "image": "nope"}
    )
    assert code.json()["error"]["code"] == "unknown_image"
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []


async def test_an_unavailable_image_is_listed_with_its_reason_and_refused(
    make_daemon: Any, images_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without bubblewrap, `sandbox` is listed as unavailable with why, and asking for it is a 422."""

    def without_bwrap(directory: Path, *, bwrap: str | None, user: Any = None) -> dict[str, Image]:
        return load_images(directory, bwrap=None, user=user)

    monkeypatch.setattr(daemon_module, "load_images", without_bwrap)
    wb: DaemonHandle = await make_daemon(images_dir=images_dir)
    images = {i["name"]: i for i in (await wb.client.get("/v1/images")).json()["images"]}
    box = images["sandbox"]
    assert box["available"] is False
    assert "bubblewrap" in box["unavailableReason"] and "not installed" in box["unavailableReason"]
    assert images["host"]["available"] is True
    response = await wb.client.post(BASH, json={"command": "true", "image": "sandbox"})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "image_unavailable"
    assert box["unavailableReason"] in error["message"]
    code = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "python", "code": "1", "image": "sandbox"}
    )
    assert code.json()["error"]["code"] == "image_unavailable"
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []
    assert list((wb.data_dir / "workspaces").iterdir()) == []


async def test_a_bubblewrap_that_cannot_work_here_makes_the_sandbox_unavailable(
    make_daemon: Any, images_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bwrap is tried once at start: one that is installed but refused namespaces is no sandbox."""
    broken = tmp_path / "bwrap"
    broken.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    broken.chmod(0o755)

    def with_broken_bwrap(directory: Path, *, bwrap: str | None, user: Any = None) -> dict[str, Image]:
        return load_images(directory, bwrap=str(broken), user=user)

    monkeypatch.setattr(daemon_module, "load_images", with_broken_bwrap)
    wb: DaemonHandle = await make_daemon(images_dir=images_dir)
    images = {i["name"]: i for i in (await wb.client.get("/v1/images")).json()["images"]}
    assert images["sandbox"]["available"] is False
    assert images["sandbox"]["unavailableReason"] == (
        "bubblewrap does not work here: bwrap: No permissions to create new namespace"
    )
    response = await wb.client.post(BASH, json={"command": "true", "image": "sandbox"})
    assert response.json()["error"]["code"] == "image_unavailable"


async def test_an_image_of_its_own_with_its_env_and_languages(make_daemon: Any, images_dir: Path) -> None:
    (images_dir / "minimal.toml").write_text(
        'description = "sh only"\nshell = ["sh", "-c"]\n'
        '[languages.sh]\ncommand = ["sh", "{file}"]\nextension = ".sh"\n'
        '[languages.ghost]\ncommand = ["no-such-interpreter-here", "{file}"]\n'
        '[env]\nFLAVOUR = "minimal"\n'
    )
    wb: DaemonHandle = await make_daemon(images_dir=images_dir)
    images = {i["name"]: i for i in (await wb.client.get("/v1/images")).json()["images"]}
    assert images["minimal"]["languages"] == ["sh"]
    record = await wb.run('echo "$FLAVOUR ${BASH_VERSION:-no-bash}"', image="minimal")
    events = await wb.events(record["executionId"])
    assert "".join(e["outputDelta"] for e in events if e["eventType"] == "output") == "minimal no-bash\n"
    ghost = await wb.client.post(
        "/v1/executions/workbench_code", json={"language": "ghost", "code": "", "image": "minimal"}
    )
    assert ghost.json()["error"]["code"] == "unsupported_language"
    assert ghost.json()["error"]["details"]["languages"] == ["sh"]


async def test_a_bad_image_file_stops_the_daemon_naming_file_and_field(
    tmp_path: Path, images_dir: Path
) -> None:
    (images_dir / "broken.toml").write_text('shell = ["bash", "-c"]\n[limits]\nmemory = "lots"\n')
    settings = daemon_settings(tmp_path / "data", images_dir=images_dir)
    with pytest.raises(ConfigError) as caught:
        async with open_daemon(settings):
            pass
    assert "broken.toml" in str(caught.value) and "limits.memory" in str(caught.value)
    (images_dir / "broken.toml").unlink()
    (images_dir / "host.toml").unlink()
    with pytest.raises(ConfigError, match=r"host\.toml"):
        async with open_daemon(settings):
            pass


async def test_a_session_workspace_is_made_on_first_use_and_keeps_files(wb: DaemonHandle) -> None:
    workspace = wb.data_dir / "workspaces" / "admin" / "proj-1"
    assert not workspace.exists()
    first = await wb.run("echo draft > notes; pwd", sessionId="proj-1")
    assert first["status"] == "completed" and first["cwd"] == str(workspace)
    assert first["sessionId"] == "proj-1"
    assert workspace.is_dir() and (workspace / "notes").read_text() == "draft\n"
    second = await wb.run("cat notes", sessionId="proj-1")
    assert second["status"] == "completed"
    default = await wb.run("pwd; test ! -e notes")
    assert default["status"] == "completed" and default["cwd"] == str(
        wb.data_dir / "workspaces" / "admin" / "default"
    )
    other = await wb.run("test ! -e notes", sessionId="proj-2")
    assert other["status"] == "completed"


async def test_an_explicit_cwd_wins_on_the_host_image(wb: DaemonHandle, tmp_path: Path) -> None:
    record = await wb.run("pwd", cwd=str(tmp_path), sessionId="s")
    assert record["cwd"] == str(tmp_path)
    assert not (wb.data_dir / "workspaces" / "admin" / "s").exists()


@pytest.mark.parametrize(
    "session_id", ["..", ".", "a/b", "../etc", "/abs", "x" * 65, "", "with space", "é", "a\\b", "a\x00b"]
)
async def test_a_bad_session_id_is_refused_and_makes_nothing(wb: DaemonHandle, session_id: str) -> None:
    """Promise 7: no path tricks; nothing is created."""
    response = await wb.client.post(BASH, json={"command": "touch /tmp/never", "sessionId": session_id})
    assert response.status_code == 422, session_id
    error = response.json()["error"]
    assert error["code"] == "invalid_request"
    assert "sessionId" in str(error)
    assert list((wb.data_dir / "workspaces").iterdir()) == []
    assert (await wb.client.get("/v1/executions")).json()["executions"] == []


async def test_session_ids_at_the_limits_are_accepted(wb: DaemonHandle) -> None:
    for session_id in ("x" * 64, "a.b-c_D9", "...", ".hidden"):
        record = await wb.run("true", sessionId=session_id)
        assert record["status"] == "completed", session_id
        assert Path(record["cwd"]) == wb.data_dir / "workspaces" / "admin" / session_id
        assert os.path.dirname(record["cwd"]) == str(wb.data_dir / "workspaces" / "admin")
