"""What `run` and `code` take from where they are called: the working directory (when the daemon
is on this machine), the caller's environment (when asked), piped stdin; and which `WORKBENCH_*`
variables mean something.
"""

from __future__ import annotations

import os
import sys

from workbench.client.config import Target

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The variables the CLI and the Python client read.
CLIENT_VARIABLES = {
    "WORKBENCH_URL": "where the daemon is: http://HOST:PORT or unix:///path.sock",
    "WORKBENCH_TOKEN": "the bearer token",
    "WORKBENCH_DATA_DIR": "the data dir, whose file `token` the CLI reads",
    "WORKBENCH_TLS_CA": "a PEM CA certificate an https:// daemon is verified against (the system's)",
}
#: The daemon's settings (`workbench serve --help`); tests/cli checks them against the daemon's.
DAEMON_VARIABLES = {
    "WORKBENCH_DATA_DIR": "the store, executions' files, workspaces, token (~/.local/share/workbench)",
    "WORKBENCH_BIND": "HOST:PORT to listen on (127.0.0.1:8787); beyond loopback: TLS or --allow-remote",
    "WORKBENCH_ALLOW_REMOTE": "1: as --allow-remote, plain HTTP on a non-loopback bind (0)",
    "WORKBENCH_TLS_CERT": "a PEM certificate chain: serve HTTPS (with WORKBENCH_TLS_KEY)",
    "WORKBENCH_TLS_KEY": "the PEM private key of WORKBENCH_TLS_CERT",
    "WORKBENCH_TLS_CA": "a PEM CA certificate other nodes' https:// URLs are verified against",
    "WORKBENCH_TOKEN": "the admin token (default: generated into <data dir>/token)",
    "WORKBENCH_TOKENS_FILE": "a TOML file of more tokens, with principals and scopes",
    "WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES": "output journaled as events per execution (5242880)",
    "WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES": "the largest output event (65536)",
    "WORKBENCH_MAX_CONCURRENT_EXECUTIONS": "executions running at once (16)",
    "WORKBENCH_MAX_QUEUED_EXECUTIONS": "executions waiting for a slot, then 429 (1000)",
    "WORKBENCH_MAX_CONTEXTS": "code contexts alive at once (on this node), then 429 (64)",
    "WORKBENCH_WARM_POOL": "pre-started python interpreters kept per kind of start; 0: none (2)",
    "WORKBENCH_DEFAULT_TIMEOUT_MS": "the deadline of a start that gives none (3600000)",
    "WORKBENCH_EXIT_WEBHOOK_URL": "an http(s) URL to POST every exit to",
    "WORKBENCH_IMAGES_DIR": "where the image files are (the images/ folder of the source)",
    "WORKBENCH_CONTAINMENT": "auto, cgroup, pidns or pgroup (auto)",
    "WORKBENCH_SANDBOX_UID": "UID[:GID] the sandbox image runs as under a root daemon; 0: root (65534)",
    "WORKBENCH_SHUTDOWN_MODE": "kill or keep running executions at a stop (kill)",
    "WORKBENCH_WORKSPACES_DIR": "where sessions' workspaces are (<data dir>/workspaces)",
    "WORKBENCH_MAX_CONNECTIONS": "HTTP connections open at once; one more is answered 503 (4096)",
    "WORKBENCH_MIN_FREE_BYTES": "free disk below which new work is refused, 507 (16777216)",
    "WORKBENCH_MAX_FILE_BYTES": "the largest file the file routes write (104857600)",
    "WORKBENCH_WORKSPACE_QUOTA_BYTES": "bytes a session's workspace may hold for API writes (10737418240)",
    "WORKBENCH_SESSION_TTL_MS": "how long a browser's login lasts (43200000: 12 hours)",
    "WORKBENCH_CORS_ORIGINS": "origins whose pages may call the API, exactly, comma-separated (none)",
    "WORKBENCH_STORE_URL": "postgresql://... : a store many daemons share (default: SQLite in the data dir)",
    "WORKBENCH_NODE_ID": "this daemon's name among the nodes of a shared store (the host name)",
    "WORKBENCH_NODE_URL": "how other nodes reach this one (http(s)://...)",
    "WORKBENCH_NODE_TOKEN": "the secret the nodes share to fetch each other's artifacts (none)",
    "WORKBENCH_NODE_LEASE_MS": "a node silent this long is lost: its runs end node_lost (15000)",
    "WORKBENCH_RETENTION": "delete ended executions older than this, e.g. 7d (keep everything)",
    "WORKBENCH_METRICS_OPEN": "1: GET /metrics without a token from loopback (0)",
}
#: Set by the daemon inside every execution (a CLI run there sees them).
EXECUTION_VARIABLES = ("WORKBENCH_EXECUTION_ID", "WORKBENCH_PROGRESS")
#: The longest `NAME=value` the daemon takes (the kernel's limit on one variable).
MAX_VARIABLE_BYTES = 128 * 1024 - 1


def unknown_variables(environ: Mapping[str, str]) -> list[str]:
    """One warning per `WORKBENCH_*` variable that nothing of Workbench reads (a typo, most often)."""
    known = {*CLIENT_VARIABLES, *DAEMON_VARIABLES, *EXECUTION_VARIABLES}
    unknown = sorted(n for n in environ if n.startswith("WORKBENCH_") and n not in known)
    warnings = []
    for name in unknown:
        import difflib  # only when there is a typo to explain

        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        warnings.append(f"{name} is set but Workbench reads no such variable{hint}")
    return warnings


def is_local(target: Target) -> bool:
    """Whether the daemon is on this machine: a Unix socket, or a loopback address."""
    if target.socket_path is not None:
        return True
    rest = target.base_url.partition("://")[2]
    netloc = rest.partition("/")[0]
    # `[::1]:8787`, `127.0.0.1:8787`, `localhost` (without a port)
    host = netloc[1 : netloc.find("]")] if netloc.startswith("[") else netloc.rpartition(":")[0] or netloc
    return host == "localhost" or host.startswith("127.") or host == "::1"


def default_cwd(target: Target, image: str | None, session: str | None) -> str | None:
    """The working directory `run` gives when none is asked for: ours, when the daemon is local and
    runs on the host (it then sees the same files), and no `--session` chose that session's
    workspace. None: the daemon's default (the session's workspace)."""
    if session is not None or image not in (None, "host") or not is_local(target):
        return None
    try:
        return os.getcwd()
    except OSError:  # ours was removed: the workspace it is
        return None


def shell_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's variables the daemon can take (`--env-from-shell`): never Workbench's own (its
    token), nor names or sizes the daemon refuses."""
    out = {}
    for name, value in environ.items():
        if name.startswith("WORKBENCH_") or not _env_name(name) or "\x00" in value:
            continue
        if len(name) + 1 + len(value.encode("utf-8", "surrogateescape")) > MAX_VARIABLE_BYTES:
            continue
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8 cannot go in JSON text
                continue
        out[name] = value
    return out


def _env_name(name: str) -> bool:
    first = name[:1]
    return (first.isalpha() or first == "_") and name.isascii() and name.replace("_", "a").isalnum()


def piped_stdin() -> bytes | None:
    """Our stdin when it is not a terminal (a pipe, a file), read to its end; None for a terminal."""
    try:
        if os.isatty(0):
            return None
    except OSError:
        return None
    if sys.stdin is None:  # closed
        return None
    try:
        return sys.stdin.buffer.read()
    except OSError:
        return None
