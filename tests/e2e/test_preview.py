"""The record's preview against a real daemon: small, large, interleaved, live, plain, listed.

API.md v2, "Output in the record": every record of a start, GET and wait carries `preview`,
live while running and final at the end; a listing only with `?include=preview`.
"""

from __future__ import annotations

import re
from typing import Any

import trio

from tests import ceilings
from tests.conftest import DaemonHandle

ELIDED = re.compile(r"\[\.\.\. (\d+) bytes elided \.\.\.\]\n")


async def test_a_small_output_is_whole_in_the_start_answer_get_and_wait(wb: DaemonHandle) -> None:
    record = await wb.run("echo hello; echo oops >&2; printf 'no newline'")
    assert record["preview"] == {
        "stdout": "hello\nno newline",
        "stderr": "oops\n",
        "stdoutElidedBytes": 0,
        "stderrElidedBytes": 0,
    }
    eid = record["executionId"]
    got = await wb.client.get(f"/v1/executions/{eid}")
    assert got.json()["preview"] == record["preview"]
    assert (await wb.wait(eid))["preview"] == record["preview"]


async def test_six_megabytes_keep_their_head_and_tail_within_the_limit(wb: DaemonHandle) -> None:
    """Past the event budget too: the preview is made from the spool files' two ends."""
    record = await wb.run("seq 1 900000", previewBytes=4096)
    expected = "".join(f"{i}\n" for i in range(1, 900_001)).encode()
    assert record["output"]["truncated"] is True and record["output"]["stdoutBytes"] == len(expected)
    preview = record["preview"]
    text = preview["stdout"]
    assert len(text.encode()) <= 4096
    match = ELIDED.search(text)
    assert match is not None
    head, tail = text[: match.start()], text[match.end() :]
    if not expected.startswith(head.encode()):
        head = head.removesuffix("\n")  # the head ends mid-line: the elision line starts a new one
    assert expected.startswith(head.encode()) and expected.endswith(tail.encode())
    assert head.startswith("1\n2\n3\n") and tail.endswith("899999\n900000\n")
    assert int(match[1]) == preview["stdoutElidedBytes"] == len(expected) - len(head) - len(tail)
    assert (preview["stderr"], preview["stderrElidedBytes"]) == ("", 0)


async def test_interleaved_streams_each_have_their_own_preview(wb: DaemonHandle) -> None:
    record = await wb.run("for i in $(seq 1 300); do echo out$i; echo err$i >&2; done", previewBytes=1024)
    preview = record["preview"]
    for stream in ("stdout", "stderr"):
        text = preview[stream]
        word = "out" if stream == "stdout" else "err"
        other = "err" if stream == "stdout" else "out"
        assert len(text.encode()) <= 1024 and other not in text
        assert text.startswith(f"{word}1\n{word}2\n") and text.endswith(f"{word}300\n")
        assert preview[f"{stream}ElidedBytes"] > 0


async def test_the_preview_is_live_while_running(wb: DaemonHandle, tmp_path: Any) -> None:
    started = await wb.start(f"echo first; while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; echo second")
    eid = started["executionId"]
    assert started["preview"]["stdout"] == ""
    with ceilings.within(30, "the first line to show in the live preview"):
        while True:
            record = (await wb.client.get(f"/v1/executions/{eid}")).json()
            if record["preview"]["stdout"] == "first\n":
                break
            await trio.sleep(0.02)
    assert record["status"] == "running"
    waited = (await wb.client.post(f"/v1/executions/{eid}/wait", json={"waitTimeoutMs": 0})).json()
    assert waited["waitTimedOut"] is True and waited["execution"]["preview"]["stdout"] == "first\n"
    (tmp_path / "go").touch()
    final = await wb.wait(eid)
    assert final["preview"]["stdout"] == "first\nsecond\n"


async def test_plain_format_shows_what_a_terminal_would(wb: DaemonHandle) -> None:
    command = r"for i in 1 2 3 4 5; do printf '\r\033[32m%3d%%\033[0m' $((i * 20)); done; echo; echo done"
    raw = await wb.run(command)
    plain = await wb.run(command, previewFormat="plain")
    assert "\r" in raw["preview"]["stdout"] and "\x1b[" in raw["preview"]["stdout"]
    assert plain["preview"]["stdout"] == "100%\ndone\n"
    # The events keep every byte either way.
    deltas = [e["outputDelta"] for e in await wb.events(plain["executionId"]) if e["eventType"] == "output"]
    assert "".join(deltas) == raw["preview"]["stdout"]


async def test_preview_bytes_zero_and_invalid_utf8(wb: DaemonHandle) -> None:
    empty = await wb.run("echo hello", previewBytes=0)
    assert empty["preview"] == {"stdout": "", "stderr": "", "stdoutElidedBytes": 6, "stderrElidedBytes": 0}
    bad = await wb.run(r"printf 'ok \377\n'")
    assert bad["preview"]["stdout"] == "ok \ufffd\n"


async def test_a_listing_carries_the_preview_only_when_asked(wb: DaemonHandle) -> None:
    await wb.run("echo listed")
    plain = (await wb.client.get("/v1/executions")).json()["executions"][0]
    assert plain["preview"] is None
    asked = await wb.client.get("/v1/executions", params={"include": "preview"})
    assert asked.json()["executions"][0]["preview"]["stdout"] == "listed\n"
    bad = await wb.client.get("/v1/executions", params={"include": "everything"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_request"


async def test_preview_bounds_are_checked(wb: DaemonHandle) -> None:
    for body in ({"previewBytes": 1_048_577}, {"previewBytes": -1}, {"previewFormat": "html"}):
        response = await wb.client.post("/v1/executions/workbench_bash", json={"command": "true", **body})
        assert response.status_code == 422, (body, response.text)
        assert response.json()["error"]["code"] == "invalid_request"
    at_bound = await wb.run("echo ok", previewBytes=1_048_576)
    assert at_bound["preview"]["stdout"] == "ok\n"
