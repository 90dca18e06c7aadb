"""Pinned details of the contract: each test fails if the number or the behaviour changes.

The two that need a restart are in tests/reliability/test_seeds.py (the metadata in a lost run's
exit, a queued run that expires while the daemon is down).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from tests.conftest import DaemonHandle

KiB = 1024
HOUR_MS = 3_600_000


def ms(stamp: str) -> int:
    return round(datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


async def exits_of(wb: DaemonHandle, wait_ms: int = 5000) -> list[dict[str, Any]]:
    response = await wb.client.get("/v1/exits", params={"waitTimeoutMs": wait_ms, "limit": 1000})
    assert response.status_code == 200, response.text
    exits: list[dict[str, Any]] = response.json()["exits"]
    return exits


async def test_exit_tails_are_the_last_16_kib_of_each_stream_on_a_character_boundary(
    wb: DaemonHandle,
) -> None:
    # stdout: 20,000 bytes whose last 16 KiB start in the middle of a 3-byte character.
    # 20000 - 16384 = 3616: "€" (3 bytes) at 3615..3617, so the tail skips its last two bytes.
    command = (
        "python3 -c \"import sys; o = sys.stdout.buffer; o.write(b'a' * 3615 + '€'.encode()"
        " + b'b' * (20000 - 3618)); e = sys.stderr.buffer; e.write(b'e' * 17000 + b'END')\""
    )
    record = await wb.run(command, detached=True)
    assert record["status"] == "completed", record
    (exit_,) = await exits_of(wb)
    assert exit_["stdoutTail"] == "b" * (20000 - 3618)
    assert len(exit_["stdoutTail"].encode()) == 16 * KiB - 2
    assert exit_["stderrTail"] == "e" * (16 * KiB - 3) + "END"
    assert len(exit_["stderrTail"].encode()) == 16 * KiB


async def test_the_deadline_is_1_hour_by_default_and_24_hours_at_most_from_acceptance(
    wb: DaemonHandle,
) -> None:
    default = await wb.start("true")
    assert default["timeoutMs"] == HOUR_MS
    assert ms(default["deadlineAt"]) - ms(default["createdAt"]) == HOUR_MS
    longest = await wb.start("true", timeoutMs=24 * HOUR_MS)
    assert ms(longest["deadlineAt"]) - ms(longest["createdAt"]) == 24 * HOUR_MS
    refused = await wb.client.post(
        "/v1/executions/workbench_bash", json={"command": "true", "timeoutMs": 24 * HOUR_MS + 1}
    )
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "invalid_request"
    batch = await wb.client.post(
        "/v1/executions/batch",
        json={"items": [{"kind": "workbench_bash", "command": "true"}], "background": True},
    )
    record = batch.json()
    assert record["timeoutMs"] == HOUR_MS and ms(record["deadlineAt"]) - ms(record["createdAt"]) == HOUR_MS
    for execution in (default, longest, record):
        await wb.wait(execution["executionId"])


CAPABILITIES = {"cancellable": "hard", "streamingSupport": True, "backgroundSupport": True}


async def test_the_capability_values(wb: DaemonHandle, tmp_path: Path) -> None:
    """Computed per execution: detachable until it ends or is detached; nothing is interactive."""
    started = await wb.start(f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.02; done", stdin="input")
    assert started["capabilities"] == {**CAPABILITIES, "detachable": True, "interactive": False}
    path = f"/v1/executions/{started['executionId']}"
    assert (await wb.client.post(f"{path}/detach")).json() == {"detached": True}
    detached = (await wb.client.get(path)).json()
    assert detached["capabilities"] == {**CAPABILITIES, "detachable": False, "interactive": False}
    (tmp_path / "go").touch()
    final = await wb.wait(started["executionId"])
    assert final["capabilities"] == {**CAPABILITIES, "detachable": False, "interactive": False}
    running_batch = await wb.client.post(
        "/v1/executions/batch",
        json={"items": [{"kind": "workbench_bash", "command": "sleep 0.2"}], "background": True},
    )
    assert running_batch.json()["capabilities"] == {**CAPABILITIES, "detachable": True, "interactive": False}
    await wb.wait(running_batch.json()["executionId"])


async def test_detach_racing_the_exit_200_times_never_loses_an_outcome(wb: DaemonHandle) -> None:
    """Each outcome goes to whoever reads the record, or to the exits feed as well; never nowhere."""
    fed: list[str] = []
    read: list[str] = []
    for _ in range(200):
        started = await wb.start("true")
        response = await wb.client.post(f"/v1/executions/{started['executionId']}/detach")
        answer = response.json()
        if answer["detached"]:
            fed.append(started["executionId"])
        else:
            assert answer["execution"]["status"] == "completed", answer
            read.append(started["executionId"])
    for execution_id in fed + read:
        await wb.wait(execution_id)
    delivered = {e["executionId"] for e in await exits_of(wb, wait_ms=1000)}
    assert delivered == set(fed), "every detached outcome is in the feed, and no other"
    assert len(fed) + len(read) == 200


async def test_an_idempotency_key_is_free_again_once_its_execution_is_deleted(wb: DaemonHandle) -> None:
    body = {"command": "echo once", "background": True}
    headers = {"Idempotency-Key": "reused-after-delete"}
    first = await wb.client.post("/v1/executions/workbench_bash", json=body, headers=headers)
    assert first.status_code == 202
    await wb.wait(first.json()["executionId"])
    assert (await wb.client.delete(f"/v1/executions/{first.json()['executionId']}")).status_code == 204
    again = await wb.client.post("/v1/executions/workbench_bash", json=body, headers=headers)
    assert again.status_code == 202 and "Idempotent-Replayed" not in again.headers
    assert again.json()["executionId"] != first.json()["executionId"]
    replay = await wb.client.post("/v1/executions/workbench_bash", json=body, headers=headers)
    assert replay.status_code == 200 and replay.json()["executionId"] == again.json()["executionId"]
    await wb.wait(again.json()["executionId"])
