"""Hostile code: what an execution can see of the daemon (environment, token, descriptors, the
data dir's internals), on each image."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import TOKEN, DaemonHandle
from tests.e2e.test_hostile_input import BASH, CODE


async def output_of(wb: DaemonHandle, record: dict[str, Any]) -> str:
    assert record["status"] == "completed", record
    events = await wb.events(record["executionId"])
    return "".join(e["outputDelta"] for e in events if e["eventType"] == "output" and e["stream"] == "stdout")


FD_LINE = re.compile(r" (\d+) -> (.*)$", re.MULTILINE)
#: The shell's own pid as /proc names it (/proc/self/stat): inside a pid namespace `$$` is the
#: namespace's, while /proc is the host's.
HOST_PID = "read -r me _ < /proc/self/stat"
LIST_FDS = f"{HOST_PID}; ls -l /proc/$me/fd; true"


@pytest.mark.parametrize(
    "image",
    [
        "host",
        pytest.param(
            "sandbox",
            marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
        ),
    ],
)
async def test_executions_hold_only_their_stdio(wb: DaemonHandle, image: str) -> None:
    """Promise 9: an execution starts with fds 0, 1 and 2 only: none of the daemon's is inherited.

    `ls`, a child of the shell, lists the shell's descriptors, so its own (the open listing) is not
    among them. `true` after it keeps bash from exec'ing `ls` in its own place.
    """
    images = {i["name"]: i for i in (await wb.client.get("/v1/images")).json()["images"]}
    assert images[image]["available"], images[image]
    plain = await wb.run(LIST_FDS, image=image)
    fed = await wb.run(LIST_FDS, image=image, stdin="x")
    for record, stdin in ((plain, "/dev/null"), (fed, "stdin")):
        fds = dict((int(fd), target) for fd, target in FD_LINE.findall(await output_of(wb, record)))
        assert sorted(fds) == [0, 1, 2], fds
        assert fds[0].endswith(stdin), fds
        assert fds[1].endswith("/stdout") and fds[2].endswith("/stderr"), fds
    # The same from a process the code starts: Python's listing holds one fd while it reads.
    code = (
        "import os\n"
        "print(sorted(int(f) for f in os.listdir('/proc/self/fd') if os.path.exists(f'/proc/self/fd/{f}')))"
    )
    record = (await wb.client.post(CODE, json={"language": "python", "code": code, "image": image})).json()
    assert (await output_of(wb, record)).strip() == "[0, 1, 2]"


async def test_executions_never_see_the_daemons_environment_or_token(
    make_daemon: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Promise 9: an execution's environment is the clean base, the image's and the request's only."""
    secret = "daemon-only-secret-value"
    # Set before the daemon (and its process supervisor) start, so both inherit them.
    monkeypatch.setenv("WORKBENCH_TOKEN", TOKEN)
    monkeypatch.setenv("DAEMON_ONLY_SECRET", secret)
    wb: DaemonHandle = await make_daemon()
    record = await wb.run(f"{HOST_PID}; tr '\\0' '\\n' < /proc/$me/environ; true", env={"MINE": "mine"})
    environ = dict(line.split("=", 1) for line in (await output_of(wb, record)).splitlines())
    from workbench.core.launch import base_env

    allowed = set(base_env("x", wb.data_dir)) | set(wb.daemon.images["host"].env) | {"MINE"}
    assert set(environ) <= allowed, set(environ) - allowed
    assert environ["MINE"] == "mine"
    assert not any(TOKEN in v or secret in v for v in environ.values())
    # The only paths into the data dir are the execution's own directory and its workspace.
    own = (str(wb.data_dir / "executions" / record["executionId"]), str(wb.data_dir / "workspaces"))
    assert all(v.startswith(own) for v in environ.values() if str(wb.data_dir) in v), environ


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
async def test_sandboxed_executions_never_see_the_data_dir_internals(make_daemon: Any) -> None:
    """Promise 9: in the sandbox image the store, the token file and the supervisor's socket are
    out of sight; only the execution's own directory and the workspaces show through."""
    wb: DaemonHandle = await make_daemon(token=None)
    token = (wb.data_dir / "token").read_text().strip()
    client = httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with client:
        command = f"ls -a {wb.data_dir} {wb.data_dir}/executions; cat {wb.data_dir}/token; true"
        response = await client.post(BASH, json={"command": command, "image": "sandbox"})
        record = response.json()
        assert record["status"] == "completed", record
        page = (await client.get(f"/v1/executions/{record['executionId']}/events")).json()
    out = "".join(e["outputDelta"] for e in page["events"] if e["eventType"] == "output")
    for internal in ("workbench.db", "daemon.lock", "run", "token"):
        assert internal not in out.split(), out
    assert token not in out
    assert record["executionId"] in out


async def test_workspaces_on_a_filesystem_of_their_own(make_daemon: Any, tmp_path: Path) -> None:
    """WORKBENCH_WORKSPACES_DIR: sessions' workspaces live there, not in the data dir, so files an
    execution writes there cannot fill the store's disk; a sandboxed execution still sees only its
    own session's workspace."""
    workspaces = tmp_path / "workspaces-fs"
    wb: DaemonHandle = await make_daemon(workspaces_dir=workspaces)
    record = await wb.run("pwd; echo data > made-here")
    assert record["status"] == "completed", record
    assert (await output_of(wb, record)) == f"{workspaces}/admin/default\n"
    assert (workspaces / "admin" / "default" / "made-here").read_text() == "data\n"
    assert not (wb.data_dir / "workspaces" / "admin").exists()
    if shutil.which("bwrap") is None:
        return
    (workspaces / "admin" / "other").mkdir(parents=True)
    (workspaces / "admin" / "other" / "secret").write_text("not yours\n")
    command = f"cat {workspaces}/admin/other/secret; ls {workspaces}; pwd; true"
    sandboxed = await wb.run(command, image="sandbox", sessionId="mine")
    assert sandboxed["status"] == "completed", sandboxed
    out = await output_of(wb, sandboxed)
    assert "not yours" not in out and "other" not in out.split(), out
    assert f"{workspaces}/admin/mine" in out
