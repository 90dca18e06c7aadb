"""`cancel`, `wait` and `rm` of several ids (going on past a bad one), `rm` by status and age, the
messages of `events`, and what the CLI says about itself and about a URL that is not Workbench."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.cli.conftest import Cli
from tests.client.restart import keeping_daemon, restart
from tests.conftest import DaemonHandle

MISSING = "ex_01JD0000000000000000000000"


async def test_cancel_sends_sigterm_first_and_goes_on_past_a_bad_id(cli: Cli, wb: DaemonHandle) -> None:
    """Promise 3 at the CLI: by default a trap of SIGTERM runs; every tree is dead when it returns."""
    polite = await wb.start("trap 'echo cleaned up; exit 0' TERM; while :; do sleep 0.1; done")
    other = await wb.start("sleep 30")
    await wb.wait(polite["executionId"], wait_ms=300)  # its trap is set by now
    ran = await cli("cancel", polite["executionId"], MISSING, other["executionId"][:25])
    assert ran.code == 125, ran
    assert ran.text.splitlines() == [
        f"{polite['executionId']} cancelled",
        f"{other['executionId']} cancelled",
    ]
    assert ran.error == f"workbench: not_found: no execution {MISSING}\n"
    record = await wb.wait(polite["executionId"])
    assert record["status"] == "cancelled"
    tail = (await cli.ok("logs", polite["executionId"])).out
    assert tail == b"cleaned up\n", "SIGTERM came first, and its trap ran"


async def test_cancel_now_kills_at_once(cli: Cli, wb: DaemonHandle) -> None:
    stubborn = await wb.start("trap '' TERM; while :; do sleep 0.1; done")
    await wb.wait(stubborn["executionId"], wait_ms=300)
    ran = json.loads((await cli.ok("cancel", "--now", "--json", stubborn["executionId"])).out)
    assert ran["cancelled"] is True and ran["execution"]["signal"] == "SIGKILL"


async def test_wait_for_several_exits_like_the_first_that_did_not_complete(
    cli: Cli, wb: DaemonHandle
) -> None:
    ok = await wb.start("true")
    bad = await wb.start("sleep 0.2; exit 4")
    ran = await cli("wait", ok["executionId"], MISSING, bad["executionId"])
    assert ran.code == 125, ran
    assert ran.text.splitlines() == [
        f"{ok['executionId']} completed (exit 0)",
        f"{bad['executionId']} failed (exit 4)",
    ]
    both = await cli("wait", "--json", ok["executionId"], bad["executionId"])
    assert both.code == 4 and [r["exitCode"] for r in json.loads(both.out)] == [0, 4]


async def test_rm_several_and_by_status_and_age(cli: Cli, wb: DaemonHandle) -> None:
    kept = await wb.run("exit 1")
    done = [await wb.run("true") for _ in range(3)]
    running = await wb.start("sleep 30")
    ran = await cli("rm", done[0]["executionId"], running["executionId"], done[1]["executionId"][:24])
    assert ran.code == 125 and ran.text.split() == [done[0]["executionId"], done[1]["executionId"]]
    assert ran.error.startswith("workbench: conflict: ")
    young = await cli.ok("rm", "--status", "completed", "--before", "1h")
    assert young.text == "", "nothing is that old"
    future = await cli.ok("rm", "--status", "completed", "--before", "2999-01-01")
    assert future.text.split() == [done[2]["executionId"]]
    left = json.loads((await cli.ok("ls", "--json", "--all")).out)["executions"]
    assert [r["executionId"] for r in left] == [running["executionId"], kept["executionId"]]
    refused = await cli("rm", "--status", "running")
    assert refused.code == 2 and "--status running" in refused.error
    await wb.client.post(f"/v1/executions/{running['executionId']}/cancel", json={})
    await wb.wait(running["executionId"])
    everything = await cli.ok("rm", "--before", "0s")
    assert set(everything.text.split()) == {running["executionId"], kept["executionId"]}


async def test_events_show_status_messages(cli: Cli, wb: DaemonHandle, make_daemon: Any) -> None:
    running = await wb.start("sleep 30")
    await cli.ok("cancel", "--now", "--reason", "not needed", running["executionId"])
    shown = (await cli.ok("events", running["executionId"])).text
    assert re.search(r"status +cancel_requested \(not needed\)", shown), shown


async def test_events_say_an_execution_was_adopted(make_daemon: Any, tmp_path: Any) -> None:
    first = await keeping_daemon(make_daemon)
    started = await first.start("sleep 1; echo done")
    second = await restart(make_daemon, first)
    cli = Cli(second.url, tmp_path / "client-home")
    await second.wait(started["executionId"])
    shown = (await cli.ok("events", started["executionId"])).text
    assert "(adopted after a daemon restart)" in shown, shown


async def test_version_and_serve_help(cli: Cli) -> None:
    from workbench import __version__

    assert (await cli.ok("--version")).text == f"workbench {__version__}\n"
    helped = (await cli.ok("serve", "--help")).text
    assert "environment variables" in helped
    for name in ("WORKBENCH_BIND", "WORKBENCH_DATA_DIR", "WORKBENCH_SHUTDOWN_MODE"):
        assert name in helped


def test_serve_help_lists_exactly_the_daemon_settings() -> None:
    from workbench.cli.env import DAEMON_VARIABLES
    from workbench.core.settings import _ENV

    assert set(DAEMON_VARIABLES) == set(_ENV)


async def test_unknown_workbench_variables_are_warned_about(cli: Cli, wb: DaemonHandle) -> None:
    ran = await cli("ls", "-q", env=cli.env(WORKBENCH_TOKNE="x"))
    assert ran.code == 0
    assert ran.error == (
        "workbench: warning: WORKBENCH_TOKNE is set but Workbench reads no such variable "
        "(did you mean WORKBENCH_TOKEN?)\n"
    )


@contextmanager
def html_server() -> Iterator[int]:
    """A server that is not Workbench: every request gets an HTML page."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(10)
    page = b"<html><body>Not here</body></html>"

    def serve() -> None:
        try:
            while True:
                conn, _ = listener.accept()
                with conn:
                    conn.settimeout(10)
                    conn.recv(65536)
                    conn.sendall(
                        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                        b"Connection: close\r\n\r\n%s" % (len(page), page)
                    )
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()


async def test_a_url_that_is_not_workbench_says_so_in_one_line(cli: Cli) -> None:
    with html_server() as port:
        url = f"http://127.0.0.1:{port}"
        ran = await cli("ls", env=cli.env(WORKBENCH_URL=url))
    assert ran.code == 125
    assert ran.error == (
        f"workbench: unavailable: {url} is not a Workbench daemon: it answered HTTP 404 (text/html) "
        "(check --url or WORKBENCH_URL)\n"
    )
