"""A shell that remembers: `persistShell` carries a session's working directory and exported
variables from one bash execution to the next, as a terminal's shell does between commands.

The image's shell runs the command after an EXIT trap that writes `$PWD` and its exported
variables to the execution's `shell-state` file, in the same shell, after the command, also when
it failed, and before the command's own EXIT trap (`workbench.core.shellscript`); a trap is not
run when the shell is killed, and a state left by a cancelled, timed-out or killed execution is
not taken. When such an execution ends with an exit code, `keep` makes that
state the session's: `<data>/shells/<principal>/<session>.state`. The next `persistShell` start
of that session and principal starts in that directory (while it still is one, and on a
sandboxed image inside the workspace) with exactly those variables, under its request's `env`.
Variables the shell sets per execution, the terminal's, any named `WORKBENCH_...` (the daemon's and
its clients') and the execution's `secretEnv` are never kept.

The shell writes its state with builtins alone, and ends it with an empty entry: a state without
it, or over `MAX_STATE_BYTES`, is not taken, and a variable too big to pass on to a program is
left out; `keep` says so in a note, which the execution's events carry.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from workbench.core import shellscript
from workbench.core.layout import ExecutionDir, Layout
from workbench.core.store import ExecutionRow
from workbench.wire.fields import ENV_NAME

STATE_FILE = "shell-state"
#: A state bigger than this is not kept (an environment is far smaller).
MAX_STATE_BYTES = 1 << 20
#: Linux's limit on one `NAME=value` string of a program's environment, its NUL included
#: (MAX_ARG_STRLEN): a variable this big could not be passed to the next execution's shell.
MAX_VARIABLE_BYTES = 128 * 1024
TOO_BIG = "over 128 KiB with its name, more than a program's start takes of one variable"
#: Why a state is not taken: its end is missing, or its start is not a directory.
NOT_WHOLE = "the shell did not write them whole: `exec` replaced it, or `builtin trap` its EXIT trap"
#: Set by the shell for each execution anew, or the terminal's: never carried over.
NOT_CARRIED = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "TERM", "COLUMNS", "LINES"})
#: Nor is any variable named `WORKBENCH_...`: the daemon's own (`WORKBENCH_EXECUTION_ID`,
#: `WORKBENCH_PROGRESS`, set anew for each execution) and its clients' (`WORKBENCH_URL`, ...).
#: The shell's own `__workbench_...` are not carried either (exported when the command left
#: `set -a` on).
NOT_CARRIED_PREFIXES = ("WORKBENCH_", "__workbench_")


def carried(name: str) -> bool:
    """Whether a variable of this name is carried from one execution to the next."""
    return name not in NOT_CARRIED and not name.startswith(NOT_CARRIED_PREFIXES)


@dataclass(frozen=True)
class ShellState:
    """What a finished execution's shell left: its working directory and exported variables."""

    cwd: str
    env: dict[str, str]
    #: What was left out of `env` and why, in words (a variable too big to pass on, or not text).
    left_out: tuple[str, ...] = ()


def state_file(directory: ExecutionDir) -> Path:
    """Where the shell of the execution in `directory` writes its state."""
    return directory.path / STATE_FILE


def session_file(layout: Layout, principal: str, session_id: str) -> Path:
    """Where the state of a principal's session is kept (beside, never inside, its workspace)."""
    workspace = layout.workspace(principal, session_id)  # checks both names
    return layout.data_dir / "shells" / workspace.parent.name / f"{workspace.name}.state"


def kept_states(layout: Layout, principal: str) -> list[str]:
    """The sessions of `principal` with a kept state."""
    try:
        names = os.listdir(layout.data_dir / "shells" / principal)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [name.removesuffix(".state") for name in names if name.endswith(".state")]


def wrap(command: str, state_path: Path) -> str:
    """The script the image's shell (bash 4.4 or newer) runs for a `persistShell` execution."""
    return f"{shellscript.prelude(shlex.quote(str(state_path)))}\n{command}"


def load(path: Path) -> ShellState | None:
    """The state kept at `path`, or None (none yet, or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ShellState(str(data["cwd"]), {str(k): str(v) for k, v in data["env"].items()})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def parse(raw: bytes, secret_names: set[str]) -> ShellState | str:
    """The state a shell wrote (`$PWD` NUL, `NAME=value` NUL each, then an empty entry: NUL), or
    why it is not one. Variables that cannot be passed on are left out, and named in `left_out`."""
    if len(raw) > MAX_STATE_BYTES:
        return f"it is over {MAX_STATE_BYTES >> 20} MiB"
    if not raw.endswith(b"\0\0"):
        return NOT_WHOLE
    cwd, *entries = raw[:-2].split(b"\0")
    if not cwd.startswith(b"/"):
        return NOT_WHOLE
    env: dict[str, str] = {}
    too_big: list[str] = []
    not_text: list[str] = []
    for entry in entries:
        name, sep, value = entry.decode("utf-8", errors="surrogateescape").partition("=")
        if not sep or not ENV_NAME.fullmatch(name) or not carried(name) or name in secret_names:
            continue
        if len(entry) >= MAX_VARIABLE_BYTES:  # with its NUL, over what one may be
            too_big.append(name)
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            not_text.append(name)  # cannot be passed on as a variable of the wire's env
            continue
        env[name] = value
    left_out = [f"{', '.join(too_big)} ({TOO_BIG})"] if too_big else []
    left_out += [f"{', '.join(not_text)} (not UTF-8 text)"] if not_text else []
    return ShellState(cwd.decode("utf-8", errors="surrogateescape"), env, tuple(left_out))


def keep(layout: Layout, row: ExecutionRow) -> str | None:
    """Make what the shell of `row` (ended with an exit code) left its session's state. Blocking.

    Returns a note for the execution's events when the state, or some of its variables, is not
    kept: a state that cannot be taken whole leaves the session's as it was."""
    try:
        # The tree writes this file, as big as its file size limit lets it: one byte past the
        # cap is enough to refuse it.
        with open(state_file(layout.execution(row.id)), "rb") as f:
            raw = f.read(MAX_STATE_BYTES + 1)
    except OSError:
        raw = b""
    secrets = set(json.loads(row.secret_env_names_json or "[]"))
    state = parse(raw, secrets)
    if isinstance(state, str):
        return (
            f"the shell's working directory and variables are not kept ({state}): the session keeps its own"
        )
    target = session_file(layout, row.principal, row.session_id)
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{row.id}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, json.dumps({"cwd": state.cwd, "env": state.env}).encode("utf-8"))
    finally:
        os.close(fd)
    os.replace(tmp, target)
    return f"variables not kept for the session: {'; '.join(state.left_out)}" if state.left_out else None


def starting_point(
    layout: Layout, row: ExecutionRow, env: dict[str, str], allowed: str | None
) -> tuple[str, dict[str, str]]:
    """(cwd, env) of a `persistShell` start: the session's kept state over `env` where there is one.

    `env` is the image's environment with the daemon's own variables; with a kept state, those of
    its variables that are not carried come from `env` and the rest exactly from the state.
    `allowed`: the directory the cwd must lie in (a sandboxed image's workspace), or None.
    """
    state = load(session_file(layout, row.principal, row.session_id))
    if state is None:
        return row.cwd, env
    kept = {**state.env, **{k: v for k, v in env.items() if not carried(k)}}
    cwd = row.cwd
    if os.path.isdir(state.cwd) and os.access(state.cwd, os.X_OK):
        real = os.path.realpath(state.cwd)
        if allowed is None:
            cwd = state.cwd
        elif real == allowed or real.startswith(allowed.rstrip("/") + "/"):
            cwd = real
    return cwd, kept
