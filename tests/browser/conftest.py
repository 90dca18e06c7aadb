"""The dashboard in a real headless Chromium (Debian's `chromium`, driven by Playwright), against
a real daemon run as a process (so that a test can SIGKILL it and start it again on its port)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN
from tests.reliability.conftest import DaemonProcess

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
#: Counts the page's EventSources that are not closed, and the most ever open at once.
COUNT_STREAMS = """
(() => {
  const made = [];
  const Original = window.EventSource;
  window.EventSource = function (...args) { const s = new Original(...args); made.push(s); return s; };
  window.EventSource.prototype = Original.prototype;
  window.__streams = { open: () => made.filter((s) => s.readyState !== 2).length, max: 0 };
  setInterval(() => { window.__streams.max = Math.max(window.__streams.max, window.__streams.open()); }, 10);
})();
"""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    """A daemon process on a free port; stopped (its executions killed) at the end."""
    handle = DaemonProcess(tmp_path / "data")
    handle.start()
    yield handle
    handle.close()


@pytest.fixture(scope="module")
def headless_chromium() -> Iterator[Any]:
    """One headless Chromium for a module's tests (starting one takes about a second)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "the dashboard's tests need Debian's chromium (scripts/test installs it)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def chromium(headless_chromium: Any) -> Iterator[Any]:
    """The headless Chromium; every context (and so every page) the test opened is closed at its
    end, so that the next test starts with none and no page of this one still reaches a daemon."""
    yield headless_chromium
    for context in list(headless_chromium.contexts):
        context.close()


def open_page(chromium: Any, url: str) -> Any:
    """A new page (in a context of its own) with its streams counted and its errors collected."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.add_init_script(COUNT_STREAMS)
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(url)
    return page


def logged_in(chromium: Any, daemon: DaemonProcess) -> Any:
    """A page of the dashboard, logged in with the token through the login form."""
    page = open_page(chromium, daemon.url + "/")
    page.fill("input[name=token]", TOKEN)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#rows", state="attached")
    return page


def wait_js(page: Any, predicate: str, arg: Any = None, timeout_s: float = 30) -> Any:
    """Wait until the function `predicate` (JavaScript) returns a truthy value in the page."""
    return page.wait_for_function(predicate, arg=arg, timeout=timeout_s * 1000).json_value()
