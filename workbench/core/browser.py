"""Credentials a browser can use: session cookies (with their CSRF value), stream tokens, login codes.

A browser's `EventSource` cannot send `Authorization`, and a page should not keep a bearer token
where its scripts can read it. `POST /v1/login` trades a token for a session: an `HttpOnly`
cookie the page never sees, plus a CSRF value every change it sends must carry. A stream token
opens one execution's stream for ten minutes. All three are signed with a key kept in the data
dir (`session.key`, mode 0600), so they outlive a daemon restart, and each is bound to the token
it was made from: a token removed from the tokens file takes its sessions with it. A session
ended by logout is remembered (`sessions.revoked`) until it would have expired anyway.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from workbench.core.auth import Authenticator
from workbench.core.service import Principal
from workbench.wire.errors import Forbidden, Unauthorized

#: The session cookie's name begins so; the rest is the daemon's own (`BrowserAuth.cookie_name`).
SESSION_COOKIE = "workbench_session"
CSRF_HEADER = "X-Workbench-CSRF"
STREAM_TOKEN_MS = 10 * 60 * 1000
LOGIN_CODE_MS = 5 * 60 * 1000
_KEY_BYTES = 32
_BINDING_BYTES = 16


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _now_ms() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class Session:
    """A logged-in browser: its principal, its CSRF value, when it ends (ms since the epoch)."""

    session_id: str
    principal: Principal
    csrf: str
    expires_at: int


def load_key(path: Path) -> bytes:
    """The signing key stored at `path`, made (mode 0600) on first use."""
    try:
        key = path.read_bytes()
        if len(key) == _KEY_BYTES:
            os.chmod(path, 0o600)
            return key
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(_KEY_BYTES)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, key)
    finally:
        os.close(fd)
    return key


class BrowserAuth:
    """Makes and checks sessions, CSRF values, stream tokens and one-time login codes."""

    def __init__(self, key: bytes, authenticator: Authenticator, revoked_path: Path, ttl_ms: int) -> None:
        self._key = key
        self._authenticator = authenticator
        self._ttl_ms = ttl_ms
        self._revoked_path = revoked_path
        self._revoked = self._load_revoked()
        #: Login code → (binding, expiry): kept in memory only; a restart ends them.
        self._codes: dict[str, tuple[str, int]] = {}
        self._bindings = {self._binding(digest): principal for digest, principal in authenticator.digests()}
        #: A browser keeps cookies by host, whatever the port: two daemons on one host must not
        #: replace each other's. The name is this daemon's own, and lasts as its key does.
        digest = hmac.new(self._key, b"cookie-name", hashlib.sha256).hexdigest()
        self.cookie_name = f"{SESSION_COOKIE}_{digest[:12]}"

    def _sign(self, purpose: bytes, payload: str) -> str:
        return _b64(hmac.new(self._key, purpose + payload.encode("ascii"), hashlib.sha256).digest())

    def _binding(self, digest: bytes) -> str:
        return _b64(hmac.new(self._key, b"token:" + digest, hashlib.sha256).digest()[:_BINDING_BYTES])

    # -- sessions -------------------------------------------------------------------------------

    def login(self, token: str) -> tuple[Session, str]:
        """A new session for a bearer token (Unauthorized if unknown): (session, cookie value)."""
        digest, _principal = self._authenticator.find(token)
        return self._new_session(self._binding(digest))

    def login_with_code(self, code: str) -> tuple[Session, str]:
        """A new session for a one-time login code, which is then spent (Unauthorized if not valid)."""
        found = self._codes.pop(code, None)
        now = _now_ms()
        self._codes = {c: v for c, v in self._codes.items() if v[1] > now}
        if found is None or found[1] <= now:
            raise Unauthorized(
                "this login code is unknown, used or expired: ask `workbench ui` for a new one"
            )
        return self._new_session(found[0])

    def _new_session(self, binding: str) -> tuple[Session, str]:
        if binding not in self._bindings:
            raise Unauthorized("invalid token")
        session_id = secrets.token_urlsafe(16)
        expires = _now_ms() + self._ttl_ms
        payload = f"{session_id}.{expires}.{binding}"
        cookie = f"{payload}.{self._sign(b'session:', payload)}"
        return self._session(session_id, binding, expires), cookie

    def _session(self, session_id: str, binding: str, expires: int) -> Session:
        csrf = self._sign(b"csrf:", session_id)
        return Session(session_id, self._bindings[binding], csrf, expires)

    def session(self, cookie: str) -> Session:
        """The session of a cookie value; Unauthorized when forged, expired, ended or orphaned."""
        parts = cookie.split(".")
        if len(parts) != 4 or not parts[1].isdigit():
            raise Unauthorized("the session cookie is not one this daemon made: log in again")
        session_id, expires, binding, signature = parts
        payload = f"{session_id}.{expires}.{binding}"
        if not hmac.compare_digest(signature.encode(), self._sign(b"session:", payload).encode()):
            raise Unauthorized("the session cookie is not one this daemon made: log in again")
        if int(expires) <= _now_ms() or session_id in self._revoked:
            raise Unauthorized("the session has ended: log in again")
        if binding not in self._bindings:
            raise Unauthorized("the token of this session is no longer accepted: log in again")
        return self._session(session_id, binding, int(expires))

    def alive(self, session: Session) -> bool:
        """Whether `session` still holds: not ended by a logout, not expired (a stream it opened
        ends once it does not)."""
        return session.session_id not in self._revoked and session.expires_at > _now_ms()

    @staticmethod
    def check_csrf(session: Session, header: str | None) -> None:
        """Forbidden unless `header` is the session's CSRF value."""
        if header is None:
            raise Forbidden(f"a change made with a session cookie needs the {CSRF_HEADER} header")
        if not hmac.compare_digest(header.encode("utf-8", "surrogateescape"), session.csrf.encode()):
            raise Forbidden(f"the {CSRF_HEADER} header is not this session's")

    def logout(self, session: Session) -> None:
        """End a session for good (remembered across restarts until it would have expired)."""
        self._revoked[session.session_id] = session.expires_at
        now = _now_ms()
        self._revoked = {s: e for s, e in self._revoked.items() if e > now}
        lines = "".join(f"{s} {e}\n" for s, e in self._revoked.items())
        tmp = self._revoked_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, lines.encode("ascii"))
        finally:
            os.close(fd)
        os.replace(tmp, self._revoked_path)

    def _load_revoked(self) -> dict[str, int]:
        try:
            text = self._revoked_path.read_text(encoding="ascii")
        except (FileNotFoundError, UnicodeDecodeError):
            return {}
        now, out = _now_ms(), {}
        for line in text.splitlines():
            session_id, _, expires = line.partition(" ")
            if expires.isdigit() and int(expires) > now:
                out[session_id] = int(expires)
        return out

    # -- login codes and stream tokens ---------------------------------------------------------

    def login_code(self, token: str) -> tuple[str, int]:
        """A one-time code that logs a browser in as `token`'s principal: (code, expiry ms)."""
        digest, _principal = self._authenticator.find(token)
        code = secrets.token_urlsafe(24)
        expires = _now_ms() + LOGIN_CODE_MS
        self._codes[code] = (self._binding(digest), expires)
        return code, expires

    def stream_token(self, principal: Principal, execution_id: str) -> tuple[str, int]:
        """A token that opens `execution_id`'s stream as `principal`: (token, expiry ms)."""
        binding = next((b for b, p in self._bindings.items() if p == principal), None)
        if binding is None:
            raise Unauthorized("invalid token")
        expires = _now_ms() + STREAM_TOKEN_MS
        payload = f"{execution_id}.{expires}.{binding}"
        return f"{payload}.{self._sign(b'stream:', payload)}", expires

    def stream_principal(self, token: str, execution_id: str) -> Principal:
        """The principal of a stream token used on `execution_id`'s stream.

        Raises:
            Unauthorized: forged, expired, or its token is no longer accepted.
            Forbidden: a stream token of another execution.
        """
        parts = token.split(".")
        if len(parts) != 4 or not parts[1].isdigit():
            raise Unauthorized("the stream token is not one this daemon made")
        for_id, expires, binding, signature = parts
        payload = f"{for_id}.{expires}.{binding}"
        if not hmac.compare_digest(signature.encode(), self._sign(b"stream:", payload).encode()):
            raise Unauthorized("the stream token is not one this daemon made")
        if int(expires) <= _now_ms():
            raise Unauthorized("the stream token has expired: ask for a new one")
        if binding not in self._bindings:
            raise Unauthorized("the token behind this stream token is no longer accepted")
        if for_id != execution_id:
            raise Forbidden("this stream token is for another execution's stream")
        return self._bindings[binding]
