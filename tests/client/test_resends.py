"""What the client resends after a broken connection, against a real daemon: a transport between
them drops the answer of a request the daemon did (as a connection lost after the request went
out), or ends every event stream early (as a proxy that closes quiet streams)."""

from __future__ import annotations

import pytest
import trio

from tests.client.transports import DropAnswers, EndStreams, RefuseFirst
from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, NotFound, Unavailable


async def test_a_context_start_whose_answer_was_lost_is_not_started_again(wb: DaemonHandle) -> None:
    """The daemon takes no idempotency key for a context: a resend would start a second one."""
    transport = DropAnswers(lambda r: r.method == "POST" and r.url.path == "/v1/contexts")
    async with AsyncClient(wb.url, TOKEN, transport=transport) as client:
        with trio.fail_after(60), pytest.raises(Unavailable, match="cannot reach the daemon"):
            await client.create_context("python")
        contexts = await client.contexts()
        assert len(contexts) == 1, [c.id for c in contexts]
        with trio.fail_after(30):
            await contexts[0].close()
        assert transport.sent.count("POST /v1/contexts") == 1


async def test_a_delete_whose_answer_was_lost_is_done_not_not_found(wb: DaemonHandle) -> None:
    """Resent, a delete finds the execution (or context) gone: the first try did it."""
    deletes = DropAnswers(lambda r: r.method == "DELETE")
    async with AsyncClient(wb.url, TOKEN, transport=deletes) as client:
        with trio.fail_after(60):
            run = await client.run_bash("true")
            await client.delete(run)  # no NotFound
        assert deletes.sent.count(f"DELETE /v1/executions/{run.execution_id}") == 2
        response = await wb.client.get(f"/v1/executions/{run.execution_id}")
        assert response.status_code == 404
    closes = DropAnswers(lambda r: r.method == "DELETE")
    async with AsyncClient(wb.url, TOKEN, transport=closes) as client:
        with trio.fail_after(60):
            ctx = await client.create_context("python")
            await ctx.close()  # no NotFound
            assert await client.contexts() == []
        assert closes.sent.count(f"DELETE /v1/contexts/{ctx.id}") == 2


async def test_a_delete_resent_after_a_refused_connection_finds_what_is_missing(wb: DaemonHandle) -> None:
    """A try refused before it was sent deleted nothing: the resend's NotFound is the answer
    (a mistyped id does not "succeed" because the first try met a daemon not yet listening)."""
    transport = RefuseFirst()
    async with AsyncClient(wb.url, TOKEN, transport=transport) as client:
        with trio.fail_after(30), pytest.raises(NotFound):
            await client.delete("ex_01JD0000000000000000000000")
        assert transport.refused == 1
        assert transport.sent == ["DELETE /v1/executions/ex_01JD0000000000000000000000"]


async def test_events_keep_following_a_quiet_run_through_streams_a_proxy_ends(wb: DaemonHandle) -> None:
    """`reconnect_for` bounds reconnecting to a daemon that went away, not to one that answers:
    each reconnect that succeeds starts it again."""
    transport = EndStreams(0.5)
    async with AsyncClient(wb.url, TOKEN, transport=transport, reconnect_for=1) as client:
        with trio.fail_after(60):
            run = await client.run_bash("sleep 4; echo done", background=True)
            events = [event async for event in client.events(run)]
    assert events[-1].event_type == "status" and events[-1].status == "completed"
    assert "".join(e.output_delta or "" for e in events if e.event_type == "output") == "done\n"
    assert transport.streams >= 4
