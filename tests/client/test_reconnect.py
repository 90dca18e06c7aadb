"""The client survives broken connections: a daemon restarted mid-stream, a kept-alive connection closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests.cli.conftest import Cli
from tests.client.restart import keeping_daemon, restart
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, Event, LiveEvent, Unavailable


async def test_events_survive_a_daemon_restart_without_gap_or_duplicate(
    make_daemon: Any, tmp_path: Path
) -> None:
    """Promise 2: the client reconnects from the last sequence; the journal comes gapless and unique."""
    first = await keeping_daemon(make_daemon)
    seen: list[Event | LiveEvent] = []
    # It holds at line 5 until the daemon is back: some of its output comes before, the rest after
    # (however the capture cuts it into events: a loaded machine makes fewer, larger ones).
    command = (
        "for i in $(seq 1 40); do echo line $i; "
        "if [ $i = 5 ]; then until [ -e go ]; do sleep 0.02; done; fi; sleep 0.05; done"
    )
    async with AsyncClient(first.url, TOKEN, reconnect_for=30) as client:
        run = await client.run_bash(command, background=True, cwd=str(tmp_path))
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                some_output = trio.Event()

                async def follow() -> None:
                    async for event in client.events(run):
                        seen.append(event)
                        if "line 5\n" in "".join(
                            e.output_delta or "" for e in seen if e.event_type == "output"
                        ):
                            some_output.set()

                nursery.start_soon(follow)
                await some_output.wait()
                second = await restart(make_daemon, first)
                (tmp_path / "go").touch()
    sequences = [e.sequence for e in seen if isinstance(e, Event)]
    assert sequences == list(range(1, len(sequences) + 1)), "gapless, no duplicate"
    text = "".join(e.output_delta or "" for e in seen if e.event_type == "output")
    assert text == "".join(f"line {i}\n" for i in range(1, 41))
    record = await second.wait(run.execution_id)
    assert record["status"] == "completed" and record["lastSequence"] == sequences[-1]


def _record(execution_id: str = "ex_01JD0000000000000000000000") -> dict[str, Any]:
    return {
        "executionId": execution_id,
        "executionKind": "workbench_bash",
        "sessionId": "default",
        "status": "running",
        "cwd": "/",
        "image": "host",
        "createdAt": "2026-01-01T00:00:00.000Z",
        "deadlineAt": "2026-01-01T01:00:00.000Z",
        "timeoutMs": 3600000,
        "output": {"budgetBytes": 5242880},
    }


def test_a_broken_connection_is_resent_with_the_same_idempotency_key() -> None:
    """Promise 8: a start resent after a dropped connection carries the same key, so it runs once."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        if len(requests) % 2 == 1:
            raise httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=request
            )
        return httpx.Response(202 if request.method == "POST" else 200, json=_record())

    with Client("http://daemon.test", TOKEN, transport=httpx.MockTransport(handler)) as client:
        started = client.run_bash("true", background=True)
        assert started.execution_id == _record()["executionId"]
        assert client.get(started).status == "running"
    first, second = requests[0], requests[1]
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"]
    assert first.headers["Idempotency-Key"].startswith("wbc-")
    assert first.headers["Authorization"] == f"Bearer {TOKEN}"
    assert len(requests) == 4


def test_an_unreachable_daemon_is_unavailable_not_a_transport_error() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with (
        Client("http://daemon.test", TOKEN, transport=httpx.MockTransport(refuse)) as client,
        pytest.raises(Unavailable, match=r"cannot reach the daemon at http://daemon\.test"),
    ):
        client.get("ex_01JD0000000000000000000000")


async def test_unix_socket_url_for_the_client_and_the_cli(make_daemon: Any, tmp_path: Path) -> None:
    socket_path = tmp_path / "wb.sock"
    wb: DaemonHandle = await make_daemon(unix_socket=socket_path)
    url = f"unix://{socket_path}"
    async with AsyncClient(url, TOKEN) as client:
        assert client.url == url
        record = await client.run_bash("echo over the socket")
        assert record.exit_code == 0

    def blocking() -> int | None:
        with Client(url, TOKEN) as client:
            return client.run_bash("exit 4").exit_code

    assert await trio.to_thread.run_sync(blocking) == 4
    cli = Cli(url, tmp_path / "client-home")
    ran = await cli("run", "--", "echo via cli; exit 5")
    assert (ran.code, ran.out) == (5, b"via cli\n")
    assert wb.url.startswith("http://")
