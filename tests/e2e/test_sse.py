"""The SSE stream: exact replay and resume, live following, display past the budget, progress."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import trio

from tests import ceilings, procs
from tests.conftest import TOKEN, DaemonHandle, daemon_settings
from tests.sse import Frame, collect, frames, stream_of

#: Prints `first`, waits for a file `release` in its working directory, then prints `second`.
HELD = "echo first; while [ ! -e release ]; do sleep 0.02; done; echo second"


def ids(stream: list[Frame]) -> list[int]:
    return [f.id for f in stream if f.id is not None]


async def test_replay_of_a_finished_execution_equals_the_json_events(wb: DaemonHandle) -> None:
    """Promise 2: the stream is the journal: same events, same order, ids are the sequences."""
    record = await wb.run("for i in 1 2 3; do echo out $i; echo err $i >&2; sleep 0.02; done; exit 4")
    events = await wb.events(record["executionId"])
    stream = await collect(wb.client, record["executionId"])
    journaled = [f for f in stream if f.id is not None]
    assert [f.json for f in journaled] == events
    assert [f.id for f in journaled] == [e["sequence"] for e in events]
    assert [f.event for f in journaled] == [e["eventType"] for e in events]
    assert journaled[-1].json["status"] == "failed"
    assert stream[-1] is journaled[-1], "the stream ends after the terminal event"


async def test_resume_after_a_cut_at_every_position_gives_exactly_the_rest(wb: DaemonHandle) -> None:
    """Promise 2: a reader that reconnects with the last id it saw gets exactly the rest."""
    record = await wb.run("for i in $(seq 1 8); do echo $i; sleep 0.01; done")
    last = record["lastSequence"]
    full = await collect(wb.client, record["executionId"])
    assert ids(full) == list(range(1, last + 1))
    for cut in range(last + 1):
        # Resumed after the terminal event: 204, nothing more will come (an EventSource stops).
        status = 204 if cut == last else 200
        by_header = await collect(
            wb.client, record["executionId"], headers={"Last-Event-ID": str(cut)}, status=status
        )
        assert ids(by_header) == list(range(cut + 1, last + 1)), cut
        assert [f.data for f in by_header] == [f.data for f in full[cut:]]
        by_query = await collect(wb.client, record["executionId"], params={"after": cut}, status=status)
        assert ids(by_query) == ids(by_header)
    # After the terminal event there is nothing more: 204, so that a browser's EventSource stops.
    path = f"/v1/executions/{record['executionId']}/events/stream"
    for cut in (last, last + 5):
        done = await wb.client.get(path, headers={"Last-Event-ID": str(cut)})
        assert done.status_code == 204 and done.content == b"", cut
        assert (await wb.client.get(path, params={"after": cut})).status_code == 204


async def test_live_events_arrive_before_the_process_ends(wb: DaemonHandle, tmp_path: Path) -> None:
    started = await wb.start(HELD, cwd=str(tmp_path))
    seen: list[str] = []
    with ceilings.within(30, "both lines and then the end of the stream"):
        async with stream_of(wb.client, started["executionId"]) as response:
            async for frame in frames(response):
                if frame.event == "output":
                    seen.append(frame.json["outputDelta"])
                    if seen == ["first\n"]:
                        record = (await wb.client.get(f"/v1/executions/{started['executionId']}")).json()
                        assert record["status"] == "running"
                        (tmp_path / "release").touch()
    assert seen == ["first\n", "second\n"]


async def test_a_quiet_stream_gets_a_keepalive_and_goes_on(wb: DaemonHandle, tmp_path: Path) -> None:
    """A `: keepalive` comment after 10 to 15 s of quiet (the daemon's ticks), and the stream then
    goes on with the next event as before."""
    started = await wb.start(HELD, cwd=str(tmp_path))
    seen: list[str] = []
    quiet_from = kept_at = None
    with ceilings.within(40, "a keep-alive, then the rest of the stream"):
        async with stream_of(wb.client, started["executionId"]) as response:
            async for frame in frames(response):
                if frame.event == "output":
                    seen.append(frame.json["outputDelta"])
                    quiet_from = trio.current_time() if quiet_from is None else quiet_from
                elif frame.comment == "keepalive" and kept_at is None:
                    assert seen == ["first\n"]  # only the quiet spell's end brings one
                    kept_at = trio.current_time()
                    (tmp_path / "release").touch()
    assert seen == ["first\n", "second\n"]
    assert quiet_from is not None and kept_at is not None
    assert kept_at - quiet_from >= 9  # not before the quiet spell (10 s after the last write)


async def test_a_client_that_disconnects_does_not_cancel(wb: DaemonHandle) -> None:
    """Promise 5: closing a stream never changes the execution."""
    started = await wb.start("sleep 0.5; echo done")
    with ceilings.within(30, "a first frame of the stream"):
        async with stream_of(wb.client, started["executionId"]) as response:
            async for _frame in frames(response):
                break
    final = await wb.wait(started["executionId"])
    assert final["status"] == "completed"
    assert final["cancelReason"] is None


async def test_fifty_concurrent_followers_receive_identical_sequences(wb: DaemonHandle) -> None:
    started = await wb.start(
        "for i in $(seq 1 200); do echo line $i; [ $((i % 20)) = 0 ] && sleep 0.02; done"
    )
    results: list[list[Frame]] = []

    async def follow() -> None:
        results.append(await collect(wb.client, started["executionId"]))

    async with trio.open_nursery() as nursery:
        for _ in range(50):
            nursery.start_soon(follow)
    first = [(f.id, f.event, f.data) for f in results[0]]
    assert all([(f.id, f.event, f.data) for f in r] == first for r in results)
    text = "".join(f.json["outputDelta"] for f in results[0] if f.event == "output")
    assert text == "".join(f"line {i}\n" for i in range(1, 201))


async def test_followers_that_leave_mid_stream_cost_the_others_nothing(wb: DaemonHandle) -> None:
    """Promise 5: followers up to date wait for the next page together and one of them reads it
    for all (`SharedPages.next_page`); whichever of them leave, the one reading included, the
    others get every event once and in order, and a filtered follower its own."""
    started = await wb.start("for i in $(seq 1 100); do echo line $i; sleep 0.01; done")
    execution_id = started["executionId"]
    stayed: list[list[Frame]] = []
    statuses: list[list[Frame]] = []

    async def leave_after(seconds: float) -> None:
        with ceilings.within(30, "a stream left after a while"):
            async with stream_of(wb.client, execution_id) as response:
                with trio.move_on_after(seconds):
                    async for _frame in frames(response):
                        pass

    async def stay() -> None:
        stayed.append(await collect(wb.client, execution_id))

    async def only_status() -> None:
        statuses.append(await collect(wb.client, execution_id, params={"types": "status"}))

    async with trio.open_nursery() as nursery:
        # Those that leave are there first, so the one reading for all is often one of them
        # (`tests/core/test_fanout.py` makes it so for sure); they leave one after another
        # while the lines come, once the others have caught up with them.
        for n in range(30):
            nursery.start_soon(leave_after, 0.3 + n * 0.02)
        await trio.sleep(0.15)
        for _ in range(10):
            nursery.start_soon(stay)
        nursery.start_soon(only_status)
    final = await wb.wait(execution_id)
    assert final["status"] == "completed"
    first = [(f.id, f.event, f.data) for f in stayed[0]]
    assert ids(stayed[0]) == list(range(1, final["lastSequence"] + 1))
    assert all([(f.id, f.event, f.data) for f in r] == first for r in stayed)
    text = "".join(f.json["outputDelta"] for f in stayed[0] if f.event == "output")
    assert text == "".join(f"line {i}\n" for i in range(1, 101))
    assert [(f.id, f.data) for f in statuses[0]] == [(f.id, f.data) for f in stayed[0] if f.event == "status"]
    assert statuses[0][-1].json["status"] == "completed"


async def test_a_stalled_reader_delays_neither_the_execution_nor_other_readers(wb: DaemonHandle) -> None:
    """A client that stops reading holds only its own connection."""
    started = await wb.start(
        "sleep 0.2; for i in $(seq 1 40000); do echo 'a fairly long line of output' $i; done"
    )
    host, port = wb.url.removeprefix("http://").split(":")
    stalled = await trio.open_tcp_stream(host, int(port))
    request = (
        f"GET /v1/executions/{started['executionId']}/events/stream HTTP/1.1\r\nHost: {host}\r\n"
        f"Authorization: Bearer {TOKEN}\r\n\r\n"
    )
    await stalled.send_all(request.encode())
    try:
        with trio.fail_after(60):
            other = await collect(wb.client, started["executionId"])
            final = await wb.wait(started["executionId"])
        assert final["status"] == "completed"
        assert ids(other) == list(range(1, final["lastSequence"] + 1))
    finally:
        await stalled.aclose()


async def test_shutdown_ends_open_streams_promptly(tmp_path: Path) -> None:
    """Open streams end when the daemon stops; they do not hold it for the graceful timeout."""
    from api.serve import GRACEFUL_S, serve

    shutdown = trio.Event()
    ended = trio.Event()
    async with trio.open_nursery() as nursery:
        _daemon, binds = await nursery.start(
            partial(serve, daemon_settings(tmp_path / "d"), shutdown=shutdown)
        )
        async with httpx.AsyncClient(
            base_url=binds[0], headers={"Authorization": f"Bearer {TOKEN}"}
        ) as client:
            started = (
                await client.post(
                    "/v1/executions/workbench_bash", json={"command": "sleep 30", "background": True}
                )
            ).json()

            async def follow() -> None:
                async with stream_of(client, started["executionId"]) as r:
                    async for _ in frames(r):
                        pass
                ended.set()

            nursery.start_soon(follow)
            await trio.sleep(0.2)
            with trio.fail_after(GRACEFUL_S - 1):
                shutdown.set()
                await ended.wait()
    assert ended.is_set()


async def test_progress_lines_become_events(wb: DaemonHandle) -> None:
    """Each progress line spaced past the coalescing interval is an event; others are not progress."""
    record = await wb.run(
        'echo "1/4 fetching" >> "$WORKBENCH_PROGRESS"; '
        'echo "not progress" >> "$WORKBENCH_PROGRESS"; sleep 0.4; '
        'echo "2/4" >> "$WORKBENCH_PROGRESS"; echo "-1/3 bad" >> "$WORKBENCH_PROGRESS"; sleep 0.4; '
        'printf "2.5/4 halfway there\\n" >> "$WORKBENCH_PROGRESS"; echo "5/0 bad" >> "$WORKBENCH_PROGRESS"'
    )
    assert record["status"] == "completed"
    progress = [e for e in await wb.events(record["executionId"]) if e["eventType"] == "progress"]
    assert [(e["progress"], e["total"], e["message"]) for e in progress] == [
        (1, 4, "fetching"),
        (2, 4, None),
        (2.5, 4, "halfway there"),
    ]


async def progress_of(wb: DaemonHandle, execution_id: str, events: int) -> dict[str, Any]:
    """The record once `events` progress events are journaled, read with a plain GET."""
    with ceilings.within(30, f"{events} progress events to be journaled"):
        while True:
            if sum(e["eventType"] == "progress" for e in await wb.events(execution_id)) >= events:
                break
            await trio.sleep(0.02)
    response = await wb.client.get(f"/v1/executions/{execution_id}")
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_the_record_carries_the_latest_progress(wb: DaemonHandle, tmp_path: Path) -> None:
    """A GET, a listing and a wait give the latest progress event as the record's `progress`
    (null before the first), with a new `rowVersion` so that a poll by ETag sees it change; the
    last one stays once the execution ended."""
    started = await wb.start(
        'echo "1/4 fetching" >> "$WORKBENCH_PROGRESS"; while [ ! -e two ]; do sleep 0.02; done; '
        'echo "3/4" >> "$WORKBENCH_PROGRESS"; while [ ! -e release ]; do sleep 0.02; done',
        cwd=str(tmp_path),
    )
    eid = started["executionId"]
    assert started["progress"] is None
    first = await progress_of(wb, eid, 1)
    assert first["progress"] == {"progress": 1, "total": 4, "message": "fetching"}
    listed = (await wb.client.get("/v1/executions")).json()["executions"]
    assert [r["progress"] for r in listed if r["executionId"] == eid] == [first["progress"]]
    (tmp_path / "two").touch()
    second = await progress_of(wb, eid, 2)
    assert second["progress"] == {"progress": 3, "total": 4, "message": None}
    assert second["rowVersion"] > first["rowVersion"]
    since_first = {"If-None-Match": f'"{first["rowVersion"]}"'}
    polled = await wb.client.get(f"/v1/executions/{eid}", headers=since_first)
    assert polled.status_code == 200 and polled.json()["progress"] == second["progress"]
    (tmp_path / "release").touch()
    final = await wb.wait(eid)
    assert final["status"] == "completed" and final["progress"] == second["progress"]
    assert (await wb.run("true"))["progress"] is None


async def test_bad_last_event_id_and_unknown_execution_are_json_errors(wb: DaemonHandle) -> None:
    record = await wb.run("true")
    bad = await wb.client.get(
        f"/v1/executions/{record['executionId']}/events/stream", headers={"Last-Event-ID": "abc"}
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_request"
    bad_query = await wb.client.get(
        f"/v1/executions/{record['executionId']}/events/stream", params={"after": "-1"}
    )
    assert bad_query.status_code == 400
    missing = await wb.client.get("/v1/executions/ex_01JD0000000000000000000000/events/stream")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


async def test_a_last_event_id_beyond_the_end_follows_live(wb: DaemonHandle, tmp_path: Path) -> None:
    finished = await wb.run("echo done")
    assert (
        await collect(wb.client, finished["executionId"], headers={"Last-Event-ID": "999"}, status=204) == []
    )
    started = await wb.start("while [ ! -e go ]; do sleep 0.02; done; echo after", cwd=str(tmp_path))
    got: list[Frame] = []
    with ceilings.within(30, "the live stream to end after `go`"):
        async with stream_of(wb.client, started["executionId"], {"Last-Event-ID": "999"}) as response:
            (tmp_path / "go").touch()
            async for frame in frames(response):
                got.append(frame)
    # Nothing is replayed (the first event, `queued`, is not sent); what follows is live.
    assert all(f.id is not None and f.id > 1 for f in got)
    assert [f.event for f in got][-2:] == ["output", "status"]
    assert got[-2].json["outputDelta"] == "after\n"


async def test_live_followers_see_the_output_past_the_budget(make_daemon: Any) -> None:
    """Past the budget, output reaches live followers as id-less events (and gaps, counted)."""
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=100_000)
    lines = 40_000
    started = await wb.start(
        f"sleep 0.3; for i in $(seq 1 {lines}); do printf '%07d %s\\n' $i 'display line of output'; done"
    )
    journaled = displayed = missed = 0
    stream = await collect(wb.client, started["executionId"])
    for frame in stream:
        if frame.event == "output":
            size = len(frame.json["outputDelta"].encode())
            if frame.id is None:
                displayed += size
                assert frame.json["sequence"] is None
            else:
                journaled += size
        elif frame.event == "gap":
            missed += json.loads(frame.data)["missedBytes"]
    final = await wb.wait(started["executionId"])
    total = lines * 31
    assert final["output"]["stdoutBytes"] == total
    assert journaled == final["output"]["eventBytes"] <= 100_000
    assert displayed > 0
    assert journaled + displayed + missed == total
    assert stream[-1].id == final["lastSequence"] and stream[-1].json["status"] == "completed"
    assert [f.event for f in stream if f.id is not None].count("output_truncated") == 1


async def test_a_follower_who_arrives_past_the_budget_is_told_what_it_missed(
    make_daemon: Any, tmp_path: Path
) -> None:
    """A late follower's display does not continue the journal: its first display frame is a gap."""
    wb: DaemonHandle = await make_daemon(execution_event_output_budget_bytes=10_000)
    started = await wb.start(
        "head -c 50000 /dev/zero | tr '\\0' x; echo; while [ ! -e go ]; do sleep 0.02; done; echo tail",
        cwd=str(tmp_path),
    )
    eid = started["executionId"]
    await procs.eventually(lambda: (wb.data_dir / "executions" / eid / "stdout").exists())
    record = await wb.wait(eid, wait_ms=0)
    with ceilings.within(30, "the execution to write past its budget"):
        while not record["output"]["truncated"] or record["output"]["stdoutBytes"] < 50_001:
            record = await wb.wait(eid, wait_ms=50)
    got: list[Frame] = []
    with ceilings.within(30, "the stream to end after `go`"):
        async with stream_of(wb.client, eid) as response:
            (tmp_path / "go").touch()
            async for frame in frames(response):
                got.append(frame)
    display = [f for f in got if f.id is None and f.event in {"output", "gap"}]
    assert display[0].event == "gap"
    assert json.loads(display[0].data)["missedBytes"] >= 50_001 - 10_000
    assert [f.json["outputDelta"] for f in display[1:]] == ["tail\n"]
