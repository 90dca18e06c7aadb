"""What an ended execution used (`usage`), and the record's version (`rowVersion`, `ETag`, `304`)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import trio

from tests import procs
from tests.conftest import DaemonHandle

MiB = 1024 * 1024
#: Holds 200 MiB (every page touched) and burns a second of CPU (user and system: reading the
#: process's CPU clock is a system call).
HUNGRY = (
    "import time\n"
    "block = bytearray(200 * 1024 * 1024)\n"
    "for i in range(0, len(block), 4096): block[i] = 1\n"
    "start = time.process_time()\n"
    "while time.process_time() - start < 1.0: pass\n"
)


@pytest.mark.parametrize("containment", procs.containment_params())
async def test_usage_of_a_run_that_holds_200_mb_and_burns_a_second(
    make_daemon: Any, containment: str
) -> None:
    """From the cgroup where there is one, else from the reaped leader's rusage: either way the
    peak is at least 200 MB and the CPU time at least the second it burned."""
    wb: DaemonHandle = await make_daemon(containment=containment)
    started = await wb.start(f"{sys.executable} -c '{HUNGRY}'")
    assert started["usage"] is None, "no usage before the end"
    record = await wb.wait(started["executionId"])
    assert record["status"] == "completed", record
    usage = record["usage"]
    assert usage["peakMemoryBytes"] >= 200 * MiB, usage
    assert usage["cpuUserMs"] + usage["cpuSystemMs"] >= 950, usage
    assert usage["cpuUserMs"] > 0 and usage["cpuSystemMs"] > 0, usage
    listed = (await wb.client.get("/v1/executions")).json()["executions"][0]
    assert listed["usage"] == usage


async def test_usage_is_in_the_exit_of_a_detached_run(wb: DaemonHandle) -> None:
    record = await wb.run("head -c 1000000 /dev/zero | md5sum >/dev/null", detached=True)
    exits = (await wb.client.get("/v1/exits", params={"waitTimeoutMs": 5000})).json()["exits"]
    assert exits[0]["usage"] == record["usage"] and record["usage"]["cpuUserMs"] is not None


async def test_the_version_grows_with_every_change_and_a_match_is_304(
    wb: DaemonHandle, tmp_path: Any
) -> None:
    started = await wb.start("while [ ! -e go ]; do sleep 0.02; done; echo out", cwd=str(tmp_path))
    path = f"/v1/executions/{started['executionId']}"
    with trio.fail_after(30):
        while (first := await wb.client.get(path)).json()["status"] != "running":  # noqa: ASYNC110 - an API state
            await trio.sleep(0.02)
    assert first.json()["rowVersion"] > started["rowVersion"] == 1
    etag = first.headers["ETag"]
    assert etag == f'"{first.json()["rowVersion"]}"'
    same = await wb.client.get(path, headers={"If-None-Match": etag})
    assert same.status_code == 304 and same.content == b"" and same.headers["ETag"] == etag
    for header in (f"W/{etag}", f'"nope", {etag}', "*"):
        assert (await wb.client.get(path, headers={"If-None-Match": header})).status_code == 304, header
    assert (await wb.client.get(path, headers={"If-None-Match": '"0"'})).status_code == 200
    assert (await wb.client.post(f"{path}/detach")).json() == {"detached": True}
    detached = await wb.client.get(path, headers={"If-None-Match": etag})
    assert detached.status_code == 200 and detached.json()["rowVersion"] > first.json()["rowVersion"]
    versions = [first.json()["rowVersion"], detached.json()["rowVersion"]]
    (tmp_path / "go").touch()
    final = await wb.wait(started["executionId"])
    versions.append(final["rowVersion"])
    assert versions == sorted(set(versions)), "grows with every change"
    last = await wb.client.get(path, headers={"If-None-Match": f'"{final["rowVersion"]}"'})
    assert last.status_code == 304
    again = await wb.client.get(path, headers={"If-None-Match": f'"{final["rowVersion"]}"'})
    assert again.status_code == 304, "a terminal record changes no more"
