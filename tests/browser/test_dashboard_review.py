"""The dashboard as a review in a real browser found it wanting: a batch's items as they move on,
the list's next page after live rows came, a logout that did not reach the daemon, an erase in a
progress line, and where the log's output is not all there."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import logged_in, wait_js
from tests.reliability.conftest import DaemonProcess

ITEMS_SHOWN = "() => Array.from(document.querySelectorAll('#x-items li')).map((li) => li.textContent)"


@pytest.mark.timeout(120)
def test_a_running_batch_shows_its_items_as_they_move_on(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Its items' statuses follow its `item` events while it runs, not only once it has ended."""
    gates = [tmp_path / "one", tmp_path / "two"]
    batch = daemon.client.post(
        "/v1/executions/batch",
        json={
            "items": [
                {"kind": "workbench_bash", "command": f"while [ ! -e {gate} ]; do sleep 0.05; done"}
                for gate in gates
            ],
            "concurrency": 1,
            "waitTimeoutMs": 0,
        },
    ).json()
    first, second = (item["executionId"] for item in batch["items"])
    shows = f"(id, s) => ({ITEMS_SHOWN})().some((t) => t.includes(id) && t.includes(s))"
    try:
        page = logged_in(chromium, daemon)
        page.goto(f"{daemon.url}/#/x/{batch['executionId']}")
        wait_js(page, f"() => ({shows})('{first}', 'running') && ({shows})('{second}', 'queued')")
        gates[0].touch()
        wait_js(page, f"() => ({shows})('{first}', 'completed') && ({shows})('{second}', 'running')")
        assert page.inner_text("#x-status") == "running"
    finally:
        for gate in gates:
            gate.touch()
    assert daemon.wait(batch["executionId"])["status"] == "completed"
    wait_js(page, f"() => ({ITEMS_SHOWN})().every((t) => t.includes('completed'))")
    assert page.errors == []


@pytest.mark.timeout(120)
def test_the_next_page_follows_the_rows_shown_after_live_ones_came(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """Rows that came live push the oldest of page 1 onto page 2: Next shows them, not a page
    read from where page 1 ended before they came."""
    for i in range(55):
        daemon.start_bash(f"echo {i}")
    page = logged_in(chromium, daemon)
    wait_js(page, "() => document.querySelectorAll('#rows tr').length === 50")
    newer = [daemon.start_bash(f"echo new {i}")["executionId"] for i in range(5)]
    page.wait_for_selector(f"tr[data-id={newer[-1]}]")
    wait_js(page, "(id) => document.querySelector('#rows tr').dataset.id === id", newer[-1])
    everything = daemon.client.get("/v1/executions", params={"limit": 100}).json()["executions"]
    assert len(everything) == 60
    page.click("#next")
    wait_js(page, "() => document.getElementById('page-info').textContent.startsWith('page 2')")
    wait_js(page, "() => document.querySelectorAll('#rows tr').length === 10")
    shown = page.eval_on_selector_all("#rows tr", "(rows) => rows.map((r) => r.dataset.id)")
    assert shown == [record["executionId"] for record in everything[50:]]
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_logout_that_cannot_reach_the_daemon_says_so_and_keeps_the_session(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """It said "Logged out." while the session stayed valid at the daemon."""
    page = logged_in(chromium, daemon)
    daemon.kill9()
    try:
        page.click("#logout")
        wait_js(page, "() => document.getElementById('logout-error').textContent.includes('not logged out')")
        assert page.query_selector("#login-form") is None
    finally:
        daemon.start()
    page.wait_for_selector("#rows", state="attached")  # the page is back with the daemon
    page.click("#logout")
    page.wait_for_selector("#login-form")
    assert page.inner_text("#logout-error") == ""
    assert "Logged out." in page.inner_text("#login-error")


@pytest.mark.timeout(120)
def test_an_erase_in_the_line_blanks_what_it_erases(daemon: DaemonProcess, chromium: Any) -> None:
    """`ESC[K` after a carriage return, as progress bars write it, leaves no stale tail; `ESC[2K`
    blanks the whole line and `ESC[1K` its start."""
    record = daemon.start_bash(
        r"printf 'progress with erase\r\033[Kreplaced\nabcdef\033[2K\rxy\n123\033[1K456\n';"
        r" printf '%0200000d\033[2K\rz\n' 0"
    )
    daemon.wait(record["executionId"])
    page = logged_in(chromium, daemon)
    page.goto(f"{daemon.url}/#/x/{record['executionId']}")
    # The long line comes in several events: wait for its end (the erase and the `z`) too.
    wait_js(
        page,
        "() => { const l = document.querySelectorAll('#log .line');"
        " return l.length === 4 && l[3].textContent.startsWith('z'); }",
    )
    lines = page.eval_on_selector_all("#log .line", "(lines) => lines.map((l) => l.textContent)")
    assert lines[:3] == ["replaced", "xy    ", "   456"], lines[:3]
    assert lines[3] == "z" + " " * 199_999, "an erase of a long line"  # it threw: too many arguments
    # A log shorter than its box does not scroll: a wheel up over it leaves it following.
    box = page.eval_on_selector("#log", "(e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; }")
    page.mouse.move(box[0] + 50, box[1] + 50)
    page.mouse.wheel(0, -300)
    page.wait_for_timeout(300)
    assert page.is_checked("#follow")
    assert page.errors == []


@pytest.mark.timeout(180)
def test_where_the_logs_output_is_not_all_there_the_log_says_so(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Past the output budget, and at a gap in what a late follower was shown, the log has a line
    of its own saying so: text never joins across a gap."""
    gate = tmp_path / "go"
    record = daemon.start_bash(
        "head -c 5400000 /dev/zero | tr '\\0' a | fold -w 100; echo budget-spent;"
        f" while [ ! -e {gate} ]; do sleep 0.05; done; echo after-gap"
    )
    execution_id = record["executionId"]
    try:
        deadline = time.monotonic() + 60
        while not daemon.client.get(f"/v1/executions/{execution_id}").json()["output"]["truncated"]:
            assert time.monotonic() < deadline, "the output never passed its budget"
            time.sleep(0.1)
        page = logged_in(chromium, daemon)
        page.goto(f"{daemon.url}/#/x/{execution_id}")
        wait_js(
            page,
            "() => window.workbench.execution && window.workbench.execution.model.lines"
            ".filter((l) => l.s === 'note').length === 2",
            timeout_s=60,
        )
    finally:
        gate.touch()
    wait_js(
        page, "() => window.workbench.execution.model.lines.some((l) => l.t === 'after-gap')", timeout_s=60
    )
    lines = page.evaluate("() => window.workbench.execution.model.lines.map((l) => [l.s, l.t])")
    notes = [i for i, (kind, _) in enumerate(lines) if kind == "note"]
    assert "budget is spent" in lines[notes[0]][1] and "bytes not shown here" in lines[notes[1]][1], lines[
        -5:
    ]
    before = [t for _, t in lines[: notes[0]]]
    assert all(set(t) <= {"a"} for t in before) and {len(t) for t in before[:-1]} == {100}, before[-3:]
    assert lines[notes[1] + 1 :][-1] == ["stdout", "after-gap"], lines[-5:]
    assert not any("after-gap" in t and t != "after-gap" for _, t in lines), "joined across the gap"
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_cells_page_shows_its_context_and_its_value(daemon: DaemonProcess, chromium: Any) -> None:
    """A code context's cell: its context, its value (`result`) and, for one that raised, its
    traceback are on its page."""
    made = daemon.client.post("/v1/contexts", json={"language": "python"}).json()
    assert made["status"] == "ready", made
    context = made["contextId"]
    cells = [
        daemon.client.post(
            "/v1/executions/workbench_code",
            json={"language": "python", "code": code, "contextId": context, "waitTimeoutMs": 30000},
        ).json()
        for code in ("6 * 7", "raise ValueError('nope')")
    ]
    assert [cell["status"] for cell in cells] == ["completed", "failed"], cells
    page = logged_in(chromium, daemon)
    for cell, shown in zip(cells, ("42", "ValueError: nope"), strict=True):
        page.goto(f"{daemon.url}/#/x/{cell['executionId']}")
        wait_js(page, "(id) => document.getElementById('x-id').textContent === id", cell["executionId"])
        record = page.inner_text("#x-record")
        assert made["contextId"] in record and shown in record, record
    assert "Traceback (most recent call last)" in page.inner_text("#x-record")
    daemon.client.delete(f"/v1/contexts/{made['contextId']}")
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_progress_line_that_never_ends_keeps_only_what_it_shows(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """A line of 20,000 carriage-return updates is kept as a terminal shows it (it grew by every
    update, all of it drawn again at every output event), and shows its last update."""
    record = daemon.start_bash(
        'python3 -c \'import sys\nfor i in range(20000): sys.stdout.write("\\rdownloading %8d bytes" % i)\n'
        'sys.stdout.write("\\rdone")\''
    )
    assert daemon.wait(record["executionId"])["status"] == "completed"
    page = logged_in(chromium, daemon)
    page.goto(f"{daemon.url}/#/x/{record['executionId']}")
    wait_js(page, "() => document.getElementById('log').textContent.startsWith('done')")
    kept = page.evaluate("() => window.workbench.execution.model.lines.map((l) => l.t.length)")
    assert len(kept) == 1 and kept[0] < 4096, kept
    assert page.inner_text("#log .line") == "doneloading    19999 bytes"
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_wheel_up_during_fast_output_stops_following(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Scrolled up with the wheel while lines pour in, the log stays where it was put (the view
    took the scroll for its own and jumped back to the end)."""
    gate = tmp_path / "stop"
    record = daemon.start_bash(f"i=0; while [ ! -e {gate} ]; do i=$((i+1)); echo line $i; sleep 0.005; done")
    try:
        page = logged_in(chromium, daemon)
        page.goto(f"{daemon.url}/#/x/{record['executionId']}")
        wait_js(
            page, "() => window.workbench.execution && window.workbench.execution.model.lines.length > 300"
        )
        box = page.eval_on_selector(
            "#log", "(e) => { const r = e.getBoundingClientRect(); return [r.x, r.y]; }"
        )
        for _ in range(3):
            page.mouse.move(box[0] + 50, box[1] + 50)
            page.mouse.wheel(0, -300)
            page.wait_for_timeout(100)
        page.wait_for_timeout(1000)
        assert not page.is_checked("#follow")
        gap = page.eval_on_selector("#log", "(e) => e.scrollHeight - e.clientHeight - e.scrollTop")
        assert gap > 500, gap
    finally:
        gate.touch()
    daemon.wait(record["executionId"])
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_phone_sees_each_rows_cells_a_detach_is_final_and_a_blank_token_is_asked_for(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """At 375 px the list's rows show their status and command on screen (only the id was, the
    rest off to the side); Detach is disabled once it detached; a blank token is asked for (it
    showed the daemon's "String should have at least 1 character")."""
    record = daemon.start_bash("echo hi; sleep 30", cwd=str(tmp_path))
    page = logged_in(chromium, daemon)
    page.set_viewport_size({"width": 375, "height": 800})
    row = f"tr[data-id={record['executionId']}]"
    page.wait_for_selector(row)
    for cell in ("td.status", "td.command"):
        box = page.eval_on_selector(
            f"{row} {cell}", "(e) => { const r = e.getBoundingClientRect(); return [r.left, r.right]; }"
        )
        assert box[0] >= 0 and box[1] <= 375, (cell, box)
    page.goto(f"{daemon.url}/#/x/{record['executionId']}")
    wait_js(page, "() => document.getElementById('log').textContent.includes('hi')")
    page.click("#detach")
    wait_js(page, "() => document.getElementById('action-result').textContent === 'detached'")
    assert page.is_disabled("#detach")
    daemon.client.post(f"/v1/executions/{record['executionId']}/cancel", json={})
    page.click("#logout")
    page.wait_for_selector("#login-form")
    page.fill("input[name=token]", "   ")  # blank: the field's `required` lets it through
    page.click("#login-form button[type=submit]")
    wait_js(page, "() => document.getElementById('login-error').textContent.includes('Paste a token')")
    assert "String should" not in page.inner_text("#login-error")
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_full_first_page_gets_a_next_page_once_a_live_row_pushes_one_off(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """Exactly 50 rows: no next page. A new one comes live and pushes the oldest off page 1:
    Next is enabled and shows it (it stayed disabled, the row on no page)."""
    oldest = daemon.start_bash("echo 0")["executionId"]
    for i in range(1, 50):
        daemon.start_bash(f"echo {i}")
    page = logged_in(chromium, daemon)
    wait_js(page, "() => document.querySelectorAll('#rows tr').length === 50")
    assert page.is_disabled("#next")
    newest = daemon.start_bash("echo new")["executionId"]
    wait_js(page, "(id) => document.querySelector('#rows tr').dataset.id === id", newest)
    assert page.eval_on_selector_all("#rows tr", "(rows) => rows.length") == 50
    page.click("#next")
    wait_js(page, "() => document.getElementById('page-info').textContent.startsWith('page 2')")
    shown = page.eval_on_selector_all("#rows tr", "(rows) => rows.map((r) => r.dataset.id)")
    assert shown == [oldest], shown
    assert page.errors == []
