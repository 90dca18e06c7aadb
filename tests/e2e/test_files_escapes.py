"""Promise 7 and 9 for files: no path leads out of a session's workspace, whatever its executions
put there, and another principal's session is not there at all."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
import trio

from tests.conftest import DaemonHandle

FILES = "/v1/sessions/work/files"
BOB = "bob-files-token-0123456789abcdef"
TOKENS = f"""
[[tokens]]
token = "{BOB}"
principal = "bob"
scopes = ["tools:execute", "logs:read"]
"""


class Host:
    """A file and a directory outside the workspace that no request may read, change or add to."""

    def __init__(self, root: Path) -> None:
        self.dir = root / "host-dir"
        self.dir.mkdir()
        self.secret = self.dir / "secret.txt"
        self.secret.write_bytes(b"host secret\n")
        os.utime(self.secret, (1_000_000_000, 1_000_000_000))

    def untouched(self) -> None:
        assert self.secret.read_bytes() == b"host secret\n"
        assert self.secret.stat().st_mtime == 1_000_000_000
        assert sorted(p.name for p in self.dir.iterdir()) == ["secret.txt"]


@pytest.fixture
async def hostile(wb: DaemonHandle, tmp_path: Path) -> AsyncIterator[tuple[DaemonHandle, Host, Path]]:
    """A workspace an execution filled with links out, a loop, a fifo and a device."""
    host = Host(tmp_path)
    ws = wb.settings.layout.workspace("admin", "work")
    relative = "../" * len(ws.parts[1:]) + str(host.secret).lstrip("/")
    script = (
        f"ln -s {host.secret} abs-link && ln -s {relative} rel-link && "
        f"ln -s {host.dir} dir-link && ln -s loop loop && mkfifo fifo && mknod dev c 1 3 && "
        "mkdir -p sub && ln -s ../../.. sub/up && ln -s sub inside && echo fine > sub/ok.txt"
    )
    made = await wb.run(script, sessionId="work")
    assert made["exitCode"] == 0, made
    assert stat.S_ISFIFO(os.lstat(ws / "fifo").st_mode) and stat.S_ISCHR(os.lstat(ws / "dev").st_mode)
    yield wb, host, ws
    host.untouched()


def refused(response: httpx.Response, what: Any) -> None:
    assert response.status_code == 422, (what, response.status_code, response.text[:300])
    assert response.json()["error"]["code"] == "invalid_request", what


ESCAPING = [
    "abs-link",
    "rel-link",
    "dir-link/secret.txt",
    "dir-link",
    "sub/up/etc/passwd",
    "sub/up",
    "%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "sub/%2e%2e/%2e%2e/x",
    "%2Fetc%2Fpasswd",
    "/etc/passwd",
    "loop",
]


async def test_reads_that_would_leave_the_workspace_are_422(hostile: Any) -> None:
    wb, _host, _ws = hostile
    for path in ESCAPING:
        refused(await wb.client.get(f"{FILES}/{path}"), ("GET", path))
        refused(await wb.client.get(f"{FILES}/{path}", params={"list": ""}), ("list", path))
        refused(await wb.client.get(f"{FILES}:download", params={"path": unquote(path)}), path)
        refused(await wb.client.get(f"{FILES}:watch", params={"path": unquote(path)}), path)
    with trio.fail_after(10):  # never opened, so never blocked on
        refused(await wb.client.get(f"{FILES}/fifo"), "fifo")
        refused(await wb.client.get(f"{FILES}/dev"), "device")
    # Inside is fine, through a symlink that stays inside too.
    assert (await wb.client.get(f"{FILES}/inside/ok.txt")).content == b"fine\n"


async def test_writes_that_would_leave_the_workspace_are_422_and_write_nothing(hostile: Any) -> None:
    wb, _host, ws = hostile
    before = {p: os.lstat(ws / p).st_mtime_ns for p in os.listdir(ws)}
    for path in ESCAPING:
        refused(await wb.client.put(f"{FILES}/{path}", content=b"pwned"), ("PUT", path))
        refused(await wb.client.put(f"{FILES}/{path}/deeper/x", content=b"pwned"), ("PUT below", path))
        if path not in ("/etc/passwd", "%2Fetc%2Fpasswd") and "%2e" not in path:
            target = f"{path}/x" if "/" not in path else path
            moved = await wb.client.post(f"{FILES}:move", json={"from": "sub/ok.txt", "to": target})
            assert moved.status_code in (409, 422), (path, moved.text)
            upload = await wb.client.post(
                f"{FILES}:upload", params={"path": unquote(path)}, content=_tar({"x": b"pwned"})
            )
            refused(upload, ("upload into", path))
    for name in ("../x", "/etc/x", "a/../../x"):
        refused(await wb.client.post(f"{FILES}:upload", content=_tar({name: b"pwned"})), ("member", name))
        moved = await wb.client.post(f"{FILES}:move", json={"from": "sub/ok.txt", "to": name})
        refused(moved, ("move to", name))
        refused(await wb.client.post(f"{FILES}:move", json={"from": name, "to": "z"}), ("move from", name))
    for link in ("/etc", "../../..", "a/../../.."):
        refused(await wb.client.post(f"{FILES}:upload", content=_tar({}, {"l": link})), ("link", link))
    # A member through a link an execution left in the workspace:
    refused(await wb.client.post(f"{FILES}:upload", content=_tar({"dir-link/x": b"pwned"})), "through")
    # A link inside the archive, then a member through it: refused as a whole.
    both = _tar({"evil/x": b"pwned"}, {"evil": "sub"})
    assert (await wb.client.post(f"{FILES}:upload", content=both)).status_code in (409, 422)
    assert {p: os.lstat(ws / p).st_mtime_ns for p in os.listdir(ws)} == before
    assert (ws / "sub" / "ok.txt").read_bytes() == b"fine\n"
    # A write through a link that stays inside lands where it points.
    through = await wb.client.put(f"{FILES}/inside/new.txt", content=b"new")
    assert through.status_code == 201 and (ws / "sub" / "new.txt").read_bytes() == b"new"


async def test_deleting_a_link_removes_the_link_not_what_it_points_to(hostile: Any) -> None:
    wb, host, ws = hostile
    for name in ("abs-link", "rel-link", "dir-link", "loop"):
        assert (await wb.client.delete(f"{FILES}/{name}")).status_code == 204, name
        assert name not in os.listdir(ws)
    host.untouched()
    for path in ("dir-link/secret.txt", "sub/up/tmp", "%2e%2e/x"):
        response = await wb.client.delete(f"{FILES}/{path}")
        assert response.status_code in (404, 422), (path, response.text)


def _tar(files: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


async def test_anothers_session_is_not_found(make_daemon: Any, tmp_path: Path) -> None:
    """Promise 9: bob reaches none of admin's sessions, on any route, and changes nothing there."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    wb: DaemonHandle = await make_daemon(tokens_file=tokens)
    assert (await wb.client.put(f"{FILES}/mine.txt", content=b"admin's")).status_code == 201
    ws = wb.settings.layout.workspace("admin", "work")
    async with httpx.AsyncClient(base_url=wb.url, headers={"Authorization": f"Bearer {BOB}"}) as bob:
        calls: list[tuple[str, str, dict[str, Any]]] = [
            ("GET", f"{FILES}/mine.txt", {}),
            ("GET", f"{FILES}?list", {}),
            ("GET", "/v1/sessions/work", {}),
            ("DELETE", "/v1/sessions/work", {}),
            ("DELETE", f"{FILES}/mine.txt", {}),
            ("GET", f"{FILES}:download", {}),
            ("GET", f"{FILES}:watch", {}),
            ("POST", f"{FILES}:move", {"json": {"from": "mine.txt", "to": "theirs.txt"}}),
        ]
        for method, path, extra in calls:
            response = await bob.request(method, path, **extra)
            assert response.status_code == 404, (method, path, response.text)
            assert response.json()["error"]["code"] == "not_found"
        assert (await bob.get("/v1/sessions")).json() == {"sessions": []}
        # Bob's own session of the same name is another directory altogether.
        assert (await bob.put(f"{FILES}/mine.txt", content=b"bob's")).status_code == 201
        assert (await bob.get(f"{FILES}/mine.txt")).content == b"bob's"
    assert (ws / "mine.txt").read_bytes() == b"admin's"
    assert sorted(os.listdir(ws)) == ["mine.txt"]
    assert (wb.settings.layout.workspace("bob", "work") / "mine.txt").read_bytes() == b"bob's"


async def test_a_bad_session_id_is_404(wb: DaemonHandle) -> None:
    for session in ("..", ".", "a%2Fb", "x" * 65, "%00"):
        response = await wb.client.get(f"/v1/sessions/{session}/files/x")
        assert response.status_code == 404, (session, response.text)
        response = await wb.client.put(f"/v1/sessions/{session}/files/x", content=b"x")
        assert response.status_code == 404, (session, response.text)
    assert os.listdir(wb.settings.layout.workspaces_dir) == []
