"""The dashboard at `GET /`, used as a person would: in a real headless Chromium, against a real daemon."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import logged_in, open_page, wait_js
from tests.conftest import TOKEN
from tests.procs import SHELL_ME, _zombie, host_pid
from tests.reliability.conftest import DaemonProcess


def page_text(page: Any, stream: str) -> str:
    text: str = page.evaluate("(s) => window.workbench.execution.model.text(s)", stream)
    return text


def status_shown(page: Any, status: str, timeout_s: float = 30) -> None:
    wait_js(page, "(s) => document.getElementById('x-status').textContent === s", status, timeout_s)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not _zombie(pid)


@pytest.mark.timeout(120)
def test_a_started_execution_appears_live_and_its_log_tails(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Log in with the form; an execution started elsewhere appears in the list without a reload,
    and its page shows each line as it is written, stdout and stderr apart."""
    page = logged_in(chromium, daemon)
    started = daemon.start_bash(
        "echo first; echo oops >&2; while [ ! -e release ]; do sleep 0.02; done; echo second",
        cwd=str(tmp_path),
    )
    row = f"tr[data-id={started['executionId']}]"
    page.wait_for_selector(row)
    assert page.evaluate("() => performance.getEntriesByType('navigation').length") == 1  # no reload
    page.click(f"{row} a")
    wait_js(page, "() => document.querySelectorAll('#log .line').length >= 2")
    assert page.inner_text("#log .line.stdout") == "first"
    assert page.inner_text("#log .line.stderr") == "oops"
    assert "second" not in page.inner_text("#log")
    page.click("#detach")
    wait_js(page, "() => document.getElementById('action-result').textContent === 'detached'")
    assert daemon.get(started["executionId"])["detached"] is True
    (tmp_path / "release").touch()
    wait_js(page, "() => document.getElementById('log').textContent.includes('second')")
    status_shown(page, "completed")
    assert page_text(page, "stdout") == "first\nsecond\n"
    assert page_text(page, "stderr") == "oops\n"
    # A cookie-authenticated change without the CSRF header is refused, here in the browser too.
    page.click("#rerun")
    wait_js(
        page,
        "(id) => location.hash.startsWith('#/x/') && !location.hash.endsWith(id)",
        started["executionId"],
    )
    again = page.evaluate("() => location.hash.slice(4)")
    assert daemon.get(again)["command"] == started["command"]
    wait_js(page, "() => document.getElementById('log').textContent.includes('first')")
    refused = page.evaluate(
        "async (id) => (await fetch(`/v1/executions/${id}/detach`, {method: 'POST'})).status",
        started["executionId"],
    )
    assert refused == 403
    assert page.errors == []


@pytest.mark.timeout(180)
def test_the_log_resumes_exactly_after_the_daemon_is_sigkilled_mid_log(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Promises 2 and 6: the daemon is SIGKILLed and started again while the page follows a log;
    the page's log ends byte-identical to what the process wrote: no line twice, none missing."""
    page = logged_in(chromium, daemon)
    started = daemon.start_bash(
        'for i in $(seq 1 3000); do echo "line $i of the log"; '
        'if [ $((i % 10)) = 0 ]; then echo "err $i" >&2; sleep 0.02; fi; done | tee written.txt',
        cwd=str(tmp_path),
    )
    page.goto(f"{daemon.url}/#/x/{started['executionId']}")
    wait_js(page, "() => window.workbench.execution && window.workbench.execution.model.lines.length > 200")
    daemon.kill9()
    time.sleep(0.5)
    daemon.start()
    record = daemon.wait(started["executionId"])
    assert record["status"] == "completed", record
    status_shown(page, "completed", timeout_s=60)
    wait_js(page, "(n) => window.workbench.execution.lastSequence() === n", record["lastSequence"], 60)
    written = (tmp_path / "written.txt").read_text()
    assert written == "".join(f"line {i} of the log\n" for i in range(1, 3001))
    assert page_text(page, "stdout") == written
    assert page_text(page, "stdout") == daemon.output(started["executionId"])
    assert page_text(page, "stderr") == "".join(f"err {i}\n" for i in range(10, 3001, 10))
    # The virtualised view shows the end (following it): the last line is in the document.
    page.uncheck("#follow")
    page.check("#follow")
    assert page.inner_text("#log .line.stdout >> nth=-1") == "line 3000 of the log"
    assert page.evaluate("() => document.querySelectorAll('#log .line').length") < 200
    assert page.errors == []


@pytest.mark.timeout(120)
def test_cancel_from_the_page_kills_the_whole_tree(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Promise 3, from the page: cancel (with a reason) leaves no process of the tree, escapees too."""
    page = logged_in(chromium, daemon)
    started = daemon.start_bash(
        # As the host finds them (`SHELL_ME`): $$ and $! are not, inside a pid namespace.
        f"setsid bash -c '{SHELL_ME}; echo $me > escapee.pid; exec sleep 300' & "
        f"bash -c '{SHELL_ME}; echo $me > child.pid; exec sleep 300' & "
        "echo ready; wait",
        cwd=str(tmp_path),
    )
    page.goto(f"{daemon.url}/#/x/{started['executionId']}")
    wait_js(page, "() => document.getElementById('log').textContent.includes('ready')")
    for name in ("escapee.pid", "child.pid"):
        for _ in range(200):
            if (tmp_path / name).exists() and (tmp_path / name).read_text().strip():
                break
            time.sleep(0.02)
    pids = [host_pid((tmp_path / name).read_text()) for name in ("escapee.pid", "child.pid")]
    assert all(alive(pid) for pid in pids)
    page.fill("#cancel-reason", "stopped from the dashboard")
    page.click("#cancel")
    status_shown(page, "cancelled")
    record = daemon.get(started["executionId"])
    assert record["status"] == "cancelled" and record["cancelReason"] == "stopped from the dashboard"
    assert "stopped from the dashboard" in page.inner_text("#x-record")
    assert not any(alive(pid) for pid in pids)
    # The button is disabled by the same render as the status, or the next one: waited for.
    wait_js(page, "() => document.getElementById('cancel').disabled", timeout_s=5)


XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">'


@pytest.mark.timeout(120)
def test_markup_in_output_command_and_metadata_stays_text(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """A command printing `<script>` and `<img onerror>` shows them; nothing of them runs."""
    (tmp_path / "payload").write_text(XSS)
    record = daemon.client.post(
        "/v1/executions/workbench_bash",
        json={
            "command": f"cat payload; cat payload >&2; printf '\\n\\377\\n' >&2; : '{XSS}'",
            "cwd": str(tmp_path),
            "metadata": {"title": XSS},
            "waitTimeoutMs": 30_000,
        },
    ).json()
    assert record["status"] == "completed", record
    page = logged_in(chromium, daemon)
    page.wait_for_selector(f"tr[data-id={record['executionId']}]")
    assert XSS in page.inner_text("#rows")
    page.click(f"tr[data-id={record['executionId']}] a")
    wait_js(page, "() => document.querySelectorAll('#log .line').length >= 2")
    assert page.inner_text("#log .line.stdout") == XSS
    assert page.inner_text("#log .line.stderr") == XSS
    assert XSS in page.inner_text("#x-record")  # the command and the metadata
    assert page.evaluate("() => document.querySelectorAll('main img, main script').length") == 0
    assert page.evaluate("() => window.__xss") is None
    # Output that is not UTF-8 is kept as an artifact, downloaded from the page byte for byte.
    link = page.get_attribute("#x-artifacts a[download=stderr]", "href")
    got = page.evaluate(
        "async (href) => Array.from(new Uint8Array(await (await fetch(href)).arrayBuffer()))", link
    )
    assert bytes(got) == XSS.encode() + b"\n\xff\n"
    assert page.errors == []


@pytest.mark.timeout(180)
def test_twelve_executions_followed_at_once_do_not_stall_the_page(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """The list follows 12 live executions on one stream; the page never holds more than two
    streams, and its other requests keep answering at once."""
    page = logged_in(chromium, daemon)
    ids = [
        daemon.start_bash(
            f'for i in $(seq 1 30); do echo "$i/30 step" >> "$WORKBENCH_PROGRESS"; echo tick $i; '
            f"while [ ! -e go-{n} ] && [ $i = 15 ]; do sleep 0.05; done; sleep 0.05; done",
            cwd=str(tmp_path),
        )["executionId"]
        for n in range(12)
    ]
    for execution_id in ids:
        page.wait_for_selector(f"tr[data-id={execution_id}]")
    # Every row shows its progress as it changes, halfway (each waits at step 15 of 30).
    wait_js(
        page,
        "(ids) => ids.every((id) => document.querySelector(`tr[data-id=${id}]`).textContent.includes('50%'))",
        ids,
        60,
    )
    page.click(f"tr[data-id={ids[0]}] a")
    wait_js(page, "() => document.getElementById('log').textContent.includes('tick 15')")
    fetch_ms = page.evaluate(
        "async () => { const t = performance.now(); await fetch('/v1/images');"
        " return performance.now() - t; }"
    )
    assert fetch_ms < 5_000
    for n in range(12):
        (tmp_path / f"go-{n}").touch()
    status_shown(page, "completed", timeout_s=60)
    assert "tick 30" in page.inner_text("#log")
    page.click("a.brand")
    for execution_id in ids:
        page.wait_for_selector(f"tr[data-id={execution_id}][data-status=completed]", timeout=60_000)
    assert page.evaluate("() => window.__streams.max") <= 2
    assert page.evaluate("() => window.workbench.openStreams()") == 1
    assert page.errors == []


@pytest.mark.timeout(120)
def test_workbench_ui_prints_a_one_time_link_that_opens_the_dashboard_logged_in(
    daemon: DaemonProcess, chromium: Any
) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "workbench", "ui", "--url", daemon.url, "--token", TOKEN],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert printed.startswith(daemon.url + "/#login=")
    page = open_page(chromium, printed)
    page.wait_for_selector("#rows", state="attached")
    assert page.inner_text("#who") == "admin"
    assert "#login=" not in page.url  # the spent code left the history
    again = open_page(chromium, printed)
    again.wait_for_selector("#login-form")
    assert "unknown, used or expired" in again.inner_text("#login-error")


def add_finished_executions(data_dir: Path, count: int) -> None:
    """Copy the newest execution of a stopped daemon's store `count` times, under new ids."""
    from workbench.wire.ids import new_execution_id

    with sqlite3.connect(data_dir / "workbench.db") as conn:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(executions)") if r[1] != "id"]
        names = ", ".join(columns)
        source = conn.execute("SELECT id FROM executions ORDER BY id DESC LIMIT 1").fetchone()[0]
        for _ in range(count):
            conn.execute(
                f"INSERT INTO executions (id, {names}) SELECT ?, {names} FROM executions WHERE id = ?",
                (new_execution_id(), source),
            )
        conn.execute(
            "INSERT INTO events (execution_id, sequence, event_type, body) SELECT e.id, v.sequence, "
            "v.event_type, v.body FROM executions e, events v WHERE v.execution_id = ? AND e.id != ?",
            (source, source),
        )


@pytest.mark.timeout(240)
def test_ten_thousand_executions_and_a_log_of_five_mib_stay_usable(chromium: Any, tmp_path: Path) -> None:
    """The list is paged (50 at a time; filters run in the daemon), the log is virtualised."""
    daemon = DaemonProcess(tmp_path / "data", WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES=str(8 * 2**20))
    try:
        daemon.start()
        daemon.wait(daemon.start_bash("echo small")["executionId"])
        daemon.stop()
        add_finished_executions(tmp_path / "data", 10_000)
        daemon.start()
        big = daemon.client.post(
            "/v1/executions/workbench_bash",
            json={
                "command": "yes " + "x" * 99 + " | head -c 5242880",
                "waitTimeoutMs": 60_000,
                "metadata": {"tag": "big-one"},
            },
        ).json()
        assert big["status"] == "completed" and big["output"]["stdoutBytes"] == 5 * 2**20, big
        assert not big["output"]["truncated"]
        page = logged_in(chromium, daemon)
        wait_js(page, "() => document.querySelectorAll('#rows tr').length === 50")
        first = page.eval_on_selector_all("#rows tr", "(rows) => rows.map((r) => r.dataset.id)")
        page.click("#next")
        wait_js(page, "(id) => !document.querySelector(`tr[data-id=${id}]`)", first[0])
        second = page.eval_on_selector_all("#rows tr", "(rows) => rows.map((r) => r.dataset.id)")
        assert len(second) == 50 and not set(first) & set(second) and max(second) < min(first)
        page.fill("#filters input[name=q]", "big-one")
        page.click("#filters button[type=submit]")
        wait_js(page, "() => document.querySelectorAll('#rows tr').length === 1")
        page.click(f"tr[data-id={big['executionId']}] a")
        wait_js(
            page,
            "() => window.workbench.execution && window.workbench.execution.model.lines.length === 52429",
            None,
            60,
        )
        assert page_text(page, "stdout") == ("x" * 99 + "\n") * 52428 + "x" * 80
        assert page.evaluate("() => document.querySelectorAll('#log .line').length") < 200
        page.evaluate("() => { document.getElementById('log').scrollTop = 0; }")
        wait_js(page, "() => document.querySelector('#log .line').textContent === 'x'.repeat(99)")
        assert page.errors == []
    finally:
        daemon.close()


def test_an_execution_created_while_the_list_loads_stays_in_it(daemon: DaemonProcess, chromium: Any) -> None:
    """The list's live changes start before its first page is read. An execution created after
    that read, whose `created` change reaches the page before the page's (older) answer, must
    stay in the list once the answer is shown."""
    page = logged_in(chromium, daemon)
    started: dict[str, Any] = {}

    def stale(route: Any) -> None:
        response = route.fetch()  # read now: it lacks the execution started next
        time.sleep(0.5)  # the changes stream is connected
        started.update(daemon.start_bash("sleep 30"))
        time.sleep(1)  # its `created` change is in the page
        route.fulfill(response=response)

    page.route(re.compile(r"/v1/executions\?"), stale)
    page.evaluate("() => { location.hash = '#/?kind=workbench_bash'; }")
    page.wait_for_selector("#page-info")
    wait_js(page, "() => document.getElementById('page-info').textContent === 'page 1'")
    page.unroute(re.compile(r"/v1/executions\?"))
    page.wait_for_selector(f"tr[data-id={started['executionId']}] a", timeout=5000)
    daemon.client.post(f"/v1/executions/{started['executionId']}/cancel", json={})


def test_an_execution_created_before_a_slow_changes_stream_comes_still_shows(
    daemon: DaemonProcess, chromium: Any
) -> None:
    """The list does not wait more than 2 s for its changes stream: it reads its page, and reads
    it again once the stream stands, so an execution created between the two still shows."""
    page = logged_in(chromium, daemon)
    started: dict[str, Any] = {}

    def late(route: Any) -> None:
        time.sleep(2.5)  # the page has been read without the stream
        started.update(daemon.start_bash("sleep 30"))
        route.continue_()  # the stream starts after that start: its `created` change is not in it

    page.route(re.compile(r"/v1/events/stream"), late)
    page.reload()  # a new page: its list starts a new changes stream
    page.wait_for_timeout(3000)
    page.unroute(re.compile(r"/v1/events/stream"))
    page.wait_for_selector(f"tr[data-id={started['executionId']}] a", timeout=10000)
    daemon.client.post(f"/v1/executions/{started['executionId']}/cancel", json={})


def test_an_older_execution_whose_change_comes_after_a_newer_ones_still_shows(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """A changes stream that resumes (or falls behind) sends each execution once, at its latest
    change: an older execution's later change can come after a newer one's `created`. The older
    one belongs in the list all the same, in its place (newest first)."""
    page = logged_in(chromium, daemon)
    wait_js(page, "() => window.workbench.openStreams() === 1")
    first = daemon.start_bash("true")
    page.wait_for_selector(f"tr[data-id={first['executionId']}][data-status=completed]")
    started: dict[str, dict[str, Any]] = {}

    def resumed(route: Any) -> None:
        # While the page is away: A starts, then B, and A's end is the latest change of all.
        started["a"] = daemon.start_bash("while [ ! -e go ]; do sleep 0.02; done", cwd=str(tmp_path))
        started["b"] = daemon.start_bash("sleep 30")
        (tmp_path / "go").touch()
        assert daemon.wait(started["a"]["executionId"])["status"] == "completed"
        route.continue_()

    page.route(re.compile(r"/v1/events/stream"), resumed)
    # The stream breaks (as when the network drops): the page reconnects after its cursor.
    page.evaluate("() => { for (const s of window.WorkbenchLog.ResumingStream.open) s.source.onerror(); }")
    try:
        wait_js(page, "() => document.querySelectorAll('#rows tr').length === 3", timeout_s=15)
    except PlaywrightTimeout:
        pass  # what is shown instead is the assertion's message
    finally:
        page.unroute(re.compile(r"/v1/events/stream"))
    a, b = started["a"]["executionId"], started["b"]["executionId"]
    shown = page.evaluate("() => [...document.querySelectorAll('#rows tr')].map((tr) => tr.dataset.id)")
    assert shown == [b, a, first["executionId"]], {"a": a, "b": b}
    assert page.evaluate(f"() => document.querySelector('tr[data-id={a}]').dataset.status") == "completed"
    daemon.client.post(f"/v1/executions/{b}/cancel", json={})
    assert page.errors == []
