"""An input's `input` event sits in the journal where the input met the output: after what the
process wrote before it (the prompt it answers), before what the process writes once it has it.
So do a signal's `signal` event and a resize's `resize` event."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import DaemonHandle


async def _said(wb: DaemonHandle, execution_id: str, also: str = "") -> list[tuple[str, str]]:
    """The run's stdout, input and signal events (and those of type `also`), in journal order:
    (type, text)."""
    return [
        (e["eventType"], e.get("outputDelta") or e.get("inputDelta") or e.get("signal") or "")
        for e in await wb.events(execution_id)
        if e["eventType"] in ("input", "signal", also) or e.get("stream") == "stdout"
    ]


async def _start(wb: DaemonHandle, command: str, *, tty: bool = False) -> str:
    """Start with open stdin (or on a terminal); the id once it runs (input before is a 409)."""
    started = await wb.start(command, tty=True) if tty else await wb.start(command, openStdin=True)
    with ceilings.within(30, "the run to be running"):
        while started["status"] == "queued":
            await trio.sleep(0.01)
            started = (await wb.client.get(f"/v1/executions/{started['executionId']}")).json()
    return str(started["executionId"])


async def _journaled_then(wb: DaemonHandle, execution_id: str, ready: Path) -> None:
    """Wait until the run's first output is journaled (its capture then rests a flush interval),
    then until the run made `ready` (having written what comes before it)."""
    with ceilings.within(20, "the first line journaled, then the next written"):
        while not await _said(wb, execution_id):  # noqa: ASYNC110 - a test's look
            await trio.sleep(0.01)
        while not ready.exists():  # noqa: ASYNC110, ASYNC240 - a test's look (a stat)
            await trio.sleep(0.005)


def _around(said: list[tuple[str, str]], kind: str) -> tuple[str, str, str]:
    """The stdout before the one event of `kind`, that event's text, and the stdout after it
    (how the output is cut into events depends on when the capture read it)."""
    at = [i for i, (k, _) in enumerate(said) if k == kind]
    assert len(at) == 1, said
    before = "".join(t for k, t in said[: at[0]] if k == "output")
    after = "".join(t for k, t in said[at[0] + 1 :] if k == "output")
    return before, said[at[0]][1], after


async def _send(wb: DaemonHandle, execution_id: str, **body: Any) -> None:
    response = await wb.client.post(f"/v1/executions/{execution_id}/input", json=body)
    assert response.status_code == 204, response.text


async def test_output_written_before_an_input_is_journaled_before_it(
    make_daemon: Any, tmp_path: Path
) -> None:
    """The prompt still waits in the capture (its flush interval, long here) when the answer
    comes: the input journals it first, then itself."""
    wb: DaemonHandle = await make_daemon(output_flush_ms=3000)
    ready = tmp_path / "prompted"
    command = f"echo first; sleep 0.3; printf 'name? '; touch {ready}; read -r x; echo \"hello $x\""
    execution_id = await _start(wb, command)
    await _journaled_then(wb, execution_id, ready)
    await _send(wb, execution_id, data="bob\n")
    assert (await wb.wait(execution_id))["status"] == "completed"
    said = await _said(wb, execution_id)
    assert _around(said, "input") == ("first\nname? ", "bob\n", "hello bob\n"), said


async def test_what_an_input_makes_the_process_print_is_journaled_after_it(wb: DaemonHandle) -> None:
    """Each answer's echo comes after its input event, however fast the process answers."""
    execution_id = await _start(wb, 'while read -r x; do echo "got $x"; done')
    for i in range(40):
        await _send(wb, execution_id, data=f"{i}\n")
    await _send(wb, execution_id, data="", eof=True)
    assert (await wb.wait(execution_id))["status"] == "completed"
    sent: set[str] = set()
    said = await _said(wb, execution_id)
    for kind, text in said:
        if kind == "input":
            sent.add(text.strip())
            continue
        for line in text.splitlines():
            assert line.removeprefix("got ") in sent, (line, said)
    assert len(sent) == 41 and "".join(t for k, t in said if k == "output").count("got ") == 40


@pytest.mark.parametrize("what", ["signal", "resize"])
async def test_a_signal_or_a_resize_is_journaled_between_the_output_before_and_after_it(
    what: str, make_daemon: Any, tmp_path: Path
) -> None:
    """The same for a signal's `signal` event and a terminal's `resize` event (SIGWINCH)."""
    wb: DaemonHandle = await make_daemon(output_flush_ms=3000)
    ready = tmp_path / "trapping"
    trap = "USR1" if what == "signal" else "WINCH"
    command = f"trap 'echo after; exit 0' {trap}; echo first; sleep 0.3; echo before; touch {ready}; "
    command += "while :; do sleep 0.05; done"
    execution_id = await _start(wb, command, tty=what == "resize")
    await _journaled_then(wb, execution_id, ready)
    body = {"signal": "USR1"} if what == "signal" else {"rows": 30, "cols": 100}
    response = await wb.client.post(f"/v1/executions/{execution_id}/{what}", json=body)
    assert response.status_code == (202 if what == "signal" else 204), response.text
    assert (await wb.wait(execution_id))["status"] == "completed"
    said = [(k, t.replace("\r\n", "\n")) for k, t in await _said(wb, execution_id, also=what)]
    text = "SIGUSR1" if what == "signal" else ""
    assert _around(said, what) == ("first\nbefore\n", text, "after\n"), said
