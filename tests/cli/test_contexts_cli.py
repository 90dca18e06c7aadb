"""`workbench context new|ls|rm` and `workbench code --context ID`."""

from __future__ import annotations

import json

from tests.cli.conftest import Cli
from tests.conftest import DaemonHandle


async def test_context_new_code_ls_rm(cli: Cli, wb: DaemonHandle) -> None:
    cx = (await cli.ok("context", "new")).text.strip()
    assert cx.startswith("cx_")
    await cli.ok("code", "--context", cx, "-l", "python", "-", stdin=b"x = 20\n")
    ran = await cli.ok("code", "--context", cx, "-l", "python", "-", stdin=b"print('hi')\nx * 2 + 2\n")
    assert ran.text == "hi\n42\n", ran
    failed = await cli("code", "--context", cx, "-l", "python", "-", stdin=b"x / 0\n")
    assert failed.code == 1 and "ZeroDivisionError" in failed.error and "Traceback" in failed.error, failed
    listed = (await cli.ok("context", "ls")).text
    assert cx in listed and "ready" in listed and "python" in listed
    records = json.loads((await cli.ok("context", "ls", "--json")).text)["contexts"]
    assert [(c["contextId"], c["executions"]) for c in records] == [(cx, 3)]
    refused = await cli("code", "--context", cx, "-l", "python", "--cwd", "/tmp", "-", stdin=b"1\n")
    assert refused.code == 2 and "--cwd cannot be given with --context" in refused.error, refused
    assert (await cli.ok("context", "rm", cx)).text.strip() == cx
    assert json.loads((await cli.ok("context", "ls", "--json")).text) == {"contexts": []}
    gone = await cli("context", "rm", cx)
    assert gone.code == 125 and "not_found" in gone.error, gone


async def test_code_takes_c_code_and_a_context_s_own_language(cli: Cli, wb: DaemonHandle) -> None:
    # `-c CODE` as `python -c` has it; with --context the language is the context's own.
    assert (await cli.ok("code", "-l", "python", "-c", "print(6 * 7)")).text == "42\n"
    cx = (await cli.ok("context", "new")).text.strip()
    await cli.ok("code", "--context", cx, "-c", "x = 20")
    assert (await cli.ok("code", "--context", cx, "-c", "x * 2 + 2")).text == "42\n"
    mismatch = await cli("code", "--context", cx, "-l", "bash", "-c", "echo hi")
    assert mismatch.code == 125 and "runs python, not bash" in mismatch.error, mismatch
    both = await cli("code", "-l", "python", "-c", "1", "-")
    assert both.code == 2 and "either FILE or -c" in both.error, both
    neither = await cli("code", "-l", "python")
    assert neither.code == 2 and "FILE, - or -c CODE" in neither.error, neither
    no_language = await cli("code", "-c", "1")
    assert no_language.code == 2 and "-l/--language is required" in no_language.error, no_language
    unknown = await cli("code", "--context", "cx_nosuchcontext", "-c", "1")
    assert unknown.code == 125 and "not_found" in unknown.error, unknown


async def test_a_cell_that_outlasts_the_quick_wait_still_shows_its_value_and_traceback(
    cli: Cli, wb: DaemonHandle
) -> None:
    # Longer than the start's own wait (run.QUICK_WAIT_MS): `code` follows the cell to its end,
    # and the value and traceback are in the record, not in its output.
    cx = (await cli.ok("context", "new")).text.strip()
    ran = await cli.ok("code", "--context", cx, "-c", "import time; print('hi'); time.sleep(0.3); 6 * 7")
    assert ran.text == "hi\n42\n", ran
    failed = await cli("code", "--context", cx, "-c", "import time; time.sleep(0.3); 1 / 0")
    assert failed.code == 1 and "Traceback" in failed.error and "ZeroDivisionError" in failed.error, failed


async def test_a_value_after_output_without_a_newline_starts_its_own_line(cli: Cli, wb: DaemonHandle) -> None:
    """The value is printed on a line of its own, as a notebook shows it below the output: after
    output that did not end its line (from the journal, or from an artifact past the budget)."""
    cx = (await cli.ok("context", "new")).text.strip()
    ran = await cli.ok("code", "--context", cx, "-c", "import sys\nsys.stdout.write('nonl')\n4")
    assert ran.text == "nonl\n4\n", ran
    ended = await cli.ok("code", "--context", cx, "-c", "print('line')\n5")
    assert ended.text == "line\n5\n", ended
    big = await cli.ok("code", "--context", cx, "-c", "sys.stdout.write('x' * (6 << 20))\n6")
    assert big.text == "x" * (6 << 20) + "\n6\n", (len(big.text), big.text[-10:])
