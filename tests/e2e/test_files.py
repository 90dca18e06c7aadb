"""The files of a session's workspace through the API: round trips, compare-and-swap, listings,
moves, trees in and out, sessions, sizes and the quota."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import DaemonHandle
from tests.e2e.test_contexts import reaches
from tests.ends import noted_at_each_end

FILES = "/v1/sessions/work/files"


def workspace(wb: DaemonHandle, session: str = "work", principal: str = "admin") -> Path:
    path: Path = wb.settings.layout.workspace(principal, session)
    return path


async def put(wb: DaemonHandle, path: str, data: bytes, **headers: str) -> httpx.Response:
    return await wb.client.put(f"{FILES}/{path}", content=data, headers=headers)


async def test_text_and_binary_files_come_back_byte_for_byte(wb: DaemonHandle) -> None:
    """Promise 1 for files: what is written is what is read, every byte value, large and empty."""
    cases = {
        "notes/hello.txt": "héllo wörld, ünïcode ✓\n".encode(),
        "bin/all-bytes": bytes(range(256)) * 64,
        "bin/random": os.urandom(3 * 1024 * 1024 + 17),
        "empty": b"",
        "quotes 'and' $dollars": b"echo '$HOME' \"`x`\"\n",
    }
    for path, data in cases.items():
        written = await put(wb, path, data)
        assert written.status_code == 201, written.text
        entry = written.json()
        assert (entry["path"], entry["type"], entry["sizeBytes"]) == (path, "file", len(data))
        assert written.headers["ETag"] == entry["etag"]
        read = await wb.client.get(f"{FILES}/{path}")
        assert read.status_code == 200 and read.content == data, path
        assert read.headers["ETag"] == entry["etag"]
        assert read.headers["Content-Type"] == "application/octet-stream"
        assert (workspace(wb) / path).read_bytes() == data
    # An execution of the session sees the files in its working directory.
    record = await wb.run("sha256sum bin/random | cut -c1-64", sessionId="work")
    import hashlib

    ran = await wb.events(record["executionId"])
    digest = "".join(e["outputDelta"] or "" for e in ran if e["eventType"] == "output").strip()
    assert digest == hashlib.sha256(cases["bin/random"]).hexdigest()


async def test_ranges_and_not_modified(wb: DaemonHandle) -> None:
    data = bytes(range(100))
    etag = (await put(wb, "r.bin", data)).headers["ETag"]
    part = await wb.client.get(f"{FILES}/r.bin", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.content == data[10:20]
    assert part.headers["Content-Range"] == "bytes 10-19/100"
    tail = await wb.client.get(f"{FILES}/r.bin", headers={"Range": "bytes=-5"})
    assert tail.content == data[-5:]
    beyond = await wb.client.get(f"{FILES}/r.bin", headers={"Range": "bytes=100-"})
    assert beyond.status_code == 416 and beyond.json()["error"]["code"] == "range_not_satisfiable"
    same = await wb.client.get(f"{FILES}/r.bin", headers={"If-None-Match": etag})
    assert same.status_code == 304 and same.content == b""


async def test_a_stale_if_match_is_412_and_changes_nothing(wb: DaemonHandle) -> None:
    """Compare-and-swap: a writer holding an old ETag loses, and the file keeps the winner's bytes."""
    first = await put(wb, "cas.txt", b"one")
    old = first.headers["ETag"]
    second = await put(wb, "cas.txt", b"two", **{"If-Match": old})
    assert second.status_code == 200, second.text
    new = second.headers["ETag"]
    assert new != old
    stale = await put(wb, "cas.txt", b"three", **{"If-Match": old})
    assert stale.status_code == 412 and stale.json()["error"]["code"] == "precondition_failed"
    assert (await wb.client.get(f"{FILES}/cas.txt")).content == b"two"
    deleted = await wb.client.delete(f"{FILES}/cas.txt", headers={"If-Match": old})
    assert deleted.status_code == 412
    create_only = await put(wb, "cas.txt", b"four", **{"If-None-Match": "*"})
    assert create_only.status_code == 412
    missing = await put(wb, "nowhere/cas.txt", b"x", **{"If-Match": old})
    assert missing.status_code == 412
    assert not (workspace(wb) / "nowhere").exists()
    assert (await put(wb, "fresh.txt", b"new", **{"If-None-Match": "*"})).status_code == 201
    assert (await wb.client.delete(f"{FILES}/cas.txt", headers={"If-Match": new})).status_code == 204
    assert sorted(p.name for p in workspace(wb).iterdir()) == ["fresh.txt"]  # no temporary file left


async def test_a_replaced_file_keeps_its_mode(wb: DaemonHandle) -> None:
    await put(wb, "run.sh", b"#!/bin/sh\necho one\n")
    (workspace(wb) / "run.sh").chmod(0o755)
    await put(wb, "run.sh", b"#!/bin/sh\necho two\n")
    record = await wb.run("./run.sh", sessionId="work")
    assert record["exitCode"] == 0 and os.access(workspace(wb) / "run.sh", os.X_OK)


async def test_a_replaced_file_keeps_its_permission_bits_but_never_setuid_or_setgid(wb: DaemonHandle) -> None:
    """An execution may leave a setuid file; the API's new file (its owner the directory's) does
    not take those bits over, as an archive's members do not."""
    await put(wb, "tool", b"one")
    (workspace(wb) / "tool").chmod(0o6755)
    assert (await put(wb, "tool", b"two")).status_code == 200
    assert stat.S_IMODE((workspace(wb) / "tool").stat().st_mode) == 0o755


async def test_listings_go_down_to_their_depth_and_never_follow_a_symlink(wb: DaemonHandle) -> None:
    await put(wb, "src/app.py", b"print(1)\n")
    await put(wb, "src/lib/util.py", b"x = 1\n")
    os.symlink("/etc", workspace(wb) / "outside")
    top = (await wb.client.get(f"{FILES}?list")).json()
    assert top["type"] == "directory" and [e["path"] for e in top["entries"]] == ["outside", "src"]
    link = top["entries"][0]
    assert (link["type"], link["target"]) == ("symlink", "/etc")
    deep = (await wb.client.get(f"{FILES}/src/", params={"list": "", "depth": 5})).json()
    assert [e["path"] for e in deep["entries"]] == ["src/app.py", "src/lib", "src/lib/util.py"]
    assert deep["entries"][0]["sizeBytes"] == 9 and deep["entries"][0]["etag"]
    as_dir = (await wb.client.get(f"{FILES}/src")).json()  # a directory answers its listing
    assert [e["name"] for e in as_dir["entries"]] == ["app.py", "lib"]
    one = (await wb.client.get(f"{FILES}/src/app.py", params={"list": ""})).json()
    assert one["type"] == "file" and [e["path"] for e in one["entries"]] == ["src/app.py"]
    itself = (await wb.client.get(f"{FILES}/src", params={"list": "", "depth": 0})).json()
    assert itself == {"path": "src", "type": "directory", "entries": [], "truncated": False}
    assert (await wb.client.get(f"{FILES}/nope")).status_code == 404
    assert (await wb.client.get(f"{FILES}/src", params={"list": "yes"})).status_code == 400


async def test_moves_make_parents_and_do_not_replace_unless_asked(wb: DaemonHandle) -> None:
    await put(wb, "a.txt", b"a")
    await put(wb, "b.txt", b"b")
    moved = await wb.client.post(f"{FILES}:move", json={"from": "a.txt", "to": "x/y/a.txt"})
    assert moved.status_code == 200 and moved.json()["path"] == "x/y/a.txt"
    clash = await wb.client.post(f"{FILES}:move", json={"from": "b.txt", "to": "x/y/a.txt"})
    assert clash.status_code == 409
    assert (await wb.client.get(f"{FILES}/x/y/a.txt")).content == b"a"
    for loose in (1, "yes", "true"):  # only JSON true overwrites
        refused = await wb.client.post(
            f"{FILES}:move", json={"from": "b.txt", "to": "x/y/a.txt", "overwrite": loose}
        )
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"
    assert (await wb.client.get(f"{FILES}/x/y/a.txt")).content == b"a"
    assert (await wb.client.get(f"{FILES}/b.txt")).content == b"b"
    forced = await wb.client.post(
        f"{FILES}:move", json={"from": "b.txt", "to": "x/y/a.txt", "overwrite": True}
    )
    assert forced.status_code == 200
    assert (await wb.client.get(f"{FILES}/x/y/a.txt")).content == b"b"
    into_itself = await wb.client.post(f"{FILES}:move", json={"from": "x", "to": "x/y/z"})
    assert into_itself.status_code == 409
    onto_itself = await wb.client.post(f"{FILES}:move", json={"from": "b.txt", "to": "./b.txt"})
    assert onto_itself.status_code == 409 and "onto itself" in onto_itself.json()["error"]["message"]
    gone = await wb.client.post(f"{FILES}:move", json={"from": "nope", "to": "z"})
    assert gone.status_code == 404
    bad = await wb.client.post(f"{FILES}:move", json={"from": "x", "to": "y", "extra": 1})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_request"


async def test_a_moved_symlink_answers_its_entry_with_its_target(wb: DaemonHandle) -> None:
    await put(wb, "a.txt", b"a")
    os.symlink("../a.txt", workspace(wb) / "link")
    moved = await wb.client.post(f"{FILES}:move", json={"from": "link", "to": "sub/link"})
    assert moved.status_code == 200, moved.text
    assert (moved.json()["type"], moved.json()["target"]) == ("symlink", "../a.txt")
    listed = (await wb.client.get(f"{FILES}/sub", params={"list": ""})).json()["entries"]
    assert listed == [moved.json()]


async def test_deleting_files_directories_and_whole_sessions(wb: DaemonHandle) -> None:
    await put(wb, "d/e/f.txt", b"f")
    await put(wb, "g.txt", b"g")
    assert (await wb.client.delete(f"{FILES}/d")).status_code == 204
    assert not (workspace(wb) / "d").exists()
    assert (await wb.client.delete(f"{FILES}/d")).status_code == 404
    running = await wb.start("sleep 30", sessionId="work")
    sessions = (await wb.client.get("/v1/sessions")).json()["sessions"]
    work = next(s for s in sessions if s["sessionId"] == "work")
    assert work["liveExecutions"] == 1 and work["sizeBytes"] == 1
    refused = await wb.client.delete("/v1/sessions/work")
    assert refused.status_code == 409 and (workspace(wb) / "g.txt").exists()
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])
    assert (await wb.client.delete("/v1/sessions/work")).status_code == 204
    assert not workspace(wb).exists()
    assert (await wb.client.get("/v1/sessions/work")).status_code == 404
    assert (await wb.client.get(f"{FILES}/g.txt")).status_code == 404
    # The record of what ran there stays.
    assert (await wb.client.get(f"/v1/executions/{running['executionId']}")).status_code == 200
    await put(wb, "h.txt", b"h")
    assert (await wb.client.put("/v1/sessions/other/files/i.txt", content=b"i")).status_code == 201
    busy = await wb.start("sleep 30", sessionId="other")
    refused_all = await wb.client.delete("/v1/sessions")
    assert refused_all.status_code == 409 and "other" in refused_all.json()["error"]["message"]
    assert workspace(wb).exists() and workspace(wb, "other").exists()  # nothing removed
    await wb.client.post(f"/v1/executions/{busy['executionId']}/cancel", json={})
    await wb.wait(busy["executionId"])
    assert (await wb.client.delete("/v1/sessions")).status_code == 204
    assert (await wb.client.get("/v1/sessions")).json() == {"sessions": []}


async def test_a_session_path_with_an_empty_id_removes_nothing(wb: DaemonHandle) -> None:
    """`DELETE /v1/sessions/` is a session with an empty id (an unset variable in a script, or
    `.`, which URL parsers resolve to it), not the bulk delete of every session."""
    await put(wb, "a.txt", b"a")
    assert (await wb.client.put("/v1/sessions/other/files/b.txt", content=b"b")).status_code == 201
    refused = await wb.client.delete("/v1/sessions/")
    assert refused.status_code == 404, refused.text
    assert refused.json()["error"]["code"] == "not_found"
    assert "DELETE /v1/sessions" in refused.json()["error"]["message"]
    assert workspace(wb).exists() and workspace(wb, "other").exists()
    assert (await wb.client.get("/v1/sessions/")).status_code == 200  # reading is harmless


async def test_a_session_has_no_live_execution_once_its_end_is_committed(wb: DaemonHandle) -> None:
    """Whoever learns that the last execution of a session ended (its wait returns) may delete the
    session at once: its end no longer counts as live. What the session counts is read at each
    terminal commit."""

    async def counted(execution_id: str) -> int:
        # What the session's count is made of (read at once: the test starts the next meanwhile).
        return sum(1 for row in wb.daemon.workspace.workspaces.live() if row.id == execution_id)

    async with noted_at_each_end(wb.daemon.executor.journal, counted, last="cancelled") as seen:
        quick = await wb.start("true", sessionId="work")
        assert (await wb.wait(quick["executionId"]))["status"] == "completed"
        running = await wb.start("sleep 30", sessionId="work")
        await reaches(wb, f"/v1/executions/{running['executionId']}", "running")
        await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
        assert (await wb.wait(running["executionId"]))["status"] == "cancelled"
    assert seen == [("completed", 0), ("cancelled", 0)], seen
    assert (await wb.client.delete("/v1/sessions")).status_code == 204


def a_tree(root: Path) -> dict[str, bytes]:
    files = {
        "README.md": b"# tree\n",
        "src/main.py": b"print('main')\n",
        "src/pkg/__init__.py": b"",
        "data/blob.bin": os.urandom(200_000),
        "data/deep/er/still.txt": "ünïcode\n".encode(),
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "empty").mkdir()
    os.symlink("src/main.py", root / "main-link")
    return files


async def test_a_tree_goes_up_as_a_tar_or_a_zip_and_comes_back_as_a_tar(
    wb: DaemonHandle, tmp_path: Path
) -> None:
    local = tmp_path / "local"
    local.mkdir()
    files = a_tree(local)
    tar_bytes = io.BytesIO()
    with tarfile.open(fileobj=tar_bytes, mode="w:gz") as tar:
        tar.add(local, arcname=".")
    up = await wb.client.post(f"{FILES}:upload", params={"path": "proj"}, content=tar_bytes.getvalue())
    assert up.status_code == 200, up.text
    assert up.json() == {
        "path": "proj",
        "files": 5,
        "directories": 6,
        "symlinks": 1,
        "sizeBytes": sum(len(d) for d in files.values()),
    }
    for name, data in files.items():
        assert (await wb.client.get(f"{FILES}/proj/{name}")).content == data
    assert os.readlink(workspace(wb) / "proj" / "main-link") == "src/main.py"
    assert (workspace(wb) / "proj" / "empty").is_dir()

    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    up = await wb.client.post(f"{FILES}:upload", params={"path": "zipped"}, content=zipped.getvalue())
    assert up.status_code == 200 and up.json()["files"] == 5
    for name, data in files.items():
        assert (workspace(wb) / "zipped" / name).read_bytes() == data

    down = await wb.client.get(f"{FILES}:download", params={"path": "proj"})
    assert down.status_code == 200 and down.headers["Content-Type"] == "application/x-tar"
    assert 'filename="proj.tar"' in down.headers["Content-Disposition"]
    back = tmp_path / "back"
    with tarfile.open(fileobj=io.BytesIO(down.content)) as tar:
        tar.extractall(back, filter="data")
    for name, data in files.items():
        assert (back / name).read_bytes() == data
    assert os.readlink(back / "main-link") == "src/main.py" and (back / "empty").is_dir()
    one = await wb.client.get(f"{FILES}:download", params={"path": "proj/README.md"})
    with tarfile.open(fileobj=io.BytesIO(one.content)) as tar:
        assert tar.getnames() == ["README.md"]
    assert (await wb.client.get(f"{FILES}:download", params={"path": "nope"})).status_code == 404


async def test_a_bad_archive_changes_nothing(wb: DaemonHandle) -> None:
    await put(wb, "keep.txt", b"keep")
    before = sorted(str(p) for p in workspace(wb).rglob("*"))
    junk = await wb.client.post(f"{FILES}:upload", content=b"not an archive at all")
    assert junk.status_code == 422 and junk.json()["error"]["code"] == "invalid_request"
    assert "\n" not in junk.json()["error"]["message"], junk.text
    clash = tar_of({"keep.txt/inner": b"x", "fine.txt": b"y"})
    assert (await wb.client.post(f"{FILES}:upload", content=clash)).status_code == 409
    fifo = io.BytesIO()
    with tarfile.open(fileobj=fifo, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("ok.txt"), io.BytesIO(b""))
        info = tarfile.TarInfo("pipe")
        info.type = tarfile.FIFOTYPE
        tar.addfile(info)
    assert (await wb.client.post(f"{FILES}:upload", content=fifo.getvalue())).status_code == 422
    assert sorted(str(p) for p in workspace(wb).rglob("*")) == before


async def test_a_name_longer_than_the_file_system_takes_is_422_and_changes_nothing(
    wb: DaemonHandle,
) -> None:
    """A component over 255 bytes: refused before anything is made, on every route that writes."""
    await put(wb, "keep.txt", b"keep")
    before = sorted(str(p) for p in workspace(wb).rglob("*"))
    long = "n" * 256
    assert len(("é" * 128).encode()) == 256
    for path in (long, f"x/{long}", f"deep/er/{long}", f"d/{'é' * 128}/f"):
        written = await put(wb, path, b"x")
        assert written.status_code == 422, (path[:20], written.text)
        assert "too long" in written.json()["error"]["message"]
        assert (await wb.client.delete(f"{FILES}/{path}")).status_code == 422
        moved = await wb.client.post(f"{FILES}:move", json={"from": "keep.txt", "to": f"newdir/{path}"})
        assert moved.status_code == 422, moved.text
        upload = await wb.client.post(f"{FILES}:upload", content=tar_of({f"up/{path}": b"x", "up/ok": b"y"}))
        assert upload.status_code == 422, upload.text
    assert (await put(wb, "n" * 255, b"fits")).status_code == 201
    assert (await wb.client.delete(f"{FILES}/{'n' * 255}")).status_code == 204
    assert sorted(str(p) for p in workspace(wb).rglob("*")) == before


async def test_a_percent_escape_that_is_not_utf8_is_400_not_another_name(wb: DaemonHandle) -> None:
    """`%ff` is no character: it is refused, not written as U+FFFD (which would be another file)."""
    before = sorted(str(p) for p in workspace(wb).rglob("*"))
    for response in (
        await wb.client.put(f"{FILES}/%ff.txt", content=b"x"),
        await wb.client.get(f"{FILES}/a%ff"),
        await wb.client.delete(f"{FILES}/%c3"),
        await wb.client.post(f"{FILES}:upload?path=%ff", content=tar_of({"x": b"x"})),
        await wb.client.get(f"{FILES}:download?path=%ff"),
        await wb.client.get(f"{FILES}:watch?path=%ff&timeoutMs=1000"),
    ):
        assert response.status_code == 400, (response.request.url, response.text)
        assert response.json()["error"]["code"] == "bad_request"
        assert "not UTF-8" in response.json()["error"]["message"]
    assert sorted(str(p) for p in workspace(wb).rglob("*")) == before
    # Characters escaped as UTF-8 are names like any other, U+FFFD itself included.
    for name, escaped in (("é.txt", "%C3%A9.txt"), ("\ufffd.txt", "%EF%BF%BD.txt")):
        assert (await wb.client.put(f"{FILES}/{escaped}", content=b"ok")).status_code == 201
        assert (workspace(wb) / name).read_bytes() == b"ok"


def tar_of(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    """A gzipped tar (a plain one is at least 10240 bytes)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return out.getvalue()


async def test_file_size_cap_and_quota(make_daemon: Any) -> None:
    """WORKBENCH_MAX_FILE_BYTES per file (413) and the session's quota (507): refused writes leave
    nothing, and replacing a file counts only the difference."""
    wb: DaemonHandle = await make_daemon(max_file_bytes=4000, workspace_quota_bytes=6000)

    async def chunks() -> Any:
        for _ in range(10):
            yield b"y" * 1000

    huge = await wb.client.post(
        f"{FILES}:upload", content=tar_of({"e": os.urandom(3000), "f": os.urandom(3000)})
    )
    assert huge.status_code == 413
    assert huge.json()["error"]["message"] == "the archive is larger than 4000 bytes"
    streamed = await wb.client.put(f"{FILES}/c", content=chunks())  # no Content-Length: counted
    assert streamed.status_code == 413
    # The message names the file limit, not the limit of a JSON body.
    assert streamed.json()["error"]["message"] == "the file is larger than 4000 bytes"
    assert (await put(wb, "a", b"x" * 4000)).status_code == 201
    too_big = await put(wb, "b", b"x" * 4001)
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "payload_too_large"
    assert too_big.json()["error"]["message"] == "the file is larger than 4000 bytes"
    over = await put(wb, "d", b"z" * 2500)
    assert over.status_code == 507 and over.json()["error"]["code"] == "quota_exceeded"
    assert sorted(p.name for p in workspace(wb).iterdir()) == ["a"]
    assert (await put(wb, "a", b"w" * 3000)).status_code == 200  # 3000 in place of 4000
    assert (await put(wb, "d", b"z" * 2500)).status_code == 201
    archive = tar_of({"e": b"e" * 1000})
    refused = await wb.client.post(f"{FILES}:upload", content=archive)
    assert refused.status_code == 507
    assert sorted(p.name for p in workspace(wb).iterdir()) == ["a", "d"]
    session = (await wb.client.get("/v1/sessions/work")).json()
    assert session["sizeBytes"] == 5500 and session["quotaBytes"] == 6000
    # The connection that carried a refused body still answers (or was closed and is reopened).
    assert (await wb.client.get(f"{FILES}/d")).content == b"z" * 2500


async def test_names_that_are_not_utf8_are_listed_with_u_fffd(wb: DaemonHandle) -> None:
    """Names an execution made of bytes that are not UTF-8 (a file, a directory, a symlink's
    target) are listed with U+FFFD for each bad byte, as output is, instead of failing the listing."""
    ran = await wb.run(
        "mkdir $'dir\\xfe' && touch $'dir\\xfe/in\\xff' $'top\\xff' && ln -s $'gone\\xfd' link",
        sessionId="work",
    )
    assert ran["status"] == "completed", ran
    response = await wb.client.get(FILES, params={"depth": 2})
    assert response.status_code == 200, response.text
    entries = {e["path"]: e for e in response.json()["entries"]}
    assert {"dir\ufffd", "dir\ufffd/in\ufffd", "top\ufffd", "link"} <= set(entries)
    assert entries["dir\ufffd/in\ufffd"]["name"] == "in\ufffd"
    assert entries["link"]["target"] == "gone\ufffd"
    # The bytes themselves are kept: the workspace still holds the names as they were made, and
    # a download of their directory carries them as they are.
    assert sorted(os.listdir(os.fsencode(workspace(wb)))) == [b"dir\xfe", b"link", b"top\xff"]
    down = await wb.client.get(f"{FILES}:download", params={"path": ""})
    assert down.status_code == 200, down.text
    with tarfile.open(fileobj=io.BytesIO(down.content)) as tar:
        names = {os.fsencode(m.name) for m in tar.getmembers()}
    assert {b"dir\xfe/in\xff", b"top\xff"} <= {n.removeprefix(b"./") for n in names}, names


async def test_a_path_ending_in_a_slash_is_not_written_as_a_file(wb: DaemonHandle) -> None:
    """`PUT .../files/dir/` names a directory: `422`, and nothing is made (it wrote a file `dir`)."""
    await put(wb, "keep", b"k")
    for path in ("dir/", "a/b/", "keep/"):
        refused = await put(wb, path, b"x")
        assert refused.status_code == 422, refused.text
        error = refused.json()["error"]
        assert error["code"] == "invalid_request" and "names a directory" in error["message"], error
    assert sorted(p.name for p in workspace(wb).iterdir()) == ["keep"]
    assert (workspace(wb) / "keep").read_bytes() == b"k"


async def test_a_name_with_a_newline_is_a_name_like_any(wb: DaemonHandle) -> None:
    """Linux allows any byte but `/` and NUL in a name: `nl\\nx.txt` is written, read, listed and
    deleted (it matched no route: `not_found`)."""
    written = await put(wb, "dir/nl%0Ax.txt", b"v")
    assert written.status_code == 201 and written.json()["path"] == "dir/nl\nx.txt", written.text
    assert (workspace(wb) / "dir" / "nl\nx.txt").read_bytes() == b"v"
    read = await wb.client.get(f"{FILES}/dir/nl%0Ax.txt")
    assert read.status_code == 200 and read.content == b"v"
    listed = (await wb.client.get(f"{FILES}/dir", params={"list": ""})).json()["entries"]
    assert [e["path"] for e in listed] == ["dir/nl\nx.txt"], listed
    assert (await wb.client.delete(f"{FILES}/dir/nl%0Ax.txt")).status_code == 204
    assert not (workspace(wb) / "dir" / "nl\nx.txt").exists()
