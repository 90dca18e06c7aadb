"""The dashboard's execution page as a follower, in a process of its own (row 18).

``python -m bench.page_follower URL TOKEN EXECUTION_ID N``: logs a headless Chromium in, opens
the execution's page, watches its log with a MutationObserver, prints ``ready``, and once N lines
of the writer (each a `time.time_ns()`) have entered the page's DOM prints one JSON line: each
line's text and when (ns, the wall clock) it first appeared in the DOM.
"""

from __future__ import annotations

import json
import shutil
import sys

from playwright.sync_api import sync_playwright

OBSERVE = """
() => {
  window.__seen = {};
  window.__count = 0;
  const log = document.getElementById("log");
  new MutationObserver((mutations) => {
    const at = performance.timeOrigin + performance.now();
    for (const m of mutations) for (const node of m.addedNodes) {
      const text = node.textContent;
      if (text.length === 19 && !(text in window.__seen)) { window.__seen[text] = at; window.__count++; }
    }
  }).observe(log, { childList: true, subtree: true });
}
"""


def main(url: str, token: str, execution_id: str, n: int) -> None:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(url + "/")
            page.fill("input[name=token]", token)
            page.click("#login-form button[type=submit]")
            page.wait_for_selector("#rows", state="attached")
            page.goto(f"{url}/#/x/{execution_id}")
            page.wait_for_selector("#log .spacer", state="attached")
            page.evaluate(OBSERVE)
            print("ready", flush=True)
            page.wait_for_function("(n) => window.__count >= n", arg=n, timeout=120_000, polling=100)
            seen = page.evaluate("() => window.__seen")
        finally:
            browser.close()
    print(json.dumps([[text, round(at * 1e6)] for text, at in seen.items()]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
