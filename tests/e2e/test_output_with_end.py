"""A short command's output rides with its end; a longer one's is journaled while it runs.

Issue 20 ("Hot path"): what a new execution writes in its first moments waits a little for its
end (`capture.YOUNG_HOLD_S`), and what is read at the end commits in the terminal status's
transaction, not in one of its own. Promise 2 holds: the terminal status event is last.
"""

from __future__ import annotations

from typing import Any

import pytest
import trio

from tests import ceilings
from tests.conftest import DaemonHandle
from workbench.core import capture
from workbench.core import finish as finish_module
from workbench.core import preview as preview_module


def _appends_of(wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The executions the store is asked to append events to (the journal's own appends)."""
    store = wb.daemon.service.store
    seen: list[str] = []
    real = store.append_events

    async def append_events(execution_id: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(execution_id)
        return await real(execution_id, *args, **kwargs)

    monkeypatch.setattr(store, "append_events", append_events)
    return seen


async def test_a_short_commands_output_commits_with_its_end(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Held long enough for any machine: the command's end, not the hold's, comes first.
    monkeypatch.setattr(capture, "YOUNG_HOLD_S", 30.0)
    appends = _appends_of(wb, monkeypatch)
    record = await wb.run("echo one; echo two >&2; printf three")
    assert record["status"] == "completed", record
    assert record["executionId"] not in appends, f"its output was appended on its own: {appends}"
    events = await wb.events(record["executionId"])
    assert [e["eventType"] for e in events][-1] == "status" and events[-1]["status"] == "completed"
    out = "".join(e["outputDelta"] for e in events if e["eventType"] == "output" and e["stream"] == "stdout")
    err = "".join(e["outputDelta"] for e in events if e["eventType"] == "output" and e["stream"] == "stderr")
    assert (out, err) == ("one\nthree", "two\n")
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))


async def test_output_of_a_run_past_the_hold_is_journaled_while_it_runs(wb: DaemonHandle) -> None:
    record = await wb.start("echo early; exec sleep 30")
    execution_id = record["executionId"]
    with ceilings.within(20, "the early line to be journaled while the command runs"):
        while True:
            events = await wb.events(execution_id)
            if any(e["eventType"] == "output" for e in events):
                break
            await trio.sleep(0.02)
    assert (await wb.client.get(f"/v1/executions/{execution_id}")).json()["status"] == "running"
    assert "".join(e["outputDelta"] for e in events if e["eventType"] == "output") == "early\n"
    await wb.client.post(f"/v1/executions/{execution_id}/cancel")
    assert (await wb.wait(execution_id))["status"] == "cancelled"


async def test_output_held_for_the_end_goes_with_its_artifacts_and_their_offsets(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept as artifacts (not UTF-8), the held output commits with them and with the offsets it
    reaches: a restart between that commit and the end's resumes after it, not before (no output
    journaled twice)."""
    monkeypatch.setattr(capture, "YOUNG_HOLD_S", 30.0)
    store = wb.daemon.service.store
    seen: list[tuple[list[str], dict[str, Any], int]] = []
    real = store.append_events

    async def append_events(execution_id: str, events: Any, fields: Any, **kwargs: Any) -> Any:
        seen.append(([kind for kind, _ in events], dict(fields), len(kwargs.get("artifacts", ()))))
        return await real(execution_id, events, fields, **kwargs)

    monkeypatch.setattr(store, "append_events", append_events)
    record = await wb.run("printf 'a\\377b'")
    assert record["status"] == "completed" and record["artifacts"], record
    assert len(seen) == 1, seen
    kinds, fields, artifacts = seen[0]
    assert kinds == ["output", "artifact"] and artifacts == 1
    assert fields["stdout_offset"] == 3 and fields["stdout_bytes"] == 3, fields


async def test_output_held_for_an_end_that_failed_goes_with_the_end_tried_again(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An end that fails before its commit (a bug: here the record's preview raises once) is
    tried again as `failed`, and the output held for it is journaled with that end (promise 1)."""
    monkeypatch.setattr(capture, "YOUNG_HOLD_S", 30.0)
    real = preview_module.execution_preview
    failed: list[bool] = []

    async def preview_failing_once(*args: Any, **kwargs: Any) -> Any:
        if not failed:
            failed.append(True)
            raise RuntimeError("a preview that failed")
        return await real(*args, **kwargs)

    monkeypatch.setattr(finish_module, "execution_preview", preview_failing_once)
    record = await wb.run("echo hi")
    assert record["status"] == "failed" and record["error"]["code"] == "internal", record
    events = await wb.events(record["executionId"])
    assert [(e["eventType"], e.get("outputDelta")) for e in events[-2:]] == [
        ("output", "hi\n"),
        ("status", None),
    ], events


async def test_an_interactive_runs_prompt_is_journaled_before_the_answer_to_it(
    wb: DaemonHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output that others answer (a prompt, before its input) is not held for the end: the
    journal has the prompt before the input that answers it."""
    monkeypatch.setattr(capture, "YOUNG_HOLD_S", 30.0)  # were it held, the prompt would wait
    record = await wb.start("printf 'name? '; read -r x; echo \"hello $x\"", openStdin=True)
    execution_id = record["executionId"]
    with ceilings.within(10, "the prompt to be journaled while the run waits for its answer"):
        while not any(e["eventType"] == "output" for e in await wb.events(execution_id)):  # noqa: ASYNC110 - a test's look
            await trio.sleep(0.02)
    response = await wb.client.post(f"/v1/executions/{execution_id}/input", json={"data": "bob\n"})
    assert response.status_code == 204, response.text
    assert (await wb.wait(execution_id))["status"] == "completed"
    said = [
        (e["eventType"], e.get("outputDelta") or e.get("inputDelta"))
        for e in await wb.events(execution_id)
        if e["eventType"] in ("output", "input")
    ]
    # And what the answer makes it print comes after the input (tests/e2e/test_input_order.py).
    assert said == [("output", "name? "), ("input", "bob\n"), ("output", "hello bob\n")], said
