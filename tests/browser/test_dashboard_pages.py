"""The dashboard's pages in detail: a batch, an execution's heading and log, the list's rows, a
narrow screen."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import logged_in, open_page, wait_js
from tests.reliability.conftest import DaemonProcess


def status_shown(page: Any, status: str, timeout_s: float = 30) -> None:
    wait_js(page, "(s) => document.getElementById('x-status').textContent === s", status, timeout_s)


@pytest.mark.timeout(120)
def test_a_batch_shows_its_items_and_its_stream_stops_once_it_ended(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """A batch that ends `partial_failed` is over: its stream is not opened again and again, its
    buttons are disabled; its page links its items and lists its `item` events; the list shows it
    as a batch, and filters by that status and that kind."""
    batch = daemon.client.post(
        "/v1/executions/batch",
        json={
            "items": [{"kind": "workbench_bash", "command": c} for c in ("true", "false")],
            "waitTimeoutMs": 30_000,
        },
    ).json()
    assert batch["status"] == "partial_failed", batch
    items = [item["executionId"] for item in batch["items"]]
    page = logged_in(chromium, daemon)
    streams: list[str] = []
    stream = f"{batch['executionId']}/events/stream"
    page.on("request", lambda r: streams.append(r.url) if stream in r.url else None)
    page.goto(f"{daemon.url}/#/x/{batch['executionId']}")
    status_shown(page, "partial_failed")
    wait_js(page, "() => ['cancel', 'detach'].every((id) => document.getElementById(id).disabled)")
    links = page.eval_on_selector_all("#x-items a", "(links) => links.map((a) => a.getAttribute('href'))")
    assert links[:2] == [f"#/x/{item}" for item in items]
    wait_js(page, "() => document.getElementById('x-trace').textContent.includes('item')")
    time.sleep(3)
    assert len(streams) <= 2, streams
    # Resumed after its end, a stream is answered 204: it ends, and is not opened again.
    page.evaluate(
        "([id, n]) => { window.__ended = 0; new window.WorkbenchLog.ResumingStream("
        "`/v1/executions/${id}/events/stream?after=${n}`, {}, () => null,"
        " { ended: () => { window.__ended++; } }); }",
        [batch["executionId"], batch["lastSequence"]],
    )
    wait_js(page, "() => window.__ended === 1", timeout_s=5)
    time.sleep(2)
    assert len(streams) <= 4 and page.evaluate("() => window.__ended") == 1, streams
    page.click(f"#x-items a[href='#/x/{items[1]}']")
    status_shown(page, "failed")
    page.goto(f"{daemon.url}/#/?status=partial_failed")
    page.wait_for_selector(f"tr[data-id={batch['executionId']}]")
    assert page.eval_on_selector("#filters select[name=status]", "(s) => s.value") == "partial_failed"
    row = page.inner_text(f"tr[data-id={batch['executionId']}]")
    assert "null" not in row and "batch" in row, row
    page.select_option("#filters select[name=kind]", "batch")
    page.click("#filters button[type=submit]")
    wait_js(page, "() => location.hash.includes('kind=batch')")
    page.wait_for_selector(f"tr[data-id={batch['executionId']}]")
    page.goto(f"{daemon.url}/#/x/{batch['executionId']}")
    page.click("#x-items-list")
    wait_js(page, "() => document.querySelectorAll('#rows tr').length === 2")
    shown = page.eval_on_selector_all("#rows tr", "(rows) => rows.map((r) => r.dataset.id)")
    assert sorted(shown) == sorted(items)
    assert page.errors == []


@pytest.mark.timeout(120)
def test_the_heading_follows_the_executions_own_stream_and_the_log_draws_as_a_terminal(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """The record read before the execution started says `queued`: the heading follows the
    `status` events of its own stream. Carriage returns overwrite the line as on a terminal, a
    colour goes on across a newline, and the follow box says whether the view follows."""
    started = daemon.start_bash(
        "printf 'Downloading 10%%\\rDownloading 50%%\\rDownloading 100%%\\n'; printf 'abcdef\\rXY\\r\\n';"
        "printf '\\033[31mred\\nstill red\\033[0m\\nplain\\n'; seq 1 200;"
        "while [ ! -e release ]; do sleep 0.02; done",
        cwd=str(tmp_path),
    )
    execution_id = started["executionId"]
    page = logged_in(chromium, daemon)

    def before_the_start(route: Any) -> None:
        record = route.fetch().json()
        record.update(status="queued", startedAt=None, lastSequence=1)
        route.fulfill(status=200, content_type="application/json", body=json.dumps(record))

    page.route(re.compile(f"/v1/executions/{execution_id}$"), before_the_start)
    page.goto(f"{daemon.url}/#/x/{execution_id}")
    wait_js(page, "() => document.getElementById('log').textContent.includes('200')")
    status_shown(page, "running", timeout_s=5)
    assert not page.is_disabled("#cancel")
    page.unroute(re.compile(f"/v1/executions/{execution_id}$"))
    page.uncheck("#follow")
    page.evaluate("() => { document.getElementById('log').scrollTop = 0; }")
    wait_js(page, "() => document.querySelector('#log .window').style.top === '0px'", timeout_s=5)
    lines = page.eval_on_selector_all(
        "#log .line",
        "(ls) => ls.slice(0, 5).map((l) => [l.textContent, [...l.children].map((s) => s.className)])",
    )
    assert lines[0][0] == "Downloading 100%"
    assert lines[1][0] == "XYcdef"
    assert lines[2] == ["red", ["fg1"]]
    assert lines[3] == ["still red", ["fg1"]]
    assert lines[4][0] == "plain" and "fg1" not in lines[4][1]
    # Scrolled to the bottom while unticked: it does not follow; ticked, it does.
    page.evaluate("() => { const l = document.getElementById('log'); l.scrollTop = l.scrollHeight; }")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.workbench.execution.view.follow") is False
    assert not page.is_checked("#follow")
    page.check("#follow")
    # Scrolled up, it stops following, and the box says so.
    page.evaluate("() => { document.getElementById('log').scrollTop = 0; }")
    wait_js(page, "() => !document.getElementById('follow').checked", timeout_s=5)
    assert page.evaluate("() => window.workbench.execution.view.follow") is False
    (tmp_path / "release").touch()
    status_shown(page, "completed")
    wait_js(page, "() => document.getElementById('cancel').disabled", timeout_s=5)
    assert page.errors == []


@pytest.mark.timeout(120)
def test_the_lists_rows_keep_their_progress_and_leave_a_filter_they_no_longer_match(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Reading the list again keeps each row's progress; under `running`, one that ended leaves
    the list; a narrow screen scrolls nothing sideways; a malformed login link is said to be one."""
    page = logged_in(chromium, daemon)
    wait_js(page, "() => document.getElementById('page-info').textContent === 'page 1'")
    started = daemon.start_bash(
        'echo "1/2 half" >> "$WORKBENCH_PROGRESS"; while [ ! -e release ]; do sleep 0.02; done; '
        + "echo "
        + "a-long-word" * 30,
        cwd=str(tmp_path),
    )
    execution_id = started["executionId"]
    page.goto(f"{daemon.url}/#/?status=running")
    row = f"tr[data-id={execution_id}]"
    wait_js(page, "(s) => (document.querySelector(s) || {}).textContent?.includes('50%')", row)
    page.click("#first")
    page.wait_for_timeout(500)
    assert "50%" in page.inner_text(row)
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    page.click(f"{row} a")
    page.wait_for_selector("#rerun")
    wait_js(page, "() => document.getElementById('x-status').textContent === 'running'")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    assert page.evaluate("() => document.getElementById('rerun').getBoundingClientRect().right") <= 375
    page.goto(f"{daemon.url}/#/?status=running")
    page.wait_for_selector(row)
    (tmp_path / "release").touch()
    page.wait_for_selector(row, state="detached", timeout=15_000)

    link = open_page(chromium, daemon.url + "/#login=%ZZ")
    link.wait_for_selector("#login-form")
    wait_js(link, "() => document.getElementById('login-error').textContent.includes('link')")
    assert link.errors == []
    assert page.errors == []


@pytest.mark.timeout(120)
def test_an_execution_page_left_before_its_record_came_does_not_take_over_the_next(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """An execution's page whose record comes after the page was left for another execution's
    draws nothing on that page, nor takes its stream."""
    first, second = (
        daemon.client.post("/v1/executions/workbench_bash", json={"command": f"echo {word}"}).json()
        for word in ("first-one", "second-one")
    )
    page = logged_in(chromium, daemon)
    record = re.compile(rf"/v1/executions/{first['executionId']}$")

    def slow(route: Any) -> None:
        time.sleep(1.5)
        route.continue_()

    page.route(record, slow)
    page.evaluate("(id) => { location.hash = '#/x/' + id; }", first["executionId"])
    page.wait_for_timeout(200)
    page.evaluate("(id) => { location.hash = '#/x/' + id; }", second["executionId"])
    wait_js(
        page, "() => (document.getElementById('log') || {textContent: ''}).textContent.includes('second-one')"
    )
    page.wait_for_timeout(2500)  # the first page's record has come meanwhile
    assert "first-one" not in page.inner_text("#log")
    assert second["executionId"] in page.inner_text("main")
    assert first["executionId"] not in page.inner_text("main")
    page.unroute(record)
    assert page.errors == []


#: The progress bar of a row of the list, or of an execution's page, as `wait_js` returns it.
ROW_BAR = """(s) => { const row = document.querySelector(s); const bar = row && row.querySelector('progress');
  return bar && {value: bar.value, max: bar.max, text: row.lastElementChild.textContent}; }"""
PAGE_BAR = """() => { const bar = document.getElementById('x-progress');
  return bar && !bar.hidden && {value: bar.value, max: bar.max,
    text: document.getElementById('x-progress-text').textContent}; }"""


def _started_with_progress(daemon: DaemonProcess, script: str, cwd: Path) -> str:
    """Start `script` in `cwd`; its id once its first progress line is journaled."""
    execution_id: str = daemon.start_bash(script, cwd=str(cwd))["executionId"]
    deadline = time.monotonic() + 30
    while not any(e["eventType"] == "progress" for e in daemon.events(execution_id)):
        assert time.monotonic() < deadline, "the progress line was not journaled within 30 s"
        time.sleep(0.05)
    return execution_id


@pytest.mark.timeout(120)
def test_a_page_loaded_after_the_progress_shows_it_at_once(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """The list and an execution's page, loaded (or reloaded) after the execution's progress was
    journaled, show that progress before any later change: the list from the records it reads,
    the page from its record and the events it replays. It stays shown once the execution ended."""
    script = "echo '3/10 building' >> \"$WORKBENCH_PROGRESS\"; while [ ! -e release ]; do sleep 0.02; done"
    execution_id = _started_with_progress(daemon, script, tmp_path)
    row = f"tr[data-id={execution_id}]"
    page = logged_in(chromium, daemon)
    assert wait_js(page, ROW_BAR, row, 10) == {"value": 3, "max": 10, "text": "30%"}
    page.reload()
    assert wait_js(page, ROW_BAR, row, 10) == {"value": 3, "max": 10, "text": "30%"}

    page.goto(f"{daemon.url}/#/x/{execution_id}")
    page.reload()
    assert wait_js(page, PAGE_BAR, timeout_s=10) == {"value": 3, "max": 10, "text": "30% building"}

    (tmp_path / "release").touch()
    assert daemon.wait(execution_id)["status"] == "completed"
    page.goto(f"{daemon.url}/#/")
    page.reload()
    page.wait_for_selector(f"{row}[data-status=completed]")
    assert wait_js(page, ROW_BAR, row, 10) == {"value": 3, "max": 10, "text": "30%"}
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_change_that_comes_after_a_newer_progress_event_does_not_step_the_bar_back(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """The page's two streams are not ordered with each other: a change from the changes stream,
    its record read before the execution's latest `progress` event, can come after that event.
    Its record is shown; its older progress is not."""
    script = "echo '3/10 one' >> \"$WORKBENCH_PROGRESS\"; while [ ! -e next ]; do sleep 0.02; done; "
    script += "echo '7/10 two' >> \"$WORKBENCH_PROGRESS\"; while [ ! -e release ]; do sleep 0.02; done"
    execution_id = _started_with_progress(daemon, script, tmp_path)
    older = daemon.client.get(f"/v1/executions/{execution_id}").json()
    assert older["progress"]["progress"] == 3, older
    page = logged_in(chromium, daemon)
    held: list[Any] = []  # the changes stream's requests, answered when the test says
    changes = re.compile(r"/v1/events/stream(\?.*)?$")
    page.route(changes, lambda route: held.append(route))
    page.goto(f"{daemon.url}/#/x/{execution_id}")
    page.reload()
    assert wait_js(page, PAGE_BAR, timeout_s=10) == {"value": 3, "max": 10, "text": "30% one"}
    (tmp_path / "next").touch()
    shown = "(want) => document.getElementById('x-progress-text').textContent === want"
    wait_js(page, shown, "70% two", 10)  # from the execution's own stream
    # The change of the first progress line comes now, late; its record says where it was read.
    late = {**older, "metadata": {"read": "before the second line"}}
    change = {"changeId": 2, "change": "progress", "execution": late, "progress": late["progress"]}
    body = 'retry: 60000\nid: 1\nevent: ready\ndata: {"changeId": 1}\n\n'
    body += f"id: 2\nevent: progress\ndata: {json.dumps(change)}\n\n"
    held[0].fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=body)
    wait_js(page, "() => document.getElementById('x-record').textContent.includes('before the second line')")
    assert page.evaluate(PAGE_BAR) == {"value": 7, "max": 10, "text": "70% two"}
    (tmp_path / "release").touch()
    assert daemon.wait(execution_id)["status"] == "completed"
    page.unroute(changes)
    assert page.errors == []
