"""The `sandbox` image under a root daemon runs its trees as an unprivileged user (65534 unless
WORKBENCH_SANDBOX_UID says otherwise), who owns the workspaces; the daemon still reads them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests import pg
from tests.conftest import DaemonHandle
from tests.e2e.test_sandbox_image import REASON, results, run

pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=REASON or ""),
    pytest.mark.skipif(os.geteuid() != 0, reason="the daemon runs as root only here"),
]

SESSION = "/v1/sessions/s1"


async def test_the_tree_runs_as_the_sandbox_user_with_a_writable_tmp(wb: DaemonHandle) -> None:
    record, out = await run(
        wb,
        "echo uid=$(id -u) gid=$(id -g) groups=$(id -G) user=$USER\n"
        "echo x > /tmp/t && echo tmp=$(stat -c %a /tmp)\n"
        "grep -E '^CapEff' /proc/self/status | tr -d '\\t' | tr : =",
    )
    assert record["status"] == "completed", out
    found = results(out.replace(" ", "\n"))
    assert found["uid"] == found["gid"] == found["groups"] == "65534", out
    assert found["user"] == "nobody" or found["user"] == "65534", out
    assert found["tmp"] == "1777", out
    assert found["CapEff"] == "0000000000000000", out


async def test_the_data_dir_store_and_shim_are_out_of_reach(wb: DaemonHandle) -> None:
    """Hidden, and not readable by the sandbox's user on the host either. On PostgreSQL, the
    store is the database server: the sandbox's network cannot reach it."""
    data = wb.data_dir
    if pg.current is None:
        store = data / "workbench.db"
        assert store.exists()
        reach = f"cat {store} >/dev/null 2>&1"
    else:
        reach = f"(exec 3<>/dev/tcp/127.0.0.1/{pg.current.port}) 2>/dev/null"
    record, out = await run(
        wb,
        f"{reach} && echo store=read || echo store=refused\n"
        f"cat {data}/token >/dev/null 2>&1 && echo token=read || echo token=refused\n"
        f"ls -A {data}/run 2>/dev/null | grep -q sock && echo socket=seen || echo socket=unseen\n",
    )
    assert record["status"] == "completed", out
    assert results(out) == {"store": "refused", "token": "refused", "socket": "unseen"}, out


async def test_files_round_trip_between_the_tree_and_the_file_routes(wb: DaemonHandle) -> None:
    """What the tree writes, the file routes read; what they write (nested too), the tree changes."""
    record, out = await run(wb, "mkdir -p out && echo from-tree > out/made.txt", sessionId="s1")
    assert record["status"] == "completed", out
    got = await wb.client.get(f"{SESSION}/files/out/made.txt")
    assert got.status_code == 200 and got.content == b"from-tree\n"
    put = await wb.client.put(f"{SESSION}/files/in/deeper/given.txt", content=b"from-api\n")
    assert put.status_code == 201, put.text
    record, out = await run(
        wb,
        "cat in/deeper/given.txt && echo changed >> in/deeper/given.txt && touch in/deeper/new "
        "&& rm out/made.txt && echo done",
        sessionId="s1",
    )
    assert record["status"] == "completed", out
    assert out == "from-api\ndone\n"
    assert (await wb.client.get(f"{SESSION}/files/in/deeper/given.txt")).content == b"from-api\nchanged\n"
    assert (await wb.client.get(f"{SESSION}/files/out/made.txt")).status_code == 404
    workspace: Path = wb.settings.layout.workspace("admin", "s1")
    for path in (workspace, workspace / "in", workspace / "in" / "deeper" / "given.txt"):
        st = path.stat()
        assert (st.st_uid, st.st_gid) == (65534, 65534), path


async def test_sandbox_uid_zero_runs_the_tree_as_root_as_before(make_daemon: Any) -> None:
    wb: DaemonHandle = await make_daemon(sandbox_user=(0, 0))
    record, out = await run(wb, "id -u; touch f; stat -c %u f")
    assert record["status"] == "completed", out
    assert out == "0\n0\n"
