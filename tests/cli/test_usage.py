"""Every usage error exits 2 with one line on stderr that names what was wrong, and does nothing."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle

BAD = [
    (["ls", "--status", "nope"], "--status"),
    (["ls", "--status", "failed,nope"], "--status"),
    (["ls", "--kind", "rust"], "--kind"),
    (["ls", "--limit", "0"], "--limit"),
    (["ls", "--limit", "many"], "--limit"),
    (["ls", "--session", "../x"], "--session"),
    (["ls", "--watch"], "--watch"),  # not a terminal
    (["ls", "--watch", "--json"], "--watch"),
    (["ls", "--running", "--status", "completed"], "--running"),
    (["run", "--timeout", "soon", "--", "true"], "--timeout"),
    (["run", "--idle-timeout", "-1s", "--", "true"], "--idle-timeout"),
    (["run", "--session", "a b", "--", "true"], "--session"),
    (["run", "--metadata", "{oops", "--", "true"], "--metadata"),
    (["run", "--env", "NOT_SET_ANYWHERE_XYZ", "--", "true"], "--env"),
    (["run", "--stdin", "/does/not/exist", "--", "true"], "--stdin"),
    (["run", "--stdin", "-", "--no-stdin", "--", "true"], "--no-stdin"),
    (["run", "--url", "ftp://x", "--", "true"], "--url"),
    (["--url", "http://127.0.0.1:99999", "ls"], "--url"),
    (["ls", "--url", "http://127.0.0.1:abc"], "--url"),
    (["run", "--timeout", "0", "--", "true"], "--timeout"),
    (["run", "--timeout", "25h", "--", "true"], "--timeout"),
    (["batch", "--timeout", "0", "-"], "--timeout"),
    (["batch", "--timeout", "48h", "-"], "--timeout"),
    (["run", "--service", "--ready-port", "8000", "--ready-timeout", "0", "--", "true"], "--ready-timeout"),
    (["run", "--service", "--ready-port", "8000", "--ready-timeout", "25h", "--", "true"], "--ready-timeout"),
    (["run", "--idle-timeout", "0s", "--", "true"], "--idle-timeout"),
    (["run", "--env", "=x", "--", "true"], "--env"),
    (["run", "--env", "A B=x", "--", "true"], "--env"),
    (["run", "--secret-env", "1A=x", "--", "true"], "--secret-env"),
    (["run", "-i", "--stdin", "/dev/null", "--", "cat"], "--stdin"),
    (["run", "-t", "--stdin", "/dev/null", "--", "cat"], "--stdin"),
    (["run"], "COMMAND"),
    (["code", "-l", "python"], "FILE"),
    (["wait", "--timeout", "x", "ex_01JD0000000000000000000000"], "--timeout"),
    (["wait"], "ID"),
    (["cancel", "--grace", "2s", "--now", "ex_01JD0000000000000000000000"], "--now"),
    (["cancel", "--grace", "forever", "ex_01JD0000000000000000000000"], "--grace"),
    (["logs", "--tail", "-3", "ex_01JD0000000000000000000000"], "--tail"),
    (["logs", "--since", "yesterday-ish", "ex_01JD0000000000000000000000"], "--since"),
    (["logs", "--stdout", "--stderr", "ex_01JD0000000000000000000000"], "--stderr"),
    (["exits", "--limit", "0"], "--limit"),
    (["exits", "--wait", "x"], "--wait"),
    (["rm"], "--status"),
    (["rm", "--status", "queued"], "--status"),
    (["rm", "--before", "whenever"], "--before"),
    (["rm", "--status", "failed", "ex_01JD0000000000000000000000"], "--status"),
    (["artifacts", "-o", "f", "ex_01JD0000000000000000000000"], "-o"),
    (["show", "ex_not!an!id"], "ex_not!an!id"),
    (["show"], "ID"),
    (["nonsense"], "nonsense"),
    (["--bogus-flag", "ls"], "--bogus-flag"),
]


@pytest.mark.parametrize(("argv", "named"), BAD, ids=[" ".join(a) for a, _ in BAD])
async def test_a_usage_error_is_one_line_naming_the_option(
    cli: Cli, wb: DaemonHandle, argv: list[str], named: str
) -> None:
    ran = await cli(*argv)
    assert ran.code == 2, ran
    assert ran.out == b"" and ran.error.count("\n") == 1, ran
    assert ran.error.startswith("workbench: usage: ") and named in ran.error, ran
    listing = (await wb.client.get("/v1/executions")).json()["executions"]
    assert listing == [], "a usage error does nothing"


async def test_a_bad_url_in_the_variable_is_a_usage_error(cli: Cli, wb: DaemonHandle) -> None:
    ran = await cli("ls", env=cli.env(WORKBENCH_URL="http://127.0.0.1:99999"))
    assert ran.code == 2, ran
    assert ran.error == "workbench: usage: --url: bad port in 'http://127.0.0.1:99999'\n", ran
