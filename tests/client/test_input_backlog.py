"""`send_input` of both clients on a full backlog: input of any size goes in pieces of at most
1 MiB, each sent again while the execution has not read what was sent before (`input_backlog`)
for up to `timeout`; giving up says how many bytes were taken, as `workbench send` does."""

from __future__ import annotations

import hashlib
import os
import time

import pytest
import trio

from tests.conftest import TOKEN, DaemonHandle
from workbench import AsyncClient, Client, Conflict, Execution, ExecutionStatus, InputBacklog

MiB = 1 << 20


async def _running(client: AsyncClient, command: str) -> Execution:
    run = await client.run_bash(command, background=True, open_stdin=True)
    with trio.fail_after(30):
        while run.status is ExecutionStatus.QUEUED:
            await trio.sleep(0.01)
            run = await client.get(run)
    return run


async def test_more_than_the_backlog_waits_for_a_slow_reader(wb: DaemonHandle) -> None:
    """Promise 1: 3 MB in one call to a program that reads only after a while: three pieces, the
    later ones refused until it reads, then sent again: it gets every byte once, in order."""
    data = os.urandom(3_000_000)
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await _running(client, "sleep 2; cat > got; wc -c < got; sha256sum < got | cut -d' ' -f1")
        await client.send_input(run, data, eof=True, record=False)
        done = await client.wait(run)
    assert done.status is ExecutionStatus.COMPLETED, done
    assert done.preview is not None
    assert done.preview.stdout == f"3000000\n{hashlib.sha256(data).hexdigest()}\n"
    inputs = [e for e in await wb.events(run.execution_id) if e["eventType"] == "input"]
    assert [e["inputBytes"] for e in inputs] == [MiB, MiB, 3_000_000 - 2 * MiB]


def _text_to_slow_reader(url: str, text: str) -> tuple[Execution, list[str]]:
    with Client(url, TOKEN) as wb:
        script = "sleep 1; cat > got; sha256sum < got | cut -d' ' -f1"
        run = wb.run_bash(script, background=True, open_stdin=True)
        deadline = time.monotonic() + 30
        while run.status is ExecutionStatus.QUEUED:
            assert time.monotonic() < deadline
            time.sleep(0.01)
            run = wb.get(run)
        wb.send_input(run, text, eof=True)
        done = wb.wait(run)
        deltas = [e.input_delta or "" for e in wb.events_page(run).events if e.event_type == "input"]
    return done, deltas


async def test_text_of_many_mib_is_cut_between_characters(wb: DaemonHandle) -> None:
    """`Client`: text of more than 1 MiB of UTF-8 goes in pieces cut between whole characters
    (each piece's journaled text is whole), and the program reads it all, as UTF-8."""
    text = "é€😀x" * 200_000  # 2 + 3 + 4 + 1 bytes: 2,000,000 bytes
    done, deltas = await trio.to_thread.run_sync(_text_to_slow_reader, wb.url, text)
    assert done.status is ExecutionStatus.COMPLETED, done
    assert done.preview is not None
    assert done.preview.stdout == hashlib.sha256(text.encode()).hexdigest() + "\n"
    assert len(deltas) == 2 and "".join(deltas) == text
    assert all(len(d.encode()) <= MiB for d in deltas)


async def test_giving_up_on_a_full_backlog_says_how_much_was_taken(wb: DaemonHandle) -> None:
    """A program that never reads: the first piece is taken, the second waits `timeout`, then
    InputBacklog says how many bytes were taken (in its message and `details`); `timeout=0`
    gives up at once."""
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await _running(client, "sleep 300")
        try:
            began = time.monotonic()
            with pytest.raises(InputBacklog) as caught:
                await client.send_input(run, b"x" * (2 * MiB + 5), timeout=0.5)
            assert time.monotonic() - began >= 0.5
            assert caught.value.details["takenBytes"] == MiB, caught.value.details
            assert "the first 1048576 bytes of the input were taken" in caught.value.message
            began = time.monotonic()
            with pytest.raises(InputBacklog) as again:  # the backlog is as full as before
                await client.send_input(run, "y" * MiB, timeout=0)
            assert time.monotonic() - began < 5
            assert again.value.details["takenBytes"] == 0
            assert "none of the input was taken" in again.value.message
        finally:
            await client.cancel(run)
    inputs = [e for e in await wb.events(run.execution_id) if e["eventType"] == "input"]
    assert [e["inputBytes"] for e in inputs] == [MiB]


async def test_an_execution_that_ends_while_input_waits_says_how_much_was_taken(wb: DaemonHandle) -> None:
    """A program that ends without reading: the piece waiting on its backlog is refused with
    Conflict once it ended, and the error says that the first piece was taken."""
    async with AsyncClient(wb.url, TOKEN) as client:
        run = await _running(client, "sleep 2")
        with pytest.raises(Conflict) as caught:
            await client.send_input(run, b"x" * 3_000_000)
    assert caught.value.details["takenBytes"] == MiB, caught.value.details
    assert "the first 1048576 bytes of the input were taken" in caught.value.message


def test_pieces_are_the_daemons_size_and_text_is_cut_between_characters() -> None:
    """No daemon: the shared rule's pieces (the CLI's `send` and the clients' `send_input`)."""
    from workbench.client import backlog
    from workbench.wire.interactive import MAX_INPUT_BYTES

    assert backlog.MAX_INPUT_BYTES == MAX_INPUT_BYTES, "the CLI cannot import pydantic's wire"
    assert backlog.pieces(b"") == [b""] and backlog.pieces("") == [b""]
    assert [len(p) for p in backlog.pieces(b"x" * (2 * MiB + 1))] == [MiB, MiB, 1]
    text = "x" * (MiB - 1) + "😀" + "y"
    cut = backlog.pieces(text)
    assert [len(p) for p in cut] == [MiB - 1, 5], "the emoji is not split across two pieces"
    assert b"".join(cut).decode() == text
    raw = b"x" * (MiB - 1) + "😀".encode()
    assert [len(p) for p in backlog.pieces(raw)] == [MiB, 3], "bytes are cut where they fall"


def test_a_piece_is_sent_again_only_for_its_codes_within_their_bounds() -> None:
    from workbench.client.backlog import PAUSE_MAX_S, PAUSE_S, Resend

    forever = Resend({"input_backlog": None})
    pauses = [forever.after("input_backlog") for _ in range(8)]
    assert pauses[0] == PAUSE_S and pauses[-1] == PAUSE_MAX_S
    assert forever.after("conflict") is None
    assert Resend({"input_backlog": 0}).after("input_backlog") is None
    bounded = Resend({"input_backlog": 0.05})
    first = bounded.after("input_backlog")
    assert first is not None and first <= 0.05
    time.sleep(0.06)
    assert bounded.after("input_backlog") is None


def test_giving_up_keeps_a_newer_daemons_error_code() -> None:
    """An error of a code this client does not know keeps that code when the input's give-up
    says how much was taken (it was reset to `internal`)."""
    from workbench.client.calls import UnknownCodeError
    from workbench.client.interactive import _gave_up

    error = _gave_up(UnknownCodeError("no input now", details={"x": 1}, code="input_paused"), 5)
    assert isinstance(error, UnknownCodeError) and error.code == "input_paused"
    assert error.details == {"x": 1, "takenBytes": 5}
    assert "the first 5 bytes" in error.message, error.message
