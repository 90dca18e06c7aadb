"""Where the daemon is and how to prove who we are: shared by the CLI and the Python client.

Standard library only, and cheap to import: the CLI's start time depends on it.

Discovery, in order of precedence:

- URL: the explicit argument (`--url`), else `$WORKBENCH_URL`, else `http://127.0.0.1:8787`.
  `unix:///path/to.sock` talks HTTP over a Unix socket.
- Token: the explicit argument (`--token`), else `$WORKBENCH_TOKEN`, else the file `token` in the
  data dir (`$WORKBENCH_DATA_DIR`, else `~/.local/share/workbench`), which `workbench serve`
  writes on first start. No token at all is allowed: the daemon then answers `unauthorized`.
- Trust, for an `https://` URL: the explicit argument (`ca_file=`), else `$WORKBENCH_TLS_CA` (a
  PEM file of the CA that signed the daemon's certificate), else the system's certificate store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

DEFAULT_URL = "http://127.0.0.1:8787"
UNIX_SCHEME = "unix://"

_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*")
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}


class Target:
    """A daemon to talk to: its base URL (or Unix socket) and the bearer token, if any."""

    def __init__(
        self,
        base_url: str,
        socket_path: str | None,
        token: str | None,
        token_source: str | None,
        ca_file: str | None = None,
    ) -> None:
        #: `http(s)://host:port` without a trailing slash; `http://localhost` for a Unix socket.
        self.base_url = base_url
        #: The Unix socket path when the URL was `unix://...`, else None.
        self.socket_path = socket_path
        self.token = token
        #: Where the token came from ("--token", "WORKBENCH_TOKEN", a path), or None.
        self.token_source = token_source
        #: The CA certificate (PEM) an `https://` daemon is verified against; None: the system's.
        self.ca_file = ca_file

    @property
    def tls(self) -> bool:
        return self.base_url.startswith("https://")

    def __repr__(self) -> str:
        return f"Target({self.display_url!r}, token from {self.token_source})"

    @property
    def display_url(self) -> str:
        """The URL as the user wrote it (the socket URL for a Unix socket)."""
        return f"{UNIX_SCHEME}{self.socket_path}" if self.socket_path else self.base_url

    def headers(self) -> dict[str, str]:
        """The `Authorization` header, when there is a token."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


def data_dir(environ: Mapping[str, str] | None = None) -> str:
    """`$WORKBENCH_DATA_DIR`, else `~/.local/share/workbench` (the daemon's default too)."""
    env = os.environ if environ is None else environ
    configured = env.get("WORKBENCH_DATA_DIR")
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(os.path.expanduser("~"), ".local", "share", "workbench")


def resolve(
    url: str | None = None,
    token: str | None = None,
    environ: Mapping[str, str] | None = None,
    ca_file: str | None = None,
) -> Target:
    """The daemon to use, found as described in this module's docstring.

    Raises:
        ValueError: for a URL that is neither `http(s)://...` nor `unix:///...`.
    """
    env = os.environ if environ is None else environ
    raw = url or env.get("WORKBENCH_URL") or DEFAULT_URL
    socket_path: str | None = None
    if raw.startswith(UNIX_SCHEME):
        socket_path = raw[len(UNIX_SCHEME) :]
        if not socket_path.startswith("/"):
            raise ValueError(f"bad daemon URL {raw!r}: a Unix socket URL is unix:///absolute/path.sock")
        base_url = "http://localhost"
    elif raw.startswith(("http://", "https://")):
        base_url = raw.rstrip("/")
    else:
        raise ValueError(f"bad daemon URL {raw!r}: expected http://HOST:PORT or unix:///path.sock")
    source: str | None = None
    if token:
        source = "--token"
    elif env.get("WORKBENCH_TOKEN"):
        token, source = env["WORKBENCH_TOKEN"], "WORKBENCH_TOKEN"
    else:
        path = os.path.join(data_dir(env), "token")
        try:
            with open(path, encoding="utf-8") as f:
                token = f.read().strip() or None
        except OSError:
            token = None
        source = path if token else None
    ca_file = ca_file or env.get("WORKBENCH_TLS_CA") or None
    return Target(base_url, socket_path, token, source, os.path.expanduser(ca_file) if ca_file else None)


#: The longest duration taken (as the daemon's settings and bulk deletes take): 100 years.
MAX_DURATION_MS = 36_500 * 86_400_000
TOO_LONG = "longer than 100 years (36500d), the longest duration"


def parse_duration_ms(text: str) -> int:
    """`500ms`, `30s`, `10m`, `2h`, `1d`, or a bare number of seconds (`1.5`) → milliseconds.

    Raises:
        ValueError: naming what would be accepted (DurationTooLong: past 100 years).
    """
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"bad duration {text!r}: expected e.g. 500ms, 30s, 10m, 2h")
    number, unit = match.groups()
    ms = float(number) * _UNIT_MS[unit or "s"]
    if ms > MAX_DURATION_MS:
        raise DurationTooLong(f"bad duration {text!r}: {TOO_LONG}")
    return round(ms)


class DurationTooLong(ValueError):
    """A duration past `MAX_DURATION_MS`."""


def seconds_to_ms(seconds: float | None) -> int | None:
    """A timeout in seconds (as the Python client takes them) → whole milliseconds, or None."""
    if seconds is None:
        return None
    if seconds < 0:
        raise ValueError(f"a timeout cannot be negative: {seconds}")
    return round(seconds * 1000)
