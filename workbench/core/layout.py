"""Where an execution's files are: the one owner of every path under the data dir.

    <data>/executions/<id>/stdout, stderr      spool files (the process writes them directly)
    <data>/executions/<id>/stdin               the start body's stdin, fed by the supervisor
    <data>/executions/<id>/code.<ext>          the code of a `workbench_code` execution
    <data>/executions/<id>/progress            `$WORKBENCH_PROGRESS`
    <data>/executions/<id>/secret_env          `secretEnv` values, from acceptance to the spawn
    <data>/executions/<id>.deleting/           an execution's directory set aside and emptied by a
                                               delete whose record is not yet gone (`ExecutionDir.empty`)
    <data>/workspaces/<principal>/<session>    a session's working directory (per principal);
                                               the workspaces may live elsewhere (WORKBENCH_WORKSPACES_DIR)
    <data>/spool/                              uploaded archives, while they are unpacked
    <data>/session.key                         the key that signs browsers' session cookies
    <data>/sessions.revoked                    sessions ended by logout, until they expire
    <data>/store                               the store the data dir was last used with
    <data>/data-dir.id                         this data dir's random id, made once (a node on a
                                               shared store is known by it, beside its node id)

The sandbox supervisor writes its own status and proc files into the same directory; their names
are the sandbox's business (`sandbox.read_status_file`, `sandbox.read_proc_file`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

#: The two output streams, in the order they are read.
STREAMS = ("stdout", "stderr")
STDIN_FILE = "stdin"
#: Marks a workspaces dir laid out per principal (`Layout.adopt_shared_workspaces`).
_PER_PRINCIPAL = ".workspaces-per-principal"
PROGRESS_FILE = "progress"
SECRET_ENV_FILE = "secret_env"
#: The suffix of an execution's directory a delete has set aside (`ExecutionDir.empty`).
DELETING = ".deleting"


@dataclass(frozen=True)
class ExecutionDir:
    """The directory of one execution and the files in it."""

    path: Path

    def spool(self, stream: str) -> Path:
        """A stream's spool file (also the artifact of that name, when kept)."""
        if stream not in STREAMS:
            raise ValueError(f"no stream {stream!r}")
        return self.path / stream

    @property
    def stdout(self) -> Path:
        return self.path / "stdout"

    @property
    def stderr(self) -> Path:
        return self.path / "stderr"

    @property
    def stdin(self) -> Path:
        return self.path / STDIN_FILE

    @property
    def progress(self) -> Path:
        return self.path / PROGRESS_FILE

    @property
    def secret_env(self) -> Path:
        """The `secretEnv` values until the spawn reads them (never in the store)."""
        return self.path / SECRET_ENV_FILE

    def code_file(self, extension: str) -> Path:
        return self.path / f"code{extension}"

    def remove(self, keep: set[str]) -> None:
        """Remove everything but the files named in `keep` (the artifacts); blocking I/O."""
        directory = self.path
        if not directory.exists():
            return
        if not keep:
            shutil.rmtree(directory, ignore_errors=True)
            return
        for entry in directory.iterdir():
            if entry.name in keep:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    @property
    def aside(self) -> Path:
        """Where a delete sets the directory aside, emptied, until the record is gone (`empty`)."""
        return self.path.with_name(self.path.name + DELETING)

    def empty(self) -> bool:
        """A delete's first step (blocking I/O): set the directory aside and remove its files,
        which takes no room on a full disk. The emptied directory stays, the mark of a delete not
        yet finished, until `forget`. False when there was nothing to remove (no directory)."""
        try:
            os.rename(self.path, self.aside)
        except FileNotFoundError:
            pass  # set aside already, or never made here
        except OSError:  # set aside before, and not emptied then (a crash): empty that first
            _remove_entries(self.aside)
            os.rename(self.path, self.aside)
        if not self.aside.is_dir():
            return False
        _remove_entries(self.aside)
        return True

    def forget(self) -> None:
        """A delete's last step, once the record is gone: remove the emptied directory (and any
        directory made again meanwhile; blocking I/O)."""
        for path in (self.aside, self.path):
            shutil.rmtree(path, ignore_errors=True)


def _remove_entries(directory: Path) -> None:
    """Remove what `directory` holds, not the directory itself."""
    try:
        entries = list(os.scandir(directory))
    except FileNotFoundError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)


@dataclass(frozen=True)
class Layout:
    """The data dir's tree."""

    data_dir: Path
    #: The workspaces' own root, when not `<data>/workspaces`.
    workspaces_root: Path | None = None
    #: (uid, gid) the workspaces belong to (the sandbox's user, under a root daemon), if not
    #: the daemon's: what the daemon makes in them is given to it (see `give`).
    workspace_owner: tuple[int, int] | None = None

    def give(self, path: Path | str, *, dir_fd: int | None = None) -> None:
        """Make `path` (a workspace, or a file a sandboxed tree writes) the workspace owner's."""
        if self.workspace_owner is not None:
            os.chown(path, *self.workspace_owner, dir_fd=dir_fd, follow_symlinks=False)

    @property
    def executions_dir(self) -> Path:
        return self.data_dir / "executions"

    @property
    def workspaces_dir(self) -> Path:
        return self.workspaces_root if self.workspaces_root is not None else self.data_dir / "workspaces"

    @property
    def warm_dir(self) -> Path:
        """The pre-started interpreters' directories (see `warm`): remade at each start."""
        return self.data_dir / "warm"

    @property
    def run_dir(self) -> Path:
        return self.data_dir / "run"

    @property
    def spool_dir(self) -> Path:
        """Where an uploaded archive is kept while it is checked and unpacked (not in a workspace,
        which its executions could read or change meanwhile)."""
        return self.data_dir / "spool"

    @property
    def session_key(self) -> Path:
        return self.data_dir / "session.key"

    @property
    def store_mark(self) -> Path:
        """The store the data dir was last used with (`store_mark`): a start on another is refused."""
        return self.data_dir / "store"

    @property
    def revoked_sessions(self) -> Path:
        return self.data_dir / "sessions.revoked"

    def data_dir_id(self) -> str:
        """This data dir's random id, made on first use. Call with the data dir locked."""
        path = self.data_dir / "data-dir.id"
        try:
            found = path.read_text(encoding="ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            found = ""
        if len(found) == 32 and all(c in "0123456789abcdef" for c in found):
            return found
        made = secrets.token_hex(16)
        staging = self.data_dir / "data-dir.id.new"
        staging.write_text(made + "\n", encoding="ascii")
        os.replace(staging, path)
        return made

    def adopt_shared_workspaces(self, admin: str) -> list[str]:
        """Move workspaces of the first layout (`workspaces/<session>`, shared by every principal)
        under `admin`, once; returns the sessions moved. Call with the data dir locked.

        They were reachable by every principal; the admin principal, who sees everything, keeps
        them, and nobody else reaches them any more.
        """
        marker = self.data_dir / _PER_PRINCIPAL
        # A root of their own was never laid out the first way (and may hold anything else).
        if self.workspaces_root is not None or marker.exists() or not self.workspaces_dir.is_dir():
            return []
        entries = sorted(self.workspaces_dir.iterdir())
        moved: list[str] = []
        if entries:
            target = self.workspaces_dir / admin
            staging = self.workspaces_dir / f".{admin}.moving"
            staging.mkdir(mode=0o700, exist_ok=True)
            for entry in entries:
                if entry != staging:
                    entry.rename(staging / entry.name)
                    moved.append(entry.name)
            staging.rename(target)
        marker.write_text("workspaces/<principal>/<session>\n")
        return moved

    def execution(self, execution_id: str) -> ExecutionDir:
        return ExecutionDir(self.executions_dir / execution_id)

    def unfinished_deletes(self) -> list[str]:
        """The executions whose directory a delete set aside and whose record may still be there."""
        try:
            names = [e.name for e in os.scandir(self.executions_dir) if e.is_dir(follow_symlinks=False)]
        except FileNotFoundError:
            return []
        return sorted(n.removesuffix(DELETING) for n in names if n.endswith(DELETING) and n != DELETING)

    def workspace(self, principal: str, session_id: str) -> Path:
        """The working directory a principal's session shares by default: never another's.

        Both names are checked at their source (tokens file, request) to be single path
        components; this refuses anything else again, so no caller can reach outside.
        """
        for name in (principal, session_id):
            if not name or "/" in name or name in {".", ".."} or "\0" in name:
                raise ValueError(f"not a workspace name: {name!r}")
        return self.workspaces_dir / principal / session_id
