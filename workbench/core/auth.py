"""Tokens, principals and scopes.

`WORKBENCH_TOKEN` (or the generated `<data-dir>/token`) is the principal `admin` with every scope.
`WORKBENCH_TOKENS_FILE` names a TOML file of more: `[[tokens]]` with `token`, `principal`, `scopes`.
A file entry may name the principal `admin` too (e.g. a read-only token that sees everything).
Tokens are compared in constant time, and never logged or put in an error message.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import tomllib
from pathlib import Path

from workbench.core.principals import ADMIN, Principal
from workbench.wire.errors import ConfigError, Forbidden, Unauthorized

log = logging.getLogger("workbench.core.auth")

EXECUTE = "tools:execute"
READ = "logs:read"
SCOPES = frozenset({EXECUTE, READ})
#: Shortest token accepted from the tokens file or `WORKBENCH_TOKEN`.
MIN_TOKEN_LENGTH = 16
_PRINCIPAL = re.compile(r"[A-Za-z0-9._@-]{1,64}")
#: A token travels in an HTTP header: visible ASCII only, so it reads the same on both sides.
_TOKEN = re.compile(r"[\x21-\x7e]+")


def _digest(token: bytes) -> bytes:
    return hashlib.sha256(token).digest()


class Authenticator:
    """Finds the principal of a bearer token."""

    def __init__(self, tokens: dict[str, Principal]) -> None:
        # Digests have one length, so comparing them says nothing about a token's length either.
        self._tokens = [(_digest(token.encode("utf-8")), principal) for token, principal in tokens.items()]

    @property
    def principals(self) -> list[Principal]:
        """Every principal a token stands for (with its quotas)."""
        return list({p.name: p for _, p in self._tokens}.values())

    def principal(self, authorization: str | None) -> Principal:
        """The principal of an `Authorization: Bearer <token>` header.

        Every known token is compared, in constant time, whatever the header holds, so the time
        an answer takes says nothing about which token (or how much of one) matched.

        Raises:
            Unauthorized: no header, not a bearer token, or an unknown token.
        """
        if not authorization:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        return self.find(token.strip())[1]

    def find(self, token: str) -> tuple[bytes, Principal]:
        """(digest, principal) of a token, compared in constant time; Unauthorized if unknown."""
        given = _digest(token.encode("utf-8", errors="surrogateescape"))
        found = None
        for candidate, principal in self._tokens:
            if hmac.compare_digest(candidate, given):
                found = (candidate, principal)
        if found is None:
            raise Unauthorized("invalid token")
        return found

    def digests(self) -> list[tuple[bytes, Principal]]:
        """The digest of every accepted token, with its principal."""
        return list(self._tokens)


def require(principal: Principal, scope: str) -> None:
    """Raise Forbidden unless the principal holds `scope`."""
    if scope not in principal.scopes:
        raise Forbidden(f"the token of {principal.name!r} lacks the scope {scope!r} needed here")


def check_token(token: str, where: str) -> None:
    """Raise ConfigError (naming `where`, never the token) unless `token` is usable as a bearer token."""
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(f"{where} must be at least {MIN_TOKEN_LENGTH} characters")
    if not _TOKEN.fullmatch(token):
        raise ConfigError(f"{where} must be visible ASCII characters only (no spaces or control characters)")


def admin_token(token: str | None, token_path: Path) -> tuple[str, bool]:
    """The admin token: the configured one, else the one stored under the data dir, else a new one.

    Returns (token, created). The token file is created with mode 0600 (and kept so).

    Raises:
        ConfigError: the configured or stored token is not usable, or the file cannot be read.
    """
    if token is not None:
        check_token(token, "WORKBENCH_TOKEN")
        return token, False
    try:
        stored = token_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        stored = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the token file {token_path}: {exc}") from None
    if stored:
        check_token(stored, f"the token in {token_path}")
        os.chmod(token_path, 0o600)
        return stored, False
    new = secrets.token_urlsafe(32)
    # O_EXCL after unlinking a leftover empty file: never write into a file someone else prepared.
    token_path.unlink(missing_ok=True)
    fd = os.open(token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (new + "\n").encode("ascii"))
    finally:
        os.close(fd)
    return new, True


def load_tokens(admin: str, tokens_file: Path | None, *, warn: bool = True) -> dict[str, Principal]:
    """Every token the daemon accepts, with its principal. With `warn`, a tokens file that other
    users can read is logged as a warning (a start reads the file twice and warns once).

    Raises:
        ConfigError: the tokens file is missing, unreadable or malformed; the message says what
            is wrong and where, and never quotes a token.
    """
    tokens = {admin: Principal(ADMIN, SCOPES)}
    if tokens_file is None:
        return tokens
    where = f"tokens file {tokens_file} (WORKBENCH_TOKENS_FILE)"
    try:
        text = tokens_file.read_text(encoding="utf-8")
        mode = tokens_file.stat().st_mode
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} cannot be read: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # The decoder's message gives a line and column, never the text around it.
        raise ConfigError(f"{where} is not valid TOML: {exc}") from None
    if warn and mode & 0o077:
        log.warning("%s can be read by other users; make it mode 0600", where)
    entries = data.get("tokens")
    if set(data) - {"tokens"} or not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where} must hold one or more [[tokens]] tables and nothing else")
    for i, entry in enumerate(entries, 1):
        at = f"{where}: token #{i}"
        if not isinstance(entry, dict) or not _FIELDS <= set(entry) <= _FIELDS | set(_QUOTAS):
            raise ConfigError(
                f"{at} must have exactly the fields token, principal, scopes (and may have "
                "maxConcurrent, maxQueued, maxContexts)"
            )
        token, name, scopes = entry["token"], entry["principal"], entry["scopes"]
        if not isinstance(token, str):
            raise ConfigError(f"{at}: field 'token' must be a string")
        check_token(token, f"{at}: field 'token'")
        if not isinstance(name, str) or not _PRINCIPAL.fullmatch(name) or name in {".", ".."}:
            raise ConfigError(f"{at}: field 'principal' must be 1-64 letters, digits or ._-@")
        if not isinstance(scopes, list) or not all(isinstance(s, str) for s in scopes):
            raise ConfigError(f"{at}: field 'scopes' must be a list of {sorted(SCOPES)}")
        unknown = sorted(set(scopes) - SCOPES)
        if unknown:
            raise ConfigError(f"{at}: unknown scope {unknown[0]!r}; scopes are {sorted(SCOPES)}")
        if token in tokens:
            raise ConfigError(f"{at}: this token is already used (by WORKBENCH_TOKEN or an earlier entry)")
        quotas = [
            _quota(entry.get(field), f"{at}: field {field!r}", least) for field, least in _QUOTAS.items()
        ]
        for other in tokens.values():
            if other.name == name and [other.max_concurrent, other.max_queued, other.max_contexts] != quotas:
                raise ConfigError(
                    f"{at}: the principal {name!r} has other quotas in another entry; a principal's "
                    "quotas are one (give every token of it the same maxConcurrent, maxQueued and "
                    "maxContexts)"
                )
        tokens[token] = Principal(name, frozenset(scopes), *quotas)
    return tokens


_FIELDS = frozenset({"token", "principal", "scopes"})
#: A principal's quotas, each with its least value: how many of its executions run at once, how
#: many may wait, and how many of its code contexts may live at once.
_QUOTAS = {"maxConcurrent": 1, "maxQueued": 0, "maxContexts": 1}


def _quota(value: object, where: str, least: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{where} must be an integer of at least {least}")
    return value
