# Shared set-up for scripts/serve and scripts/test: sourced, not run.
# Creates .venv when needed, installs the project (and system packages it needs), then returns.
# WB_FOR says for which: `serve` (the default) installs what the daemon and its tools run with;
# `test` adds the tests' own needs (the dev extra, PostgreSQL's server).
set -euo pipefail
WB_FOR="${WB_FOR:-serve}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
        echo "setup: need root (or sudo) to run: $*" >&2; return 1; fi
}

apt_install() {
    # apt-get update once per set-up, only when something is missing.
    if [ -z "${_WB_APT_UPDATED:-}" ]; then as_root apt-get update -qq; _WB_APT_UPDATED=1; fi
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

can_be_root() {
    # Root, or sudo that will not stop at a password prompt nobody can answer.
    [ "$(id -u)" -eq 0 ] && return 0
    command -v sudo >/dev/null 2>&1 || return 1
    [ -t 0 ] || sudo -n true 2>/dev/null
}

need_system_packages() {
    # Optional packages: without them the daemon still serves (the sandbox image reports itself
    # unavailable), so nothing here may stop the start.
    local missing=()
    command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
    local without="the sandbox image (bubblewrap) will be unavailable"
    if [ "$WB_FOR" = test ]; then
        # PostgreSQL: the tests of many daemons on one database start a server of their own.
        [ -n "$(ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null)" ] || missing+=(postgresql)
        without="the sandbox image (bubblewrap) or the PostgreSQL tests (postgresql) will be unavailable"
    fi
    [ ${#missing[@]} -gt 0 ] || return 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: ${missing[*]} missing and no apt-get: $without" >&2
    elif ! can_be_root; then
        echo "setup: ${missing[*]} missing and no root or sudo to install it: $without" >&2
    else
        echo "setup: installing ${missing[*]}" >&2
        apt_install "${missing[@]}" || echo "setup: could not install ${missing[*]}: $without" >&2
    fi
}

need_chromium() {
    # The dashboard's tests drive Debian's chromium (headless, through Playwright); called by
    # scripts/test only: serving the dashboard needs no browser.
    command -v chromium >/dev/null 2>&1 && return 0
    if ! command -v apt-get >/dev/null 2>&1 || ! can_be_root; then
        echo "setup: chromium missing and no apt-get with root to install it: the dashboard's tests will fail" >&2
        return 0
    fi
    echo "setup: installing chromium" >&2
    apt_install chromium || echo "setup: could not install chromium: the dashboard's tests will fail" >&2
}

make_venv() {
    if [ -x "$VENV/bin/python" ]; then return; fi
    if ! "$PY" -m venv "$VENV" 2>/dev/null; then
        # Debian splits ensurepip into python3-venv.
        rm -rf "$VENV"
        echo "setup: installing python3-venv" >&2
        apt_install python3-venv
        "$PY" -m venv "$VENV"
    fi
}

install_project() {
    # Reinstall only when the dependency list changed, or an extra is wanted that is not there.
    # mcp: the MCP server (`workbench mcp`); postgres: the PostgreSQL engine (many daemons on one
    # database); dev: the tests' and checks' tools (pytest, ruff, mypy, Playwright, ...).
    local stamp="$VENV/.workbench-installed" hash extras=mcp,postgres had=""
    if [ "$WB_FOR" = test ]; then extras=dev,mcp,postgres; fi
    hash="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
    [ -f "$stamp" ] && had="$(cat "$stamp")"
    # The stamp is "<hash of pyproject.toml> <extras>"; the serve set is in every install.
    if [ "${had%% *}" = "$hash" ] && { [ "$WB_FOR" != test ] || [[ "$had" == *" dev,"* ]]; }; then
        return 0
    fi
    echo "setup: installing workbench into $VENV" >&2
    # The venv's own pip (Python 3.11's is 23.2) installs the project as it is: no upgrade first.
    "$VENV/bin/python" -m pip install -q -e "$ROOT[$extras]"
    echo "$hash $extras" > "$stamp"
}

need_system_packages
make_venv
install_project
