"""Daemon settings: one frozen object, read from `WORKBENCH_*` variables and command-line flags.

Every size and time is written with the unit constants below. An unknown `WORKBENCH_*` variable
or a bad value is an error that names the variable, so a typo never silently runs with defaults.
"""

from __future__ import annotations

import dataclasses
import enum
import ipaddress
import os
import re
import socket
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.layout import Layout
from workbench.wire.errors import ConfigError

BYTES = 1
KiB = 1024 * BYTES
MiB = 1024 * KiB
GiB = 1024 * MiB
MS = 1
SECONDS = 1000 * MS
MINUTES = 60 * SECONDS
HOURS = 60 * MINUTES
#: The longest time a setting (and a bulk delete's `before`) takes: past it, a moment counted
#: from now no longer fits in a date or in the store's integers.
MAX_DURATION_MS = 36_500 * 24 * HOURS
#: The largest size a setting takes (larger than any disk; within the store's integers).
MAX_SIZE_BYTES = 1024 * 1024 * GiB


class ContainmentSetting(enum.StrEnum):
    """How execution trees are held: the strongest the machine allows, or one forced."""

    AUTO = "auto"
    CGROUP = "cgroup"
    PIDNS = "pidns"
    PGROUP = "pgroup"


class ShutdownMode(enum.StrEnum):
    """What a graceful stop does to running executions."""

    #: Kill every running tree and end it `cancelled` ("daemon shutdown").
    KILL = "kill"
    #: Leave them running; the next start adopts them.
    KEEP = "keep"


def default_node_id() -> str:
    """The host name, cut to a node id's characters."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", socket.gethostname())[:63].strip("-.")
    return name or "node"


def default_data_dir() -> Path:
    """`~/.local/share/workbench`, the data dir when neither flag nor variable names one."""
    return Path.home() / ".local" / "share" / "workbench"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything the daemon is configured with. Build it with `Settings.load`."""

    data_dir: Path = dataclasses.field(default_factory=default_data_dir)
    bind: str = "127.0.0.1:8787"
    unix_socket: Path | None = None
    allow_remote: bool = False
    token: str | None = None
    tokens_file: Path | None = None
    execution_event_output_budget_bytes: int = 5 * MiB
    execution_event_delta_max_bytes: int = 64 * KiB
    max_concurrent_executions: int = 16
    #: Pre-started interpreters kept per kind of start (image, language, start-up env); 0: none.
    warm_pool: int = 2
    max_queued_executions: int = 1000
    #: Code contexts (each an interpreter's tree) live at once, of every principal.
    max_contexts: int = 64
    default_timeout_ms: int = 1 * HOURS
    max_timeout_ms: int = 24 * HOURS
    max_wait_timeout_ms: int = 600 * SECONDS
    default_wait_timeout_ms: int = 30 * SECONDS
    max_body_bytes: int = 1 * MiB
    max_metadata_bytes: int = 16 * KiB
    exit_webhook_url: str | None = None
    #: Where the image files are; None: the `images/` folder of this source tree.
    images_dir: Path | None = None
    #: Where sessions' workspaces are; None: `<data-dir>/workspaces`. A filesystem of their own
    #: keeps what executions write there from filling the store's disk.
    workspaces_dir: Path | None = None
    containment: ContainmentSetting = ContainmentSetting.AUTO
    #: (uid, gid) the `sandbox` image's trees run as, and workspaces are owned by, when the
    #: daemon runs as root; (0, 0): as root, like the daemon. Without root: the daemon's own.
    sandbox_user: tuple[int, int] = (65534, 65534)
    shutdown_mode: ShutdownMode = ShutdownMode.KILL
    #: How long output may sit in the capture before it is journaled (coalescing small writes).
    output_flush_ms: int = 3 * MS
    #: Grace between SIGTERM and SIGKILL when a deadline passes.
    deadline_grace_ms: int = 2 * SECONDS
    #: HTTP connections held open at once; one more is answered 503 and closed. Lowered at start
    #: to what the file descriptor limit leaves room for.
    max_connections: int = 4096
    #: Below this much free space on the data dir's disk, new work is refused (507) so that what
    #: runs can still be recorded; 0: only a commit that fails says the disk is full.
    min_free_bytes: int = 16 * MiB
    #: The largest file the file routes write (a PUT body, an archive, a file unpacked from one).
    max_file_bytes: int = 100 * MiB
    #: The most bytes of files one session's workspace may hold for a write through the API.
    workspace_quota_bytes: int = 10 * GiB
    #: How long a browser's session (`POST /v1/login`) lasts.
    session_ttl_ms: int = 12 * HOURS
    #: Origins (`scheme://host[:port]`, exactly) whose pages may call the API; none by default.
    cors_origins: tuple[str, ...] = ()
    #: The shared PostgreSQL store (`postgresql://...`); None: the embedded SQLite in the data dir.
    store_url: str | None = None
    #: This daemon's name among the nodes of a shared store (default: the host name).
    node_id: str = dataclasses.field(default_factory=lambda: default_node_id())
    #: How other nodes reach this one (for artifacts); None: they cannot.
    node_url: str | None = None
    #: A node whose heartbeat is older than this is lost: its running executions end `node_lost`.
    node_lease_ms: int = 15 * SECONDS
    #: Terminal executions older than this (by when they ended) are removed with their events,
    #: files and acked exits; None: keep everything.
    retention_ms: int | None = None
    #: `GET /metrics` without a token, for a scraper on loopback (only when bound to loopback).
    metrics_open: bool = False
    #: The certificate chain and private key (PEM) to serve HTTPS with; both or neither.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: The CA certificate (PEM) that other nodes' `https://` URLs are verified against; None: the
    #: system's store.
    tls_ca: Path | None = None
    #: The secret the nodes of a shared store prove themselves to each other with (fetching an
    #: artifact from the node that owns it); None: this node neither fetches nor serves them.
    node_token: str | None = None

    def __post_init__(self) -> None:
        # Flags and tests may pass plain strings; hold the real types. Every path is absolute,
        # taken from the working directory at start: the daemon's own files and the executions'
        # directories are named by absolute paths alone.
        object.__setattr__(self, "containment", ContainmentSetting(self.containment))
        object.__setattr__(self, "shutdown_mode", ShutdownMode(self.shutdown_mode))
        for name in _PATHS:
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(os.path.abspath(Path(value).expanduser())))

    @property
    def tls(self) -> bool:
        """Whether the daemon serves HTTPS."""
        return self.tls_cert is not None

    @property
    def store_path(self) -> Path:
        return self.data_dir / "workbench.db"

    @property
    def layout(self) -> Layout:
        """Where everything under the data dir is."""
        return Layout(self.data_dir, self.workspaces_dir, self.workspace_owner)

    @property
    def workspace_owner(self) -> tuple[int, int] | None:
        """Who sandboxed trees run as and workspaces belong to; None: the daemon's own user."""
        if os.geteuid() != 0 or self.sandbox_user[0] == 0:
            return None
        return self.sandbox_user

    @property
    def token_path(self) -> Path:
        return self.data_dir / "token"

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read the `WORKBENCH_*` variables of `environ` (default: the process's), then apply flags.

        Raises:
            ConfigError: naming the variable, for an unknown variable or a value that does not parse.
        """
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, raw in env.items():
            if not name.startswith("WORKBENCH_") or name in _CLIENT_ONLY:
                continue
            parser = _ENV.get(name)
            if parser is None:
                known = ", ".join(sorted(_ENV))
                raise ConfigError(f"unknown setting {name}; known settings: {known}")
            field, parse = parser
            try:
                values[field] = parse(raw)
            except ValueError as exc:
                raise ConfigError(f"bad value for {name}: {exc}") from None
        values.update({k: v for k, v in overrides.items() if v is not None})
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Check the values against each other; raises ConfigError naming the setting."""
        if self.execution_event_delta_max_bytes < 4:
            raise ConfigError("WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES must be at least 4")
        if self.max_concurrent_executions < 1:
            raise ConfigError("WORKBENCH_MAX_CONCURRENT_EXECUTIONS must be at least 1")
        if self.max_contexts < 1:
            raise ConfigError("WORKBENCH_MAX_CONTEXTS must be at least 1")
        if not 0 < self.default_timeout_ms <= self.max_timeout_ms:
            raise ConfigError(f"WORKBENCH_DEFAULT_TIMEOUT_MS must be between 1 and {self.max_timeout_ms}")
        if self.token is not None and len(self.token) < 16:
            raise ConfigError("WORKBENCH_TOKEN must be at least 16 characters")
        if not NODE_ID.fullmatch(self.node_id):
            raise ConfigError("WORKBENCH_NODE_ID must be 1 to 63 letters, digits, '.', '_' or '-'")
        if self.node_lease_ms < 300:
            raise ConfigError("WORKBENCH_NODE_LEASE_MS must be at least 300")
        if self.node_token is not None and len(self.node_token) < 16:
            raise ConfigError("WORKBENCH_NODE_TOKEN must be at least 16 characters")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ConfigError("WORKBENCH_TLS_CERT and WORKBENCH_TLS_KEY go together: give both or neither")
        for name, path in (("CERT", self.tls_cert), ("KEY", self.tls_key), ("CA", self.tls_ca)):
            if path is not None and not path.is_file():
                raise ConfigError(f"WORKBENCH_TLS_{name}: {path} is not a file")
        host, _port = split_bind(self.bind)
        if not self.allow_remote and not self.tls and not is_loopback(host):
            raise ConfigError(
                f"refusing to bind {self.bind}: not a loopback address, and no TLS "
                "(WORKBENCH_TLS_CERT/WORKBENCH_TLS_KEY); serve HTTPS, or pass --allow-remote "
                "(WORKBENCH_ALLOW_REMOTE=1) to expose plain HTTP (whoever reaches it with a token "
                "can run commands as this user)"
            )


_PATHS = (
    "data_dir",
    "unix_socket",
    "tokens_file",
    "images_dir",
    "workspaces_dir",
    "tls_cert",
    "tls_key",
    "tls_ca",
)

#: What a node id may be (a start's `node` too).
NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


def split_bind(bind: str) -> tuple[str, int]:
    """`host:port` (IPv6 in brackets) → (host, port); raises ConfigError on anything else."""
    host, sep, port = bind.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ConfigError(f"bad bind address {bind!r}: expected HOST:PORT, e.g. 127.0.0.1:8787")
    return host.strip("[]"), int(port)


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _positive_int(raw: str) -> int:
    value = int(raw.strip())
    if value <= 0:
        raise ValueError(f"{raw!r} is not a positive integer")
    return value


def _non_negative_int(raw: str) -> int:
    value = int(raw.strip())
    if value < 0:
        raise ValueError(f"{raw!r} is negative")
    return value


def _at_most(parse: Any, maximum: int, what: str) -> Any:
    """`parse`, and a value past `maximum` (`what` says it in words) refused."""

    def bounded(raw: str) -> int:
        text = raw.strip()
        if len(text) > 30:  # more digits than any bound has: not worth converting
            raise ValueError(f"{text[:30]}... is {_more(maximum, what)}")
        value: int = parse(raw)
        if value > maximum:
            raise ValueError(f"{text} is {_more(maximum, what)}")
        return value

    return bounded


def _more(maximum: int, what: str) -> str:
    return f"more than {maximum} ({what}), the most it may be"


def _user(raw: str) -> tuple[int, int]:
    uid, sep, gid = raw.strip().partition(":")
    if not uid.isdigit() or not (gid.isdigit() or not sep) or len(uid) > 9 or len(gid) > 9:
        raise ValueError(f"{raw!r}; expected UID or UID:GID, e.g. 65534 (0: as root)")
    return int(uid), int(gid or uid)


def _path(raw: str) -> Path:
    if not raw:
        raise ValueError("empty path")
    return Path(raw).expanduser()


_DURATION = re.compile(r"([0-9]+)(ms|s|m|h|d)")
_DURATION_UNITS = {"ms": MS, "s": SECONDS, "m": MINUTES, "h": HOURS, "d": 24 * HOURS}


class DurationTooLong(ValueError):
    """A duration past `MAX_DURATION_MS`."""


def parse_duration(raw: str, *, zero: bool = False) -> int:
    """`7d`, `12h`, `30m`, `45s` or `500ms` → milliseconds (positive, or 0 too when `zero`; at
    most 100 years, else DurationTooLong); ValueError otherwise."""
    found = _DURATION.fullmatch(raw.strip())
    if found is None or (int(found[1]) == 0 and not zero):
        raise ValueError(f"{raw!r} is not a duration such as 7d, 12h, 30m, 45s or 500ms")
    if len(found[1]) > 20 or int(found[1]) * _DURATION_UNITS[found[2]] > MAX_DURATION_MS:
        shown = raw.strip() if len(raw.strip()) <= 30 else raw.strip()[:30] + "..."
        raise DurationTooLong(f"{shown!r} is longer than 100 years (36500d), the longest duration")
    return int(found[1]) * _DURATION_UNITS[found[2]]


def _flag(raw: str) -> bool:
    if raw.strip() not in ("0", "1"):
        raise ValueError(f"{raw!r}; expected 0 or 1")
    return raw.strip() == "1"


def _text(raw: str) -> str:
    if not raw:
        raise ValueError("empty value")
    return raw


def _bind(raw: str) -> str:
    # Checked here, not only once flags are applied: a bad variable is an error even under --bind.
    try:
        split_bind(raw)
    except ConfigError as exc:
        raise ValueError(exc.message.removeprefix("bad bind address ")) from None
    return raw


def _url(raw: str) -> str:
    """An `http(s)://` URL with a host, and a port in range when it names one."""
    if not raw.startswith(("http://", "https://")) or any(c.isspace() for c in raw):
        raise ValueError(f"{raw!r} is not an http(s) URL")
    parts = urllib.parse.urlsplit(raw)
    if not parts.hostname:
        raise ValueError(f"{raw!r} has no host")
    try:
        port = parts.port  # ValueError for a port that is no number or past 65535
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(f"{raw!r} has a port out of range (1 to 65535)")
    return raw


_ORIGIN = re.compile(r"https?://([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?")


def _origins(raw: str) -> tuple[str, ...]:
    origins = tuple(o.strip() for o in raw.split(",") if o.strip())
    for origin in origins:
        if not _ORIGIN.fullmatch(origin):
            raise ValueError(f"{origin!r} is not an origin (scheme://host[:port], no path, no wildcard)")
    return origins


def _store_url(raw: str) -> str:
    if not raw.startswith(("postgresql://", "postgres://")):
        raise ValueError("expected a postgresql:// URL (without it the store is SQLite in the data dir)")
    return raw


def _choice(kind: type[enum.StrEnum]) -> Any:
    def parse(raw: str) -> enum.StrEnum:
        try:
            return kind(raw.strip())
        except ValueError:
            raise ValueError(f"{raw!r}; expected one of {', '.join(m.value for m in kind)}") from None

    return parse


#: A time in milliseconds, and a size in bytes, within their bounds.
_POSITIVE_MS = _at_most(_positive_int, MAX_DURATION_MS, "100 years")
_POSITIVE_BYTES = _at_most(_positive_int, MAX_SIZE_BYTES, "1 PiB")
_BYTES = _at_most(_non_negative_int, MAX_SIZE_BYTES, "1 PiB")

_ENV: dict[str, tuple[str, Any]] = {
    "WORKBENCH_DATA_DIR": ("data_dir", _path),
    "WORKBENCH_BIND": ("bind", _bind),
    "WORKBENCH_TOKEN": ("token", _text),
    "WORKBENCH_TOKENS_FILE": ("tokens_file", _path),
    "WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES": (
        "execution_event_output_budget_bytes",
        _BYTES,
    ),
    "WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES": ("execution_event_delta_max_bytes", _POSITIVE_BYTES),
    "WORKBENCH_MAX_CONCURRENT_EXECUTIONS": ("max_concurrent_executions", _positive_int),
    "WORKBENCH_MAX_QUEUED_EXECUTIONS": ("max_queued_executions", _non_negative_int),
    "WORKBENCH_MAX_CONTEXTS": ("max_contexts", _positive_int),
    "WORKBENCH_WARM_POOL": ("warm_pool", _non_negative_int),
    "WORKBENCH_DEFAULT_TIMEOUT_MS": ("default_timeout_ms", _POSITIVE_MS),
    "WORKBENCH_EXIT_WEBHOOK_URL": ("exit_webhook_url", _url),
    "WORKBENCH_IMAGES_DIR": ("images_dir", _path),
    "WORKBENCH_WORKSPACES_DIR": ("workspaces_dir", _path),
    "WORKBENCH_CONTAINMENT": ("containment", _choice(ContainmentSetting)),
    "WORKBENCH_SANDBOX_UID": ("sandbox_user", _user),
    "WORKBENCH_SHUTDOWN_MODE": ("shutdown_mode", _choice(ShutdownMode)),
    "WORKBENCH_MAX_CONNECTIONS": ("max_connections", _positive_int),
    "WORKBENCH_MIN_FREE_BYTES": ("min_free_bytes", _BYTES),
    "WORKBENCH_MAX_FILE_BYTES": ("max_file_bytes", _POSITIVE_BYTES),
    "WORKBENCH_WORKSPACE_QUOTA_BYTES": ("workspace_quota_bytes", _POSITIVE_BYTES),
    "WORKBENCH_SESSION_TTL_MS": ("session_ttl_ms", _POSITIVE_MS),
    "WORKBENCH_CORS_ORIGINS": ("cors_origins", _origins),
    "WORKBENCH_STORE_URL": ("store_url", _store_url),
    "WORKBENCH_NODE_ID": ("node_id", _text),
    "WORKBENCH_NODE_URL": ("node_url", _url),
    "WORKBENCH_NODE_LEASE_MS": ("node_lease_ms", _POSITIVE_MS),
    "WORKBENCH_RETENTION": ("retention_ms", parse_duration),
    "WORKBENCH_METRICS_OPEN": ("metrics_open", _flag),
    "WORKBENCH_ALLOW_REMOTE": ("allow_remote", _flag),
    "WORKBENCH_TLS_CERT": ("tls_cert", _path),
    "WORKBENCH_TLS_KEY": ("tls_key", _path),
    "WORKBENCH_TLS_CA": ("tls_ca", _path),
    "WORKBENCH_NODE_TOKEN": ("node_token", _text),
}

#: Variables that are not daemon settings: read by the CLI and the client, or set by the daemon inside
#: executions (so a daemon started from within an execution still starts). The daemon leaves them alone.
_CLIENT_ONLY = frozenset({"WORKBENCH_URL", "WORKBENCH_EXECUTION_ID", "WORKBENCH_PROGRESS"})
