"""What the daemon holds for the workspace routes: the sessions, files, transfers and watches."""

from __future__ import annotations

import shutil
from dataclasses import dataclass

import trio

from workbench.core import beneath
from workbench.core.files import Files
from workbench.core.sessions import Workspaces
from workbench.core.settings import Settings
from workbench.core.transfers import Transfers
from workbench.core.tree_watch import TreeWatcher, Watch


@dataclass(eq=False)
class WorkspaceFace:
    """The operations of the workspace routes, each for a principal's sessions."""

    workspaces: Workspaces
    files: Files
    transfers: Transfers
    watcher: TreeWatcher

    async def watch(self, principal: str, session_id: str, path: str) -> Watch:
        """A watch of `path` (a directory) and everything under it, set up before this returns."""
        parts = beneath.parse(path)
        workspace = self.workspaces.existing(principal, session_id)
        root = await trio.to_thread.run_sync(lambda: self.workspaces.open_root(workspace, make=False))
        watch = Watch(self.watcher, root, parts)
        try:
            # Walked in the trio thread: watches are registered as they are added, so no event
            # of a directory just covered can arrive before its watcher knows it.
            watch.start()
        except BaseException:
            watch.close()
            raise
        return watch


def workspace_face(settings: Settings) -> WorkspaceFace:
    """The face, with its own inotify instance (run `face.watcher.run`; close `face.watcher`).

    `face.workspaces.live` says which executions are live and `face.workspaces.contexts` which
    code contexts; the daemon sets them once it has them.
    """
    # Archives a previous daemon was unpacking when it died: nobody waits for them any more.
    shutil.rmtree(settings.layout.spool_dir, ignore_errors=True)
    workspaces = Workspaces(settings)
    files = Files(workspaces)
    return WorkspaceFace(workspaces, files, Transfers(files), TreeWatcher())
