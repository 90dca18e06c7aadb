"""The daemon's core, assembled: data dir and lock, store, sandbox supervisor, executor, recovery.

`open_daemon` yields a `Daemon` that accepts work (recovery done); leaving it stops the executions
as `WORKBENCH_SHUTDOWN_MODE` says and closes the store. The HTTP face (`api`) is put on top by
`workbench serve`; tests may use the daemon without HTTP.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import trio

import sandbox
from workbench.core import auth, storage, store_mark
from workbench.core.browser import BrowserAuth, load_key
from workbench.core.cluster import Cluster
from workbench.core.executor import Executor
from workbench.core.exits import ExitsFeed, Webhook
from workbench.core.fanout import SharedPages
from workbench.core.follow import Inotify
from workbench.core.images import Image, default_images_dir, load_images
from workbench.core.journal import Journal
from workbench.core.metrics import Metrics
from workbench.core.recovery import recover
from workbench.core.retention import Retention
from workbench.core.service import ADMIN, Service, StreamPage
from workbench.core.sessions import Workspaces
from workbench.core.settings import ContainmentSetting, Settings, ShutdownMode
from workbench.core.store import ExecutionRow, Store
from workbench.core.store.base import SharedStore
from workbench.core.store.health import free_bytes
from workbench.core.store.sqlite import SQLiteStore
from workbench.core.workspace import WorkspaceFace, workspace_face
from workbench.wire.errors import ConfigError

log = logging.getLogger("workbench.core.daemon")


@dataclass(eq=False)
class Daemon:
    """Everything a running daemon holds."""

    settings: Settings
    service: Service
    executor: Executor
    authenticator: auth.Authenticator
    images: dict[str, Image]
    capabilities: sandbox.Capabilities
    token_created: bool
    exits: ExitsFeed
    #: The sessions' workspaces: files, transfers, watches.
    workspace: WorkspaceFace
    browser: BrowserAuth
    #: Bulk deletes, `WORKBENCH_RETENTION`'s sweep and the store's statistics.
    retention: Retention
    #: The instruments of `GET /metrics`.
    metrics: Metrics
    #: Set when a graceful stop begins: open streams end, new work is refused.
    stopping: trio.Event = field(default_factory=trio.Event)
    #: The pages of the journal that streams at one cursor share (`fanout`).
    pages: SharedPages[StreamPage] = field(default_factory=SharedPages)

    def health(self) -> str | None:
        """None while the daemon can take and supervise work; else why not: the store refuses
        writes (a full disk), or its sandbox shim died and is being replaced."""
        store = self.service.store.health
        if not store.ok:
            return store.reason
        return self.executor.supervisor.problem

    async def render_metrics(self) -> bytes:
        """`GET /metrics`: the Prometheus text exposition, counts and sizes read now."""
        slots = self.executor.slots
        running = self.settings.max_concurrent_executions - slots.free
        cluster = self.service.cluster
        queued = slots.queued if cluster is None else await cluster.waiting()
        return await self.metrics.render(self.service.store, self.retention, queued, running)

    def begin_stop(self) -> None:
        self.executor.accepting = False
        self.stopping.set()
        self.service.stopping.set()
        self.executor.journal.stopping.set()
        # Waits on a watch check `stopping` after every wake-up and wait on nothing else.
        self.service.store.watches.wake_all()


def choose_containment(setting: ContainmentSetting, caps: sandbox.Capabilities) -> sandbox.Containment:
    """The mechanism to use: the strongest available, or the one forced (if this machine has it)."""
    try:
        return caps.resolve(sandbox.Containment(setting.value))
    except sandbox.SandboxError as exc:
        raise ConfigError(f"WORKBENCH_CONTAINMENT={setting.value}: {exc}") from None


@contextlib.contextmanager
def _lock_data_dir(data_dir: Path) -> Iterator[None]:
    path = data_dir / "daemon.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", errors="replace").strip() or "?"
            raise ConfigError(
                f"another Workbench daemon (pid {holder}) is using the data dir {data_dir}; stop it "
                "first or choose another --data-dir"
            ) from None
        with _full_disk_stops_the_start(data_dir):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _full_disk_stops_the_start(data_dir: Path) -> Iterator[None]:
    """A start that cannot even write its own files on a full disk is one clear error."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise ConfigError(
            f"the disk holding the data dir {data_dir} is full ({free_bytes(data_dir)} bytes free): "
            f"free some space and start again ({exc.strerror})"
        ) from None


def _prepare_data_dir(settings: Settings) -> None:
    """Make the data dir and its directories; ConfigError (one line) when it cannot be."""
    data_dir = settings.data_dir
    try:
        data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(data_dir, 0o700)
        layout = settings.layout
        for sub in (layout.executions_dir, layout.run_dir):
            sub.mkdir(mode=0o700, exist_ok=True)
        layout.workspaces_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # said as a full disk
        where = f" ({exc.filename})" if exc.filename else ""
        raise ConfigError(f"the data dir {data_dir} cannot be used: {exc.strerror or exc}{where}") from None


def _images(settings: Settings) -> dict[str, Image]:
    """The images, with bubblewrap where installed, run as the sandbox's user under root."""
    directory = settings.images_dir or default_images_dir()
    return load_images(directory, bwrap=shutil.which("bwrap"), user=settings.workspace_owner)


@contextlib.asynccontextmanager
async def open_daemon(settings: Settings) -> AsyncIterator[Daemon]:
    """Start the core and recover every execution a previous daemon left; yield once accepting.

    Raises:
        ConfigError: a setting, an image, the tokens file, the lock or the store is not usable,
            or the disk is too full to start.
    """
    # Every input checked, and the store reached (and migrated), before anything is made: a
    # start refused for its configuration leaves no data dir, token or key behind.
    images, caps, containment = await _check_inputs(settings)
    store_name = await _reach_store(settings)
    with _full_disk_stops_the_start(settings.data_dir):
        _prepare_data_dir(settings)
    with _lock_data_dir(settings.data_dir):
        token, created, key = _claim_data_dir(settings, store_name)
        authenticator = auth.Authenticator(auth.load_tokens(token, settings.tokens_file, warn=False))
        browser = BrowserAuth(key, authenticator, settings.layout.revoked_sessions, settings.session_ttl_ms)
        with _full_disk_stops_the_start(settings.data_dir):
            store = await _prepared_store(settings)
        log.info("containment: %s (%s)", containment.value, caps.describe())
        store.start()
        inotify = Inotify()
        face = workspace_face(settings)
        try:
            # Known before recovery and before the first request: a full disk refuses new work.
            await storage.check(store, settings.data_dir, settings.min_free_bytes)
            async with trio.open_nursery() as outer:
                outer.start_soon(inotify.run)
                outer.start_soon(storage.watch, store, settings.data_dir, settings.min_free_bytes)
                outer.start_soon(face.watcher.run)
                # A shim killed under the daemon is replaced at once and takes the trees back.
                async with sandbox.open_supervisor(
                    settings.layout.run_dir, replace_dead_shim=True
                ) as supervisor:
                    journal = Journal(store)
                    async with trio.open_nursery() as executions:
                        executor = Executor(
                            settings=settings,
                            journal=journal,
                            supervisor=supervisor,
                            inotify=inotify,
                            images=images,
                            containment=containment,
                            nursery=executions,
                        )
                        executor.set_quotas(authenticator.principals)
                        service = Service(settings=settings, store=store, journal=journal, executor=executor)
                        exits = ExitsFeed(store, service.stopping)
                        _sessions_held(face.workspaces, executor)
                        node = await _join_cluster(settings, store, service, executor, supervisor)
                        await recover(executor, store, supervisor, node_id=node)
                        if service.cluster is not None:
                            executions.start_soon(service.cluster.run)
                        retention, metrics = await _side_tasks(settings, service, executor, exits, outer)
                        daemon = Daemon(
                            settings=settings,
                            service=service,
                            executor=executor,
                            authenticator=authenticator,
                            images=images,
                            capabilities=caps,
                            token_created=created,
                            exits=exits,
                            workspace=face,
                            browser=browser,
                            retention=retention,
                            metrics=metrics,
                        )
                        try:
                            yield daemon
                        finally:
                            daemon.begin_stop()
                            with trio.CancelScope(shield=True):
                                await _stop_executions(settings, executor, supervisor, executions)
                outer.cancel_scope.cancel()
        finally:
            inotify.close()
            face.watcher.close()
            with trio.CancelScope(shield=True):
                await store.aclose()


async def _check_inputs(
    settings: Settings,
) -> tuple[dict[str, Image], sandbox.Capabilities, sandbox.Containment]:
    """Read what the settings name outside the data dir (the tokens file, the image files, the
    containment forced): ConfigError before anything is made. Returns the images and containment."""
    # The admin token is not known before the data dir is read: the tokens file is checked
    # against WORKBENCH_TOKEN alone here (and its mode warned about, once), and read again,
    # against the admin token, once it is.
    auth.load_tokens(settings.token or "", settings.tokens_file)
    images = _images(settings)
    caps, containment = await _containment(settings)
    return images, caps, containment


async def _containment(settings: Settings) -> tuple[sandbox.Capabilities, sandbox.Containment]:
    """What this machine allows, and the containment the settings choose from it."""
    caps = await trio.to_thread.run_sync(sandbox.detect)
    return caps, choose_containment(settings.containment, caps)


async def _side_tasks(
    settings: Settings,
    service: Service,
    executor: Executor,
    exits: ExitsFeed,
    nursery: trio.Nursery,
) -> tuple[Retention, Metrics]:
    """Start the retention sweep, the exit webhook and the warm pool's refill (after recovery, which
    kills what an earlier daemon left); measure commits, spawns and warm starts for /metrics.
    Finish the deletes an earlier run left between files and records; remove the directories of
    executions deleted elsewhere or meanwhile (on a shared store, also as other nodes delete
    them)."""
    store = service.store
    await service.deletes.start()
    retention = Retention(settings, store, service.deletes, executor.live.keys)
    if isinstance(store, SharedStore):
        store.on_deleted = retention.deleted_elsewhere
        nursery.start_soon(retention.remove_leftovers)
    await retention.sweep_leftovers()
    metrics = Metrics()
    executor.journal.observe_commit = metrics.commit_seconds.observe
    executor.context.observe.spawn = metrics.spawn_seconds.observe
    metrics.warm_starts = executor.warm.starts  # the pool counts into it
    nursery.start_soon(retention.run)
    nursery.start_soon(executor.warm.run)
    nursery.start_soon(store.watches.run_ticks)  # the execution streams' keep-alives
    if settings.exit_webhook_url is not None:
        nursery.start_soon(Webhook(settings.exit_webhook_url, exits, store).run)
    return retention, metrics


async def _join_cluster(
    settings: Settings, store: Store, service: Service, executor: Executor, supervisor: sandbox.Supervisor
) -> str | None:
    """On a shared store: join its nodes, kill the trees of ours that were declared lost, and
    return this node's id (recovery takes back only its own executions); else None."""
    if not isinstance(store, SharedStore):
        return None
    service.cluster = cluster = Cluster(store, executor)
    await cluster.join()
    await cluster.kill_lost_trees(supervisor)
    return settings.node_id


def _sessions_held(workspaces: Workspaces, executor: Executor) -> None:
    """Tell the sessions what holds them: a session with a live execution or a live code context
    cannot be removed; and the executor which sessions are being removed."""
    workspaces.live = partial(_running_rows, executor)
    workspaces.contexts = executor.contexts.live_in
    workspaces.removals = executor.removals


def _running_rows(executor: Executor) -> list[ExecutionRow]:
    """What the executor holds that has not ended (a session with one cannot be removed)."""
    return [live.row for live in executor.live.values() if not live.ending]


def _claim_data_dir(settings: Settings, store_name: store_mark.StoreName) -> tuple[str, bool, bytes]:
    """With the data dir locked: refuse it when it belongs to another store, else note the store,
    adopt the shared workspaces of an older layout; (the admin token, whether it was made, the
    browsers' session key)."""
    with _full_disk_stops_the_start(settings.data_dir):
        store_mark.claim(settings.layout, settings.store_path, store_name)
        _adopt_shared_workspaces(settings)
        token, created = auth.admin_token(settings.token, settings.token_path)
        return token, created, load_key(settings.layout.session_key)


def _adopt_shared_workspaces(settings: Settings) -> None:
    """Workspaces of a data dir from before they were per principal become the admin's."""
    moved = settings.layout.adopt_shared_workspaces(ADMIN)
    if moved:
        log.warning(
            "workspaces are per principal now: the shared ones (%s) moved to workspaces/%s/",
            ", ".join(moved),
            ADMIN,
        )


async def _reach_store(settings: Settings) -> store_mark.StoreName:
    """Which store the settings name; a PostgreSQL one is reached and its schema made ready."""
    if settings.store_url is None:
        return store_mark.StoreName(store_mark.SQLITE, "the SQLite store")
    try:
        from workbench.core.store.postgres import PostgresStore
    except ImportError:
        raise ConfigError(
            "WORKBENCH_STORE_URL names PostgreSQL, but psycopg is not installed: "
            "pip install 'workbench[postgres]'"
        ) from None
    from workbench.core.store.postgres_schema import redacted

    identity = await trio.to_thread.run_sync(PostgresStore.prepare, settings.store_url)
    where = f"the PostgreSQL store at {redacted(settings.store_url)}"
    return store_mark.StoreName(f"{store_mark.POSTGRES} {identity}", where)


async def _prepared_store(settings: Settings) -> Store:
    """The engine the settings name, its schema ready (PostgreSQL's by `_reach_store`)."""
    if settings.store_url is None:
        await trio.to_thread.run_sync(SQLiteStore.prepare, settings.store_path)
        return SQLiteStore(settings.store_path)
    from workbench.core.store.postgres import PostgresStore
    from workbench.core.store.postgres_schema import claim_node, fence, node_url

    # A living node of this id on another data dir keeps it: this start is refused before its
    # fence would end that node's sessions.
    here = settings.layout.data_dir_id()
    await trio.to_thread.run_sync(
        claim_node, settings.store_url, settings.node_id, here, settings.node_lease_ms
    )
    url = node_url(settings.store_url, settings.node_id)
    ended = await trio.to_thread.run_sync(fence, url)
    if ended:
        log.warning("store: ended %d sessions of this node's earlier run before reading the store", ended)
    return PostgresStore(url)


async def _stop_executions(
    settings: Settings, executor: Executor, supervisor: sandbox.Supervisor, executions: trio.Nursery
) -> None:
    await executor.warm.close()
    if settings.shutdown_mode is ShutdownMode.KILL:
        await executor.kill_all("daemon shutdown")
        await executor.contexts.kill_all("the daemon shut down (WORKBENCH_SHUTDOWN_MODE=kill)")
        executions.cancel_scope.cancel()
        await supervisor.shutdown()
    else:
        # keep: leave the trees running; the next start adopts them from the journal's offsets.
        executions.cancel_scope.cancel()
