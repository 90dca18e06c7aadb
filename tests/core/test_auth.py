"""Tokens, principals and scopes without a daemon: the authenticator, the admin token, the tokens file."""

from __future__ import annotations

import hmac
import logging
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from workbench.core import auth
from workbench.core.service import Principal
from workbench.core.settings import Settings, is_loopback, split_bind
from workbench.wire.errors import ConfigError, Forbidden, Unauthorized

ADMIN_TOKEN = "admin-token-0123456789"
ALICE_TOKEN = "alice-token-0123456789"
BOB_TOKEN = "bob-token-0123456789ab"


def tokens() -> dict[str, Principal]:
    return {
        ADMIN_TOKEN: Principal("admin", auth.SCOPES),
        ALICE_TOKEN: Principal("alice", frozenset({auth.READ})),
        BOB_TOKEN: Principal("bob", frozenset({auth.EXECUTE})),
    }


def test_a_known_bearer_token_names_its_principal() -> None:
    """Promise 9: a token carries a principal and its scopes."""
    authenticator = auth.Authenticator(tokens())
    assert authenticator.principal(f"Bearer {ALICE_TOKEN}") == Principal("alice", frozenset({auth.READ}))
    assert authenticator.principal(f"bearer  {BOB_TOKEN} ").name == "bob"
    assert authenticator.principal(f"Bearer {ADMIN_TOKEN}").sees_all


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer   ",
        f"Basic {ALICE_TOKEN}",
        ALICE_TOKEN,
        f"Bearer {ALICE_TOKEN}x",
        f"Bearer {ALICE_TOKEN[:-1]}",
        f"Bearer {ALICE_TOKEN.upper()}",
        "Bearer \udcff\x00",
    ],
)
def test_anything_but_a_known_token_is_unauthorized(header: str | None) -> None:
    """Promise 9: no token, another scheme, or a near miss is 401; the message never echoes it."""
    with pytest.raises(Unauthorized) as caught:
        auth.Authenticator(tokens()).principal(header)
    for token in tokens():
        assert token not in caught.value.message
    assert ALICE_TOKEN[:-1] not in caught.value.message


@pytest.mark.parametrize("given", [ADMIN_TOKEN, BOB_TOKEN, "x", "wrong-token-of-some-length"])
def test_every_token_is_compared_in_constant_time(given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Promise 9: each request compares digests of one length against every token, match or not."""
    calls: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def compare(a: Any, b: Any) -> bool:
        calls.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", compare)
    authenticator = auth.Authenticator(tokens())
    try:
        authenticator.principal(f"Bearer {given}")
    except Unauthorized:
        pass
    assert calls == [(32, 32)] * len(tokens())


def test_scopes_are_required() -> None:
    """Promise 9: a principal without the scope of a route is forbidden."""
    reader = Principal("alice", frozenset({auth.READ}))
    auth.require(reader, auth.READ)
    with pytest.raises(Forbidden, match=auth.EXECUTE):
        auth.require(reader, auth.EXECUTE)
    with pytest.raises(Forbidden):
        auth.require(Principal("nobody", frozenset()), auth.READ)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_admin_token_is_generated_once_with_mode_0600(tmp_path: Path) -> None:
    """Promise 9: the generated token file is readable by its owner only, and kept across starts."""
    path = tmp_path / "token"
    token, created = auth.admin_token(None, path)
    assert created and len(token) >= 32
    assert path.read_text() == token + "\n"
    assert mode(path) == 0o600
    os.chmod(path, 0o644)
    again, created_again = auth.admin_token(None, path)
    assert (again, created_again) == (token, False)
    assert mode(path) == 0o600, "a token file opened up by hand is closed again"
    path.write_text("")
    fresh, created_fresh = auth.admin_token(None, path)
    assert created_fresh and fresh != token and mode(path) == 0o600


def test_a_configured_admin_token_wins_and_must_be_usable(tmp_path: Path) -> None:
    path = tmp_path / "token"
    assert auth.admin_token(ADMIN_TOKEN, path) == (ADMIN_TOKEN, False)
    assert not path.exists(), "a configured token is never written anywhere"
    for bad in ("short", "has a space in it 0123", "tab\tinside-0123456789", "é" * 20):
        with pytest.raises(ConfigError, match="WORKBENCH_TOKEN") as caught:
            auth.admin_token(bad, path)
        assert bad not in caught.value.message


def test_an_unreadable_token_file_stops_the_start(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.mkdir()
    with pytest.raises(ConfigError, match="cannot read the token file"):
        auth.admin_token(None, path)


def write(tmp_path: Path, text: str | bytes, name: str = "tokens.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    os.chmod(path, 0o600)
    return path


GOOD = f"""
[[tokens]]
token = "{ALICE_TOKEN}"
principal = "alice"
scopes = ["tools:execute", "logs:read"]

[[tokens]]
token = "{BOB_TOKEN}"
principal = "bob@example.org"
scopes = ["logs:read"]

[[tokens]]
token = "reader-token-0123456789"
principal = "admin"
scopes = ["logs:read"]
"""


def test_the_tokens_file_adds_principals_with_their_scopes(tmp_path: Path) -> None:
    """Promise 9: WORKBENCH_TOKENS_FILE holds [[tokens]] with token, principal and scopes."""
    loaded = auth.load_tokens(ADMIN_TOKEN, write(tmp_path, GOOD))
    assert loaded == {
        ADMIN_TOKEN: Principal("admin", auth.SCOPES),
        ALICE_TOKEN: Principal("alice", auth.SCOPES),
        BOB_TOKEN: Principal("bob@example.org", frozenset({auth.READ})),
        # A read-only view of everything: the admin principal with fewer scopes.
        "reader-token-0123456789": Principal("admin", frozenset({auth.READ})),
    }
    assert auth.load_tokens(ADMIN_TOKEN, None) == {ADMIN_TOKEN: Principal("admin", auth.SCOPES)}


def entry(token: Any = ALICE_TOKEN, principal: Any = "alice", scopes: Any = '["logs:read"]') -> str:
    return f"[[tokens]]\ntoken = {token}\nprincipal = {principal}\nscopes = {scopes}\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "one or more \\[\\[tokens\\]\\]"),
        ("tokens = []", "one or more"),
        ("other = 1\n" + entry(f'"{ALICE_TOKEN}"', '"alice"'), "nothing else"),
        ("[tokens]\ntoken = 'x'\n", "one or more"),
        (f'[[tokens]]\ntoken = "{ALICE_TOKEN}"\nprincipal = "alice"\n', "exactly the fields"),
        (entry(f'"{ALICE_TOKEN}"', '"alice"') + "extra = 1\n", "exactly the fields"),
        (entry("1234567890123456789", '"alice"'), "field 'token' must be a string"),
        (entry('"short-token"', '"alice"'), "at least 16"),
        (entry('"has spaces in the token 0123"', '"alice"'), "visible ASCII"),
        (entry(f'"{ALICE_TOKEN}"', '""'), "field 'principal'"),
        (entry(f'"{ALICE_TOKEN}"', '"al ice"'), "field 'principal'"),
        (entry(f'"{ALICE_TOKEN}"', '"' + "a" * 65 + '"'), "field 'principal'"),
        (entry(f'"{ALICE_TOKEN}"', '"alice"', '"logs:read"'), "field 'scopes'"),
        (entry(f'"{ALICE_TOKEN}"', '"alice"', "[1]"), "field 'scopes'"),
        (entry(f'"{ALICE_TOKEN}"', '"alice"', '["logs:write"]'), "unknown scope 'logs:write'"),
        (entry(f'"{ALICE_TOKEN}"', '"alice"') + entry(f'"{ALICE_TOKEN}"', '"bob"'), "already used"),
        (entry(f'"{ADMIN_TOKEN}"', '"alice"'), "already used"),
        (entry(f'"{ALICE_TOKEN}', '"alice"'), "not valid TOML"),
        ('[[tokens]]\ntoken = "' + ALICE_TOKEN + '" garbage\n', "not valid TOML"),
    ],
)
def test_a_malformed_tokens_file_stops_the_start(tmp_path: Path, text: str, expected: str) -> None:
    """Promise 9: a malformed tokens file is a ConfigError that says what and where, never a token."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError, match=expected) as caught:
        auth.load_tokens(ADMIN_TOKEN, path)
    message = caught.value.message
    assert str(path) in message and "WORKBENCH_TOKENS_FILE" in message
    for token in (ADMIN_TOKEN, ALICE_TOKEN, "short-token", "has spaces in the token"):
        assert token not in message


def test_a_missing_or_unreadable_tokens_file_stops_the_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        auth.load_tokens(ADMIN_TOKEN, tmp_path / "missing.toml")
    (tmp_path / "a-directory.toml").mkdir()
    with pytest.raises(ConfigError, match="cannot be read"):
        auth.load_tokens(ADMIN_TOKEN, tmp_path / "a-directory.toml")
    with pytest.raises(ConfigError, match="cannot be read"):
        auth.load_tokens(ADMIN_TOKEN, write(tmp_path, b"\xff\xfe[[tokens]]\n", "latin.toml"))


def test_a_tokens_file_others_can_read_is_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path, GOOD)
    os.chmod(path, 0o644)
    with caplog.at_level(logging.WARNING, logger="workbench.core.auth"):
        auth.load_tokens(ADMIN_TOKEN, path)
    assert "mode 0600" in caplog.text
    assert ALICE_TOKEN not in caplog.text and BOB_TOKEN not in caplog.text


def test_the_default_bind_is_loopback_only() -> None:
    """Promise 9: out of the box the daemon listens on loopback; anything else needs allow_remote."""
    assert is_loopback(split_bind(Settings.load(environ={}).bind)[0])
    for bind in ("0.0.0.0:8787", "[::]:8787", "192.0.2.1:8787", "example.org:8787"):
        with pytest.raises(ConfigError, match="--allow-remote"):
            Settings.load(environ={"WORKBENCH_BIND": bind})
        Settings.load(environ={"WORKBENCH_BIND": bind}, allow_remote=True)
    for bind in ("127.0.0.1:0", "localhost:1", "[::1]:2", "127.1.2.3:3"):
        Settings.load(environ={"WORKBENCH_BIND": bind})
