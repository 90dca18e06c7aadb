"""The CLI's pieces without a daemon: ids, tails, exit statuses, what `run` takes from its caller."""

from __future__ import annotations

import time
from typing import Any, cast

import pytest

from workbench.cli import exitcodes
from workbench.cli.env import default_cwd, is_local, shell_environment, unknown_variables
from workbench.cli.exitcodes import BadId
from workbench.cli.http import ApiError, Http
from workbench.cli.ids import below_time, normal, shortest
from workbench.cli.inputs import send_piece
from workbench.cli.logs import last_lines
from workbench.cli.main import command_of
from workbench.client.config import resolve

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid(ms: int, rand: int = 12345) -> str:
    """A ULID of the millisecond `ms` (the daemon's own never goes back in time)."""
    value, chars = (ms << 80) | rand, []
    for _ in range(26):
        chars.append(ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def test_ids_are_read_in_any_case_with_or_without_the_prefix() -> None:
    assert normal("ex_01jd5q") == normal("01JD5Q") == "01JD5Q"
    for bad in ("", "ex_", "01JD-5", "01JDU", "x" * 27, "ex_" + "0" * 27):
        with pytest.raises(BadId, match="not an execution id"):
            normal(bad)


def test_short_ids_tell_the_rows_apart() -> None:
    same_ms = ["ex_" + ulid(1_000_000, r) for r in (7, 8, 9)]  # one millisecond, counted up
    apart = ["ex_" + ulid(2_000_000_000), "ex_" + ulid(3_000_000_000)]
    short = shortest([*same_ms, *apart])
    assert len(set(short.values())) == 5
    assert all(full.startswith(part) for full, part in short.items())
    assert {len(short[i]) for i in apart} == {3 + 12}
    assert all(len(short[i]) > 15 for i in same_ms)


def test_the_cursor_of_a_moment_is_below_every_later_id() -> None:
    ms = 1_700_000_000_000
    cursor = below_time(ms)
    assert "ex_" + ulid(ms - 1, 2**80 - 1) < cursor <= "ex_" + ulid(ms, 0) < "ex_" + ulid(ms, 1)


def test_last_lines() -> None:
    assert last_lines(b"a\nb\nc\n", 2) == (b"b\nc\n", True)
    assert last_lines(b"a\nb\nc", 1) == (b"c", True)
    assert last_lines(b"a\nb\n", 5) == (b"a\nb\n", False)
    assert last_lines(b"a\r\nb\rc\n", 1) == (b"b\rc\n", True), "only \\n ends a line"
    assert last_lines(b"abc", 0) == (b"", True)


def test_exit_statuses_keep_the_execution_s_and_the_cli_s_apart() -> None:
    def of(status: str, **fields: object) -> int:
        return exitcodes.of_record({"status": status, **fields})

    assert of("completed", exitCode=0) == 0
    assert of("failed", exitCode=3) == 3
    assert of("failed", signal="SIGKILL", error={"code": "oom", "message": ""}) == 137
    assert of("timed_out", error={"code": "idle_timeout", "message": ""}) == 124
    assert of("cancelled", signal="SIGTERM") == 130
    assert of("failed", error={"code": "spawn_failed", "message": ""}) == 126
    assert of("failed", error={"code": "lost", "message": ""}) == 125
    assert len({exitcodes.USAGE, exitcodes.WAIT_GAVE_UP, exitcodes.TIMED_OUT, exitcodes.FAILED}) == 4


class _Refusing:
    """A daemon that refuses input with `code` the first `times` times, then takes it."""

    def __init__(self, code: str, times: int) -> None:
        self.code, self.times, self.sent = code, times, 0

    def request_bytes(self, method: str, path: str, content: bytes, **kw: Any) -> None:
        self.sent += 1
        if self.sent <= self.times:
            raise ApiError(self.code, "refused", 429)


def test_a_piece_of_input_is_sent_again_on_a_full_backlog_within_its_bound() -> None:
    taken = _Refusing("input_backlog", 3)
    send_piece(cast("Http", taken), "/input", b"x", backlog_for=5.0)
    assert taken.sent == 4
    never = _Refusing("input_backlog", 10**9)
    began = time.monotonic()
    with pytest.raises(ApiError, match="input_backlog"):
        send_piece(cast("Http", never), "/input", b"x", backlog_for=0.3)
    assert 0.3 <= time.monotonic() - began < 3 and never.sent > 3
    other = _Refusing("conflict", 1)
    with pytest.raises(ApiError, match="conflict"):
        send_piece(cast("Http", other), "/input", b"x", backlog_for=5.0)
    assert other.sent == 1, "any other refusal is not sent again"


def test_what_decides_that_the_daemon_is_local() -> None:
    for url in ("http://127.0.0.1:8787", "http://localhost:1", "http://[::1]:9", "unix:///run/wb.sock"):
        assert is_local(resolve(url, environ={})), url
    for url in ("http://10.0.0.1:8787", "https://build.example:443", "http://[2001:db8::1]:80"):
        assert not is_local(resolve(url, environ={})), url
    local, remote = resolve("http://127.0.0.1:1", environ={}), resolve("http://10.1.2.3:1", environ={})
    assert default_cwd(local, None, None) is not None
    assert default_cwd(local, "host", None) is not None
    assert default_cwd(local, "sandbox", None) is None, "a sandbox sees only its workspace"
    assert default_cwd(local, None, "s-1") is None, "--session chooses its workspace"
    assert default_cwd(remote, None, None) is None


def test_the_shell_environment_passes_what_the_daemon_takes() -> None:
    env = {"PATH": "/bin", "WORKBENCH_TOKEN": "secret", "BASH_FUNC_f%%": "() { :; }", "BIG": "x" * 200_000}
    assert shell_environment({**env, "GOOD_1": "é"}) == {"PATH": "/bin", "GOOD_1": "é"}


def test_unknown_workbench_variables_are_named() -> None:
    environ = {"WORKBENCH_URL": "x", "WORKBENCH_TOKNE": "y", "WORKBENCH_PROGRESS": "z", "WORKBENCH_BIND": "b"}
    (warning,) = unknown_variables(environ)
    assert warning.startswith("WORKBENCH_TOKNE is set") and "did you mean WORKBENCH_TOKEN?" in warning


def test_the_command_is_found_without_building_every_parser() -> None:
    assert command_of(["run", "--", "ls"]) == "run"
    assert command_of(["--url", "http://x:1", "--token", "t", "ls", "-q"]) == "ls"
    assert command_of(["--url=http://x:1", "show", "@last"]) == "show"
    assert command_of(["--help"]) is None and command_of([]) is None and command_of(["nope"]) is None


def test_the_daemons_host_and_port_are_read_as_urlsplit_reads_them() -> None:
    """`authority` stands in for `urllib.parse.urlsplit` on the start path (its import costs)."""
    from urllib.parse import urlsplit

    from workbench.cli.http import authority

    for url in (
        "http://127.0.0.1:8787",
        "https://daemon.example:9443/",
        "http://localhost",
        "https://Daemon.Example",
        "http://[::1]:8787",
        "http://[fe80::1]",
        "http://user:secret@host:1234/path",
        "http://host:65535",
    ):
        parts = urlsplit(url)
        assert authority(url) == (parts.hostname, parts.port), url
    for bad in ("http://host:http", "http://host:99999", "http://host:-1"):
        with pytest.raises(ValueError):
            authority(bad)


def test_a_stream_that_cannot_reconnect_says_once_that_the_daemon_is_unreachable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A follower whose daemon stays away gives up with the one unreachable line of docs/cli.md."""
    from tests.ports import free_port
    from workbench.cli import http
    from workbench.client.config import Target

    monkeypatch.setattr(http, "RECONNECT_FOR_S", 0.2)
    follower = http.Http(Target(f"http://127.0.0.1:{free_port()}", None, "t", "--token"))
    with pytest.raises(http.ApiError) as caught:
        list(follower.stream("ex_01JD0000000000000000000000", 0))
    error = caught.value
    assert error.code == "unavailable"
    assert error.message.count("cannot reach the daemon") == 1, error.message
    assert error.message.count("is it running?") == 1, error.message
    assert "unavailable:" not in error.message, error.message


def test_a_signal_between_two_turns_of_the_follow_loop_is_taken_back_into_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`run -i`: a signal that lands outside the loop's `try` (between two turns) is given back to
    the loop as pending, with the sequence shown so far, not raised out of the command (a second
    Ctrl-C ended it with a traceback); `attach` (no reactions) still ends on it."""
    import signal as signals_module

    from workbench.cli import attach
    from workbench.cli.signals import Interrupted

    calls: list[tuple[Any, list[int]]] = []

    def turns(*args: Any) -> int:
        pending, last = args[5], args[6]
        calls.append((pending, list(last)))
        if len(calls) == 1:
            last[0] = 7
            raise Interrupted(signals_module.SIGINT)  # as if at the loop's `while`
        return 0

    monkeypatch.setattr(attach, "_turns", turns)
    reactions = cast("Any", object())
    assert (
        attach._follow(cast("Any", None), "ex_1", cast("Any", None), cast("Any", None), reactions, None) == 0
    )
    assert calls[0] == (None, [0])
    assert isinstance(calls[1][0], Interrupted) and calls[1][0].signum == signals_module.SIGINT
    assert calls[1][1] == [7], "the sequence shown so far is kept: nothing is shown twice"
    calls.clear()
    with pytest.raises(Interrupted):
        attach._follow(cast("Any", None), "ex_1", cast("Any", None), cast("Any", None), None, None)
