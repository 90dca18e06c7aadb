"""Services from the client: `run_bash(service=True, ready_...)` returns once ready, `wait(until=
"ready")`, a rerun of a service is a service, and readiness options without `service` are refused
before anything is sent; on both twins."""

from __future__ import annotations

import httpx
import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle
from tests.ports import free_port
from workbench import AsyncClient, Client, ExecutionStatus


def scenario(url: str) -> None:
    port = free_port()
    with Client(url, TOKEN) as wb:
        with pytest.raises(ValueError, match="service=True"):
            wb.run_bash("true", ready_port=port)
        with pytest.raises(ValueError, match="not both"):
            wb.run_bash("true", service=True, ready_port=port, ready_log="x")
        assert wb.list(limit=5) == [], "a refused call sends nothing"
        server = wb.run_bash(
            f"python3 -m http.server {port} --bind 127.0.0.1", service=True, ready_port=port, wait_timeout=60
        )
        assert server.service and server.ready and server.status is ExecutionStatus.RUNNING
        assert server.timeout_ms is None and server.deadline_at is None, "a service has no default deadline"
        assert httpx.get(f"http://127.0.0.1:{port}/").status_code == 200
        wb.cancel(server)
        assert wb.wait(server).status is ExecutionStatus.CANCELLED

        # In the background: the record at once; wait(until="ready") for the log line.
        later = wb.run_bash(
            "sleep 0.3; echo 'Listening on 1234'; sleep 600",
            service=True,
            ready_log="Listening on",
            background=True,
        )
        assert not later.ready
        ready = wb.wait(later, timeout=60, until="ready")
        assert ready.ready and ready.ready_at is not None and not ready.terminal
        again = wb.rerun(later, background=True)
        assert again.service and again.readiness is not None and again.readiness.log_pattern == "Listening on"
        for run in (later, again):
            wb.cancel(run)
            assert wb.wait(run).status is ExecutionStatus.CANCELLED
        # Not a service: until="ready" is the end.
        plain = wb.run_bash("sleep 0.2", background=True)
        assert wb.wait(plain, timeout=60, until="ready").status is ExecutionStatus.COMPLETED


async def ascenario(url: str) -> None:
    async with AsyncClient(url, TOKEN) as wb:
        up = await wb.run_bash("echo ready; sleep 600", service=True, ready_log="^ready$", wait_timeout=60)
        assert up.ready and not up.terminal
        await wb.cancel(up)
        assert (await wb.wait(up)).status is ExecutionStatus.CANCELLED


async def test_services_with_the_blocking_client(wb: DaemonHandle) -> None:
    await trio.to_thread.run_sync(scenario, wb.url)


async def test_services_with_the_async_client(wb: DaemonHandle) -> None:
    await ascenario(wb.url)
