"""Turning an accepted execution into what the sandbox starts: directory, argv, environment, limits."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import pwd
from collections.abc import Sequence
from pathlib import Path

import sandbox
from workbench.core import interactive, shells
from workbench.core.images import EXECUTION_PATH, Image, ImageLimits
from workbench.core.layout import ExecutionDir, Layout
from workbench.core.store import ExecutionRow
from workbench.wire.errors import ImageUnavailable, InvalidRequest, UnknownImage, UnsupportedLanguage


@functools.cache
def _user(uid: int) -> tuple[str, str, str]:
    """(home, name, shell) of `uid`: looked up once (a passwd lookup costs more than a spawn's
    worth of everything else here)."""
    try:
        user = pwd.getpwuid(uid)
        return user.pw_dir, user.pw_name, user.pw_shell or "/bin/sh"
    except KeyError:
        return "/", str(uid), "/bin/sh"


def user_name(uid: int) -> str:
    """The login name of `uid` (the uid itself where it has none)."""
    return _user(uid)[1]


def base_env(execution_id: str, progress: Path) -> dict[str, str]:
    """The small clean environment every execution starts from (never the daemon's own)."""
    home, name, shell = _user(os.getuid())
    return {
        "PATH": EXECUTION_PATH,
        "HOME": home,
        "USER": name,
        "LOGNAME": name,
        "SHELL": shell,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "WORKBENCH_EXECUTION_ID": execution_id,
        "WORKBENCH_PROGRESS": str(progress),
    }


def resolve_image(images: dict[str, Image], name: str) -> Image:
    """The image by that name, or the API error that says why it cannot be used."""
    image = images.get(name)
    if image is None:
        raise UnknownImage(f"no image named {name!r}; images: {', '.join(sorted(images))}")
    if not image.available:
        raise ImageUnavailable(f"image {name!r} is not available on this machine: {image.unavailable_reason}")
    return image


def resolve_language(image: Image, language: str) -> None:
    """Raise UnsupportedLanguage unless `image` can run `language` here."""
    lang = image.languages.get(language)
    if lang is None or lang.program is None:
        have = image.available_languages
        raise UnsupportedLanguage(
            f"image {image.name!r} cannot run {language!r}; languages: {', '.join(have) or 'none'}",
            details={"languages": have},
        )


def resolve_cwd(image: Image, workspace: Path, cwd: str | None) -> str:
    """The working directory of a new execution: the session's workspace unless `cwd` is given.

    Creates nothing: the workspace is made on first use, when the execution starts (see
    `prepare_directory`), so that a refused request leaves none behind. On a sandboxed image,
    `cwd` must lie inside the workspace once symlinks are resolved, and the real path is
    returned. Raises InvalidRequest for a `cwd` that is not an accessible directory, or that is
    outside the workspace on a sandboxed image.
    """
    if cwd is None:
        return os.path.realpath(workspace) if image.sandboxed else str(workspace)
    path = Path(cwd)
    if image.sandboxed:
        real = os.path.realpath(cwd)
        if not _inside(real, os.path.realpath(workspace)):
            raise _cwd_error(
                f"{cwd} is outside the session's workspace {workspace}: on image {image.name!r} "
                "the working directory must be the workspace or a directory inside it"
            )
        path = Path(real)
    if not path.is_dir():
        raise _cwd_error(f"{cwd} does not exist or is not a directory")
    if not os.access(path, os.X_OK):
        raise _cwd_error(f"{cwd} is not accessible")
    return str(path) if image.sandboxed else os.path.normpath(cwd)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _cwd_error(message: str) -> InvalidRequest:
    return InvalidRequest(f"cwd {message}", details=[{"field": "cwd", "message": message}])


def code_file_name(image: Image, language: str) -> str:
    return "code" + image.languages[language].extension


def _code_file(row: ExecutionRow, image: Image, directory: ExecutionDir) -> Path:
    assert row.language is not None
    return directory.code_file(image.languages[row.language].extension)


def argv_for(row: ExecutionRow, image: Image, directory: ExecutionDir) -> tuple[str, ...]:
    """The program and arguments of an execution."""
    if row.kind == "workbench_bash":
        assert row.command is not None
        return (*image.shell, row.command)
    assert row.language is not None
    lang = image.languages[row.language]
    path = str(_code_file(row, image, directory))
    return tuple(path if part == "{file}" else part for part in lang.argv)


def only_a_directory(row: ExecutionRow, image: Image, layout: Layout) -> bool:
    """Whether `prepare_directory` has nothing to do for `row` but make its directory: no stdin,
    no code file, no sandbox's files, and a workspace that is there already (or not needed)."""
    if row.stdin is not None or row.kind == "workbench_code" or image.sandboxed:
        return False
    workspace = layout.workspace(row.principal, row.session_id)
    return row.cwd != str(workspace) or workspace.is_dir()


def prepare_directory(row: ExecutionRow, image: Image, layout: Layout) -> None:
    """Create the execution's directory with its stdin and code files (idempotent).

    Also the session's workspace where it is the working directory (its first use), and on a
    sandboxed image, where it is always bound in, the workspace and the (empty) progress file.
    Under a root daemon, the workspace belongs to the sandbox's user (`Layout.give`), and so do
    the files a sandboxed tree is given to write (progress, shell state) or read (its code).
    """
    directory = layout.execution(row.id)
    directory.path.mkdir(mode=0o700, parents=True, exist_ok=True)
    workspace = layout.workspace(row.principal, row.session_id)
    # A stat before the mkdir: after its first use the workspace is there, and a mkdir that
    # fails costs more than a stat.
    if image.sandboxed or row.cwd == str(workspace):
        ensure_workspace(workspace, layout)
    if row.stdin is not None:
        _write(directory.stdin, row.stdin.encode("utf-8"))
    given: list[Path] = []
    if row.kind == "workbench_code":
        assert row.code is not None
        given.append(_code_file(row, image, directory))
        _write(given[-1], row.code.encode("utf-8"))
    if image.sandboxed:
        given.append(directory.progress)
        os.close(os.open(directory.progress, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        if row.persist_shell:  # bound in, so it must exist
            given.append(shells.state_file(directory))
            os.close(os.open(given[-1], os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        for path in given:
            layout.give(path)


def ensure_workspace(workspace: Path, layout: Layout) -> None:
    """Make the workspace on its first use; give it to its owner if it is not theirs yet."""
    try:
        st = workspace.stat()
    except FileNotFoundError:
        workspace.mkdir(mode=0o700, parents=True, exist_ok=True)
        layout.give(workspace)
        return
    owner = layout.workspace_owner
    if owner is not None and (st.st_uid, st.st_gid) != owner:
        layout.give(workspace)  # made before the daemon ran the sandbox as another user


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, mode 0600 (atomically)."""
    _write(path, data)


def read_secrets(row: ExecutionRow, directory: ExecutionDir) -> dict[str, str]:
    """The `secretEnv` values kept for the spawn of `row`.

    Raises:
        sandbox.SpawnError: the row names secrets whose values are gone.
    """
    if not row.secret_env_names_json:
        return {}
    try:
        values = json.loads(directory.secret_env.read_bytes())
    except (OSError, ValueError):
        raise sandbox.SpawnError(
            "its secretEnv values are gone (they are kept only until the execution starts)"
        ) from None
    return {str(k): str(v) for k, v in values.items()}


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def spawn_spec(
    row: ExecutionRow,
    image: Image,
    layout: Layout,
    containment: sandbox.Containment,
    *,
    hide: Sequence[Path] = (),
) -> sandbox.SpawnSpec:
    """What the sandbox is asked to start for this execution.

    On a sandboxed image the argv runs under bubblewrap (see `sandbox_layout`); `hide` names
    more host paths it must not see (such as a tokens file outside the data dir).

    Raises:
        sandbox.SpawnError: a sandboxed image that cannot run here, or a working directory that
            is no longer inside the session's workspace.
    """
    directory = layout.execution(row.id)
    if image.sandboxed:
        directory = ExecutionDir(Path(os.path.realpath(directory.path)))
    env = base_env(row.id, directory.progress)
    if image.sandboxed and image.user is not None:
        env["USER"] = env["LOGNAME"] = user_name(image.user[0])
    env.update(image.env)
    cwd = row.cwd
    persist = row.persist_shell and row.kind == "workbench_bash"
    if persist:
        workspace = layout.workspace(row.principal, row.session_id)
        if row.cwd == resolve_cwd(image, workspace, None):  # no other cwd asked for
            allowed = os.path.realpath(workspace) if image.sandboxed else None
            cwd, env = shells.starting_point(layout, row, env, allowed)
    requested = json.loads(row.env_json)
    env.update(requested)
    env.update(read_secrets(row, layout.execution(row.id)))
    interactive.spawn_env(row, env, requested)
    argv = argv_for(row, image, directory)
    if persist:
        argv = (*argv[:-1], shells.wrap(argv[-1], shells.state_file(directory)))
    if image.sandboxed:
        if image.bubblewrap is None:
            raise sandbox.SpawnError(f"image {image.name!r} is unavailable: {image.unavailable_reason}")
        box = sandbox_layout(row, image, layout, hide, cwd)
        argv = sandbox.sandboxed_argv(image.bubblewrap, box, argv, image.user, _limits(image.limits))
    return sandbox.SpawnSpec(
        name=row.id,
        argv=argv,
        env=env,
        cwd=cwd,
        dir=str(directory.path),
        stdout_path=str(directory.stdout),
        stderr_path=str(directory.stderr),
        stdin_path=str(directory.stdin) if row.stdin is not None else None,
        limits=_limits(image.limits),
        containment=containment,
        tag=("WORKBENCH_EXECUTION_ID", row.id),
        open_stdin=row.open_stdin and row.tty_json is None,
        tty=interactive.tty_of(row),
    )


def sandbox_layout(
    row: ExecutionRow, image: Image, layout: Layout, hide: Sequence[Path] = (), cwd: str | None = None
) -> sandbox.SandboxLayout:
    """What a sandboxed execution sees of the host besides the read-only root.

    Writable: the session's workspace (the working directory is in it) and the progress file.
    Readable: the code file. Hidden: the whole data dir (the store, the token, the other
    executions and workspaces), the workspaces' own root where they have one, and `hide`. The
    workspace, not the working directory, is bound: nothing inside a sandbox can replace it,
    whereas a directory inside it could be swapped for a symlink between the check of `cwd` and
    the bind, which would bind the symlink's target.
    """
    directory = ExecutionDir(Path(os.path.realpath(layout.execution(row.id).path)))
    workspace = os.path.realpath(layout.workspace(row.principal, row.session_id))
    cwd = cwd or row.cwd
    if os.path.realpath(cwd) != cwd or not _inside(cwd, workspace):
        raise sandbox.SpawnError(f"the working directory {cwd} is no longer inside the workspace {workspace}")
    readable: tuple[str, ...] = ()
    if row.kind == "workbench_code":
        readable = (str(_code_file(row, image, directory)),)
    hidden = [os.path.realpath(layout.data_dir)]
    root = os.path.realpath(layout.workspaces_dir)
    if not _inside(root, hidden[0]):
        hidden.append(root)
    hidden += [os.path.realpath(path) for path in hide]
    writable: tuple[str, ...] = (workspace, str(directory.progress))
    if row.persist_shell:
        writable += (str(shells.state_file(directory)),)
    return sandbox.SandboxLayout(
        cwd=cwd,
        writable=writable,
        readable=readable,
        hidden=tuple(hidden),
        network=image.network,
    )


def sandbox_limits(limits: ImageLimits) -> sandbox.Limits:
    """An image's limits as the sandbox takes them."""
    return _limits(limits)


def _limits(limits: ImageLimits) -> sandbox.Limits:
    return sandbox.Limits(
        max_processes=limits.max_processes,
        max_open_files=limits.max_open_files,
        max_file_size_bytes=limits.max_file_size_bytes,
        cpu_seconds=limits.cpu_seconds,
        memory_bytes=limits.memory_bytes,
    )


@dataclasses.dataclass(frozen=True)
class WarmBox:
    """How a python execution on a sandboxed image may start in a pre-started sandbox.

    `prefix`: the pre-started sandbox's command line up to the interpreter's arguments: the
    cold one's without the execution's own files (so its workspace, hidden paths, network and
    user), started in the workspace `cwd`. `binds`: those files (path, read-only), in the order
    the cold start binds them after the workspace; `same`: the workspace, which must still be
    the directory the sandbox bound. `sh`: the leader's shell, whose exported environment the
    interpreter gets.
    """

    prefix: tuple[str, ...]
    cwd: str
    binds: tuple[tuple[str, bool], ...]
    same: tuple[str, ...]
    sh: str


def warm_box(row: ExecutionRow, image: Image, layout: Layout, hide: Sequence[Path] = ()) -> WarmBox | None:
    """The `WarmBox` of `row` (python code on a sandboxed image run as its own user, its
    directory prepared), or None where its cold start's binds do not begin with the workspace."""
    if not image.sandboxed or image.bubblewrap is None or image.user is None or row.language != "python":
        return None
    cold = sandbox_layout(row, image, layout, hide)
    workspace = os.path.realpath(layout.workspace(row.principal, row.session_id))
    early = dataclasses.replace(cold, cwd=workspace, writable=(workspace,), readable=())
    order, first = sandbox.bind_order(cold), sandbox.bind_order(early)
    if order[: len(first)] != first or any(os.path.isdir(path) for path in order[len(first) :]):
        return None
    directory = ExecutionDir(Path(os.path.realpath(layout.execution(row.id).path)))
    prefix = sandbox.sandboxed_argv(
        image.bubblewrap, early, argv_for(row, image, directory)[:-1], image.user, _limits(image.limits)
    )
    binds = tuple((path, path not in cold.writable) for path in order[len(first) :])
    return WarmBox(prefix, workspace, binds, (workspace,), image.bubblewrap.sh)
