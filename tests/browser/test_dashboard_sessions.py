"""The dashboard when the daemon goes away, when the session ends, and with two tabs."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import logged_in, wait_js
from tests.conftest import TOKEN
from tests.reliability.conftest import DaemonProcess

UNREACHABLE = "cannot reach the daemon"


def shown(page: Any, selector: str, text: str, timeout_s: float = 15) -> None:
    wait_js(
        page,
        "([s, t]) => { const e = document.querySelector(s);"
        " return e && !e.hidden && e.textContent.includes(t); }",
        [selector, text],
        timeout_s,
    )


@pytest.mark.timeout(180)
def test_a_stopped_daemon_is_shown_and_the_page_recovers_when_it_is_back(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """A daemon that cannot be reached is a visible notice (not stale content), and so is an action
    that cannot reach it (not `undefined: Failed to fetch`); once back, the notice goes and the log
    goes on."""
    page = logged_in(chromium, daemon)
    started = daemon.start_bash(
        "echo before; while [ ! -e release ]; do sleep 0.05; done; echo after", cwd=str(tmp_path)
    )
    restarted = False
    try:
        page.goto(f"{daemon.url}/#/x/{started['executionId']}")
        wait_js(page, "() => document.getElementById('log').textContent.includes('before')")
        daemon.kill9()
        shown(page, "#notice", UNREACHABLE)
        page.click("#rerun")
        shown(page, "#action-result", UNREACHABLE)
        page.click("a.brand")
        page.wait_for_selector("#start-form", state="attached")
        page.click("#start summary")
        page.fill("#start-form textarea[name=command]", "echo hello")
        page.click("#start-form button[type=submit]")
        shown(page, "#start-error", UNREACHABLE)
        daemon.start()
        restarted = True
        wait_js(page, "() => document.getElementById('notice').hidden", timeout_s=20)
        page.wait_for_selector(f"tr[data-id={started['executionId']}]", timeout=20_000)
        page.click(f"tr[data-id={started['executionId']}] a")
        (tmp_path / "release").touch()
        wait_js(page, "() => document.getElementById('log').textContent.includes('after')")
    finally:
        (tmp_path / "release").touch()
        if not restarted:
            daemon.start()
    assert daemon.wait(started["executionId"])["status"] == "completed"
    assert "undefined" not in page.inner_text("body")
    assert page.errors == []


@pytest.mark.timeout(120)
def test_a_second_tab_follows_logout_and_login_and_an_ended_session_shows_the_login_form(
    daemon: DaemonProcess, chromium: Any, tmp_path: Path
) -> None:
    """Tabs share the session: one logs out, and the other shows the login form too; it logs in
    again, and the other is back on its page, its changes carrying the new CSRF value. A session
    that ended (a 401 on a stream) shows the login form, and the page stops. A page left before
    it was read leaves no notice."""
    page = logged_in(chromium, daemon)
    started = daemon.start_bash("echo ready; while [ ! -e release ]; do sleep 0.05; done", cwd=str(tmp_path))

    def slow(route: Any) -> None:
        time.sleep(1.5)
        route.continue_()

    # The list is left before its page is read: no notice of it comes (no error of a page not shown).
    page.route(re.compile(r"/v1/executions\?"), slow)
    page.click("#first")
    page.evaluate("(id) => { location.hash = '#/x/' + id; }", started["executionId"])
    page.wait_for_timeout(2500)
    assert page.is_hidden("#notice"), page.inner_text("#notice")
    page.unroute(re.compile(r"/v1/executions\?"))
    wait_js(page, "() => document.getElementById('log').textContent.includes('ready')")
    other = page.context.new_page()
    other.goto(daemon.url + "/")
    other.wait_for_selector("#rows", state="attached")
    other.click("#logout")
    other.wait_for_selector("#login-form")
    page.wait_for_selector("#login-form", timeout=10_000)
    other.fill("input[name=token]", TOKEN)
    other.click("#login-form button[type=submit]")
    other.wait_for_selector("#rows", state="attached")
    wait_js(page, "() => document.getElementById('log').textContent.includes('ready')")
    assert page.inner_text("#who") == other.inner_text("#who") != "", "the principal is named"
    page.click("#detach")
    wait_js(page, "() => document.getElementById('action-result').textContent === 'detached'")
    assert daemon.get(started["executionId"])["detached"] is True
    other.click("#logout")
    other.wait_for_selector("#login-form")
    # The page's streams break (as when the daemon ends them): their reconnects are refused.
    page.evaluate("() => { for (const s of window.WorkbenchLog.ResumingStream.open) s.source.onerror(); }")
    page.wait_for_selector("#login-form", timeout=10_000)
    wait_js(page, "() => window.__streams.open() === 0 && window.workbench.openStreams() === 0")
    (tmp_path / "release").touch()
    assert page.errors == []
