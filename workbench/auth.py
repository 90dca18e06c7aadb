"""Tokens, principals and scopes.

`WORKBENCH_TOKEN` (or the generated `<data-dir>/token`) is the principal `admin` with every scope.
`WORKBENCH_TOKENS_FILE` names a TOML file of more: `[[tokens]]` with `token`, `principal`, `scopes`.
Tokens are compared in constant time, and never logged.
"""

from __future__ import annotations

import hmac
import os
import secrets
import tomllib
from pathlib import Path

from workbench.errors import ConfigError, Forbidden, Unauthorized
from workbench.service import ADMIN, Principal

EXECUTE = "tools:execute"
READ = "logs:read"
SCOPES = frozenset({EXECUTE, READ})
_PRINCIPAL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@")


class Authenticator:
    """Finds the principal of a bearer token."""

    def __init__(self, tokens: dict[str, Principal]) -> None:
        self._tokens = [(token.encode("utf-8"), principal) for token, principal in tokens.items()]

    def principal(self, authorization: str | None) -> Principal:
        """The principal of an `Authorization: Bearer <token>` header.

        Raises:
            Unauthorized: no header, not a bearer token, or an unknown token.
        """
        if not authorization:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        given = token.strip().encode("utf-8", errors="replace")
        found = None
        # Compare against every token, always, so timing says nothing about which one matched.
        for candidate, principal in self._tokens:
            if hmac.compare_digest(candidate, given):
                found = principal
        if found is None:
            raise Unauthorized("invalid token")
        return found


def require(principal: Principal, scope: str) -> None:
    """Raise Forbidden unless the principal holds `scope`."""
    if scope not in principal.scopes:
        raise Forbidden(f"the token of {principal.name!r} lacks the scope {scope!r} needed here")


def admin_token(token: str | None, token_path: Path) -> tuple[str, bool]:
    """The admin token: the configured one, else the one stored under the data dir, else a new one.

    Returns (token, created). A created token is written with mode 0600.
    """
    if token is not None:
        return token, False
    try:
        stored = token_path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        stored = ""
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {token_path}: {exc}") from None
    if stored:
        os.chmod(token_path, 0o600)
        return stored, False
    new = secrets.token_urlsafe(32)
    fd = os.open(token_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (new + "\n").encode("ascii"))
    finally:
        os.close(fd)
    os.chmod(token_path, 0o600)
    return new, True


def load_tokens(admin: str, tokens_file: Path | None) -> dict[str, Principal]:
    """Every token the daemon accepts, with its principal.

    Raises:
        ConfigError: the tokens file is missing, unreadable or malformed (naming what is wrong).
    """
    tokens = {admin: Principal(ADMIN, SCOPES)}
    if tokens_file is None:
        return tokens
    where = f"tokens file {tokens_file} (WORKBENCH_TOKENS_FILE)"
    try:
        data = tomllib.loads(tokens_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{where} cannot be read: {exc}") from None
    entries = data.get("tokens")
    if set(data) - {"tokens"} or not isinstance(entries, list):
        raise ConfigError(f"{where} must hold only [[tokens]] tables")
    for i, entry in enumerate(entries, 1):
        at = f"{where}: token #{i}"
        if not isinstance(entry, dict) or set(entry) - {"token", "principal", "scopes"}:
            raise ConfigError(f"{at} must have only the fields token, principal, scopes")
        token, name, scopes = entry.get("token"), entry.get("principal"), entry.get("scopes")
        if not isinstance(token, str) or len(token) < 16:
            raise ConfigError(f"{at}: field 'token' must be a string of at least 16 characters")
        if not isinstance(name, str) or not name or not set(name) <= _PRINCIPAL_CHARS or len(name) > 64:
            raise ConfigError(f"{at}: field 'principal' must be 1-64 letters, digits or ._-@")
        if not isinstance(scopes, list) or not all(s in SCOPES for s in scopes):
            raise ConfigError(f"{at}: field 'scopes' must be a list of {sorted(SCOPES)}")
        if token in tokens:
            raise ConfigError(f"{at}: the same token appears twice")
        tokens[token] = Principal(name, frozenset(scopes))
    return tokens
