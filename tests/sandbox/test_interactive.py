"""Open stdin and terminals held by the shim: input, end of file, backpressure, size, signals."""

from __future__ import annotations

import dataclasses
import signal
from typing import TYPE_CHECKING

import pytest
import trio

from sandbox import MAX_PENDING_INPUT, Containment, InputClosed, InputFull, Supervisor
from tests import procs

if TYPE_CHECKING:
    from tests.sandbox.conftest import Kit


async def test_open_stdin_takes_input_then_eof(sup: Supervisor, kit: Kit) -> None:
    """Input reaches a running process through the pipe the shim holds; eof closes it."""
    script = "read a; echo got $a; cat; echo done"
    spec = dataclasses.replace(kit.spec("ex", ["bash", "-c", script]), open_stdin=True)
    await sup.spawn(spec)
    await sup.send_input("ex", b"one\n")
    await kit.wait_until(lambda: "got one" in kit.out("ex"))
    await sup.send_input("ex", b"two\n", eof=True)
    status = await sup.wait_exited("ex")
    assert status.exit_code == 0
    assert kit.out("ex") == "got one\ntwo\ndone\n"
    with pytest.raises(InputClosed):
        await sup.send_input("ex", b"late")
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_input_to_a_process_that_never_reads_is_refused_not_blocking(sup: Supervisor, kit: Kit) -> None:
    """The shim buffers a bounded amount and then refuses input whole, never blocking."""
    spec = dataclasses.replace(kit.spec("ex", ["sleep", "300"]), open_stdin=True)
    await sup.spawn(spec)
    chunk = b"x" * (256 * 1024)
    sent = 0
    refused = None
    with trio.fail_after(10):
        while refused is None:
            try:
                await sup.send_input("ex", chunk)
                sent += len(chunk)
            except InputFull as exc:
                refused = exc
    # The pipe took some and the buffer the rest, then refusal: nothing waited on the process.
    assert sent + len(chunk) > MAX_PENDING_INPUT
    assert "has not read" in refused.message
    await sup.signal("ex", signal.SIGKILL)
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_no_input_without_open_stdin(sup: Supervisor, kit: Kit) -> None:
    """An execution started without open stdin takes no input."""
    await sup.spawn(kit.spec("ex", ["sleep", "300"]))
    with pytest.raises(InputClosed):
        await sup.send_input("ex", b"x")
    with pytest.raises(InputClosed):
        await sup.resize("ex", 10, 10)
    await sup.signal("ex", signal.SIGKILL)
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_tty_is_a_terminal_with_its_size_and_resize(
    sup: Supervisor, kit: Kit, containment: Containment
) -> None:
    """A tty spec runs on a terminal: [ -t 1 ], stty size, SIGWINCH on resize, one output stream."""
    script = (
        "[ -t 0 ] && [ -t 1 ] && echo tty; stty size; echo err >&2; "
        # `wait` returns when a trapped signal arrives (`read` would only run the trap later).
        "trap 'stty size; kill $s' WINCH; sleep 300 & s=$!; echo ready; wait $s; read -r _; echo bye"
    )
    spec = dataclasses.replace(kit.spec("ex", ["bash", "-c", script], containment), tty=(30, 100))
    await sup.spawn(spec)
    await kit.wait_until(lambda: "ready" in kit.out("ex"))
    await sup.resize("ex", 40, 120)
    await kit.wait_until(lambda: "40 120" in kit.out("ex"))
    await sup.send_input("ex", b"\n")
    assert (await sup.wait_exited("ex")).exit_code == 0
    await sup.wait_empty("ex")
    out = (kit.root / "ex" / "stdout").read_bytes()  # a terminal's newlines are CR LF
    assert out.startswith(b"tty\r\n30 100\r\nerr\r\nready\r\n40 120\r\n")
    assert out.endswith(b"bye\r\n")
    assert kit.out("ex", "stderr") == ""
    await sup.release("ex")


async def test_foreground_signal_interrupts_the_job_not_the_shell(sup: Supervisor, kit: Kit) -> None:
    """INT to the terminal's foreground group stops the foreground job; the interactive shell lives."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "TERM": "xterm", "PS1": "$ "}
    spec = kit.spec("ex", ["bash", "--norc", "--noprofile", "-i"], env=env)
    await sup.spawn(dataclasses.replace(spec, tty=(24, 80)))
    await sup.send_input("ex", b"sleep 300; echo after-$?\n")
    await kit.wait_until(lambda: "sleep 300" in kit.out("ex"))
    await procs.eventually(lambda: procs.in_foreground(["sleep", "300"]))
    await sup.signal("ex", signal.SIGINT, foreground=True)
    await sup.send_input("ex", b"echo alive\n")
    await kit.wait_until(lambda: "\nalive" in kit.out("ex"))
    await sup.send_input("ex", b"exit 3\n")
    assert (await sup.wait_exited("ex")).exit_code == 3
    await sup.wait_empty("ex")
    await sup.release("ex")


async def test_tty_tree_with_escapees_dies_whole(sup: Supervisor, kit: Kit, containment: Containment) -> None:
    """Cancel is hard on a terminal too: setsid children holding the terminal die with it."""
    script = "setsid sleep 300 & (sleep 300 &) ; echo up; sleep 300"
    spec = dataclasses.replace(kit.spec("ex", ["bash", "-c", script], containment), tty=(24, 80))
    await sup.spawn(spec)
    await kit.wait_until(lambda: "up" in kit.out("ex"))
    await kit.wait_until(lambda: len(kit.tagged()) >= 3)
    await sup.signal("ex", signal.SIGKILL)
    await sup.wait_empty("ex")
    assert kit.tagged() == []
    with pytest.raises(InputClosed):
        await sup.send_input("ex", b"x")
    await sup.release("ex")
