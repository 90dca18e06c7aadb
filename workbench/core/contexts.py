"""Code contexts: long-lived interpreters, one process tree each, whose names persist between
the executions run in them (`docs/api.md`, "Code contexts").

A context is a tree started through the sandbox supervisor like any execution's (same image,
containment, limits, workspace and principal), named by its id, whose interpreter runs our driver
(`ctxdriver.py` for python, `ctxdriver.js` for node, copied into `<data>/contexts/<id>/`). The
driver listens on a Unix socket in that directory; the daemon connects to it, and again after a
restart, since the shim holds the tree through a daemon crash. What a context is (who owns it,
its image, its counts) is kept in `context.json` beside it. Its executions are ordinary rows with
`context_id`; each gets a supervisor task (`context_run.ContextRun`), and a context runs one at a
time, in order.
"""

from __future__ import annotations

import builtins
import json
import logging
import os
import shutil
import signal as signals
from dataclasses import asdict
from pathlib import Path
from typing import Any

import trio

import sandbox
from workbench.core import launch
from workbench.core.accept import field_error
from workbench.core.context_link import Link, LinkClosed
from workbench.core.context_run import ContextRun
from workbench.core.context_state import Context, ContextInfo
from workbench.core.images import Image
from workbench.core.live import Live, RunContext
from workbench.core.principals import Principal, principal_key
from workbench.core.records import now_ms
from workbench.core.store import ExecutionRow
from workbench.core.waiting import first_of
from workbench.wire.contexts import Context as ContextRecord
from workbench.wire.contexts import ContextRequest
from workbench.wire.errors import Conflict, NotFound, TooManyExecutions
from workbench.wire.ids import new_context_id
from workbench.wire.models import StartCodeRequest

log = logging.getLogger("workbench.core.contexts")

#: The driver of each language a context runs, and its name in the context's directory.
DRIVERS = {
    "python": (Path(__file__).with_name("ctxdriver.py"), "driver.py"),
    "node": (Path(__file__).with_name("ctxdriver.js"), "driver.js"),
}
#: How long a start waits for the interpreter to listen (a cold start takes tens of ms).
READY_WAIT_S = 30.0
#: How late a context's counts (`executions`, `lastUsedAt`) may reach its `context.json`: what
#: a restart after a crash of the daemon within that time finds there (the counts it shows).
SAVE_AFTER_S = 0.5


class Contexts:
    """Every context of the daemon: create, find, delete, run executions in them, adopt them."""

    def __init__(self, ctx: RunContext, nursery: trio.Nursery, lives: dict[str, Live]) -> None:
        self.ex = ctx
        self.nursery = nursery
        self.root = ctx.settings.layout.data_dir / "contexts"
        self.all: dict[str, Context] = {}
        #: The executor's live executions: a context's are there too (cancel, shutdown).
        self.lives = lives

    # -- the routes ----------------------------------------------------------------------------

    async def create(self, principal: Principal, req: ContextRequest) -> ContextRecord:
        """Start a context's interpreter; answers once it is ready (or dead, saying why)."""
        image = launch.resolve_image(self.ex.images, req.image)
        launch.resolve_language(image, req.language)
        workspace = self.ex.settings.layout.workspace(principal.name, req.session_id)
        await self.ex.removals.over(workspace)  # before it holds the session: nothing left if cancelled
        self._check_room(principal)
        cwd = launch.resolve_cwd(image, workspace, None)
        now = now_ms()
        info = ContextInfo(
            id=new_context_id(),
            principal=principal.name,
            language=req.language,
            image=image.name,
            session_id=req.session_id,
            cwd=cwd,
            env=dict(req.env),
            idle_timeout_ms=req.idle_timeout_ms,
            created_at=now,
            last_used_at=now,
        )
        context = Context(info, self.root / info.id)
        self.all[info.id] = context
        try:
            spec = await trio.to_thread.run_sync(self._prepare, context, image, workspace)
            child = await self.ex.supervisor.spawn(spec)
        except (sandbox.SpawnError, OSError) as exc:
            message = exc.args[0] if isinstance(exc, sandbox.SpawnError) else str(exc)
            self._mark_dead(context, f"could not start: {message}")
            return context.record()
        info.child = child.to_dict()
        self._save(context)
        self.nursery.start_soon(self._hold, context, name=f"context {info.id}")
        with trio.move_on_after(READY_WAIT_S):
            await _first(context.ready.wait, context.dead.wait)
        return context.record()

    def _check_room(self, principal: Principal) -> None:
        """Refuse a context past the principal's `maxContexts` or `WORKBENCH_MAX_CONTEXTS` (live
        ones count: a dead one holds no tree). Nothing awaits between it and the new context's
        taking its place, so starts at once cannot both pass it."""
        live = [c.info.principal for c in self.all.values() if not c.info.dead]
        limit, mine = principal.max_contexts, live.count(principal.name)
        if limit is not None and mine >= limit:
            raise TooManyExecutions(
                f"the principal {principal.name!r} holds its maxContexts quota of {limit} live code "
                "context(s); delete one, or try again later",
                details={
                    "quota": "maxContexts",
                    "principal": principal.name,
                    "limit": limit,
                    "contexts": mine,
                },
            )
        limit = self.ex.settings.max_contexts
        if len(live) >= limit:
            raise TooManyExecutions(
                f"this daemon holds its WORKBENCH_MAX_CONTEXTS of {limit} live code context(s); "
                "try again later",
                details={"quota": "WORKBENCH_MAX_CONTEXTS", "limit": limit, "contexts": len(live)},
            )

    def get(self, principal: Principal, context_id: str) -> Context:
        context = self.all.get(context_id)
        if context is None or context.info.principal != principal.name:
            raise NotFound(f"no context {context_id}")
        return context

    def listing(self, principal: Principal) -> builtins.list[ContextRecord]:
        found = [c for c in self.all.values() if c.info.principal == principal.name]
        return [c.record() for c in sorted(found, key=lambda c: c.info.id)]

    async def delete(self, principal: Principal, context_id: str) -> None:
        """Kill the context's tree, fail what waits in it, and forget it."""
        context = self.get(principal, context_id)
        await self.kill(context, "the context was deleted")
        self.all.pop(context_id, None)
        await trio.to_thread.run_sync(shutil.rmtree, context.directory, True)

    def for_start(self, principal: Principal, req: StartCodeRequest) -> Context:
        """The context a start names, checked against what the start asks for."""
        assert req.context_id is not None
        context = self.get(principal, req.context_id)
        info = context.info
        if context.info.dead:
            raise Conflict(f"context {info.id} is dead: {info.reason}")
        if req.language != info.language:
            raise _field("language", f"context {info.id} runs {info.language}, not {req.language}")
        given = req.model_fields_set
        if "image" in given and req.image != info.image:
            raise _field("image", f"context {info.id} runs in image {info.image}")
        if "session_id" in given and req.session_id != info.session_id:
            raise _field("sessionId", f"context {info.id} belongs to session {info.session_id}")
        return context

    def live_in(self, principal: str, session_id: str) -> builtins.list[str]:
        """The ids of a principal's live (not `dead`) contexts in a session, in order: while one
        lives, its session cannot be removed."""
        found = (c.info for c in self.all.values() if not c.info.dead)
        return sorted(i.id for i in found if i.principal == principal and i.session_id == session_id)

    def names(self) -> set[str]:
        """The supervisor's names of the trees of live contexts (recovery must keep them)."""
        return {c.info.id for c in self.all.values() if not c.info.dead}

    # -- executions ----------------------------------------------------------------------------

    def submit(self, live: Live, *, resume: bool = False) -> None:
        """Queue an execution in its context (in submission order) and supervise it."""
        assert live.row.context_id is not None
        # Run when its turn comes, in a slot of its principal's quota alone (none of the daemon's).
        live.keys, live.daemon_slot = (principal_key(live.row.principal),), False
        context = self.all.get(live.row.context_id)
        run = ContextRun(self, context, live, resume=resume)
        self.lives[live.id] = live
        if context is not None and context.info.dead:
            run.turn.set()  # it ends at once, saying why its context is dead
        elif context is not None and not resume:
            # One of its principal's waiting executions (`maxQueued`) until it runs.
            self.ex.slots.park(live)
            context.turns.append(run)
            context.grant()
        elif context is not None:
            # It runs in its interpreter already: it holds its slot from now on.
            self.ex.slots.take(live)
            live.granted.set()
            context.running = run
            run.turn.set()
        self.nursery.start_soon(self._supervise, run, name=f"execution {live.id}")

    async def _supervise(self, run: ContextRun) -> None:
        try:
            await run.supervise()
        finally:
            self.lives.pop(run.live.id, None)

    def used(self, context: Context) -> None:
        """An execution of `context` ended: count it, and start its idle clock again."""
        context.info.executions += 1
        context.info.last_used_at = now_ms()
        if not context.info.dead and not context.saving:
            # Not on the way to the cell's answer (a replace of the file costs the event loop
            # about 0.4 ms), and once for a run of cells.
            context.saving = True
            self.nursery.start_soon(self._save_later, context)
        context.notify()

    async def _save_later(self, context: Context) -> None:
        try:
            await trio.sleep(SAVE_AFTER_S)
        finally:  # and when the daemon stops meanwhile; one that died was saved then
            context.saving = False
            try:
                if not context.info.dead:
                    self._save(context)
            except OSError as exc:
                log.warning("context %s: could not record its counts: %s", context.info.id, exc)

    async def interrupt(self, context: Context, execution_id: str) -> None:
        if context.link is not None:
            try:
                await context.link.send({"op": "interrupt", "id": execution_id})
            except LinkClosed:
                pass

    async def kill(self, context: Context, reason: str) -> None:
        """Kill the interpreter's whole tree; returns once it is `dead`."""
        if context.info.dead:
            return
        if context.killing is None:
            context.killing = reason
        if context.info.child is None:
            self._mark_dead(context, reason)
            return
        try:
            await self.ex.supervisor.signal(context.info.id, signals.SIGKILL)
        except sandbox.SandboxError:
            pass
        await context.dead.wait()

    async def kill_all(self, reason: str) -> None:
        """Kill every live context (a daemon that stops and keeps nothing running)."""
        async with trio.open_nursery() as nursery:
            for context in list(self.all.values()):
                if not context.info.dead:
                    nursery.start_soon(self.kill, context, reason)

    # -- holding one context -------------------------------------------------------------------

    def _prepare(self, context: Context, image: Image, workspace: Path) -> sandbox.SpawnSpec:
        directory = context.directory
        layout = self.ex.settings.layout
        (directory / "chan").mkdir(mode=0o700, parents=True, exist_ok=True)
        launch.ensure_workspace(workspace, layout)
        source, name = DRIVERS[context.info.language]
        driver = directory / name
        launch.write_private(driver, source.read_bytes())
        if image.sandboxed:  # run as the sandbox's user: its socket and its code are its own
            layout.give(directory / "chan")
            layout.give(driver)
        return spawn_spec(self.ex, context, image, directory, workspace)

    async def _hold(self, context: Context, adopted: bool = False) -> None:
        """Watch the tree, keep the channel, reap it when idle; ends once it is dead."""
        name = context.info.id
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._connect, context, adopted)
                if context.info.idle_timeout_ms:
                    nursery.start_soon(self._reap_idle, context, context.info.idle_timeout_ms / 1000)
                try:
                    status: sandbox.ExitStatus | None = await self.ex.supervisor.wait_exited(name)
                except sandbox.SandboxError:
                    status = None
                nursery.cancel_scope.cancel()
            with trio.CancelScope(shield=True):
                try:
                    await self.ex.supervisor.signal(name, signals.SIGKILL)
                    await self.ex.supervisor.wait_empty(name)
                    await self.ex.supervisor.release(name)
                except sandbox.SandboxError as exc:
                    log.warning("context %s: could not release its tree: %s", name, exc)
                self._mark_dead(context, context.killing or _ended(status))
        finally:
            if context.link is not None:
                context.link.close()
                context.link = None

    async def _connect(self, context: Context, adopted: bool) -> None:
        path = str(context.socket)
        link = None
        with trio.move_on_after(READY_WAIT_S):
            while link is None:
                try:
                    link = await Link.connect(path)
                except OSError:
                    # The interpreter is starting (about 20 ms): try again shortly.
                    await trio.sleep(0.002)
        if link is None:
            await self.kill(context, f"its interpreter did not listen within {READY_WAIT_S:.0f} s")
            return
        try:
            hello = await link.receive()
        except LinkClosed as exc:
            link.close()
            await self.kill(context, f"its interpreter's driver failed: {exc}")
            return
        context.link, context.hello = link, hello
        last = hello.get("last")
        if isinstance(last, dict) and isinstance(last.get("id"), str):
            context.replies[last["id"]] = last
        context.ready.set()
        context.notify()
        try:
            while True:
                message = await link.receive()
                if message.get("op") == "done" and isinstance(message.get("id"), str):
                    context.replies[message["id"]] = message
                    context.notify()
        except LinkClosed as exc:
            # Mostly the interpreter ending: its exit status, seen soon, says better how.
            with trio.move_on_after(1):
                await context.dead.wait()
            if not context.info.dead:
                await self.kill(context, f"its interpreter's driver closed the channel ({exc})")

    async def _reap_idle(self, context: Context, idle_s: float) -> None:
        # Its interpreter's start-up is not idleness: the clock starts once it is ready.
        await context.ready.wait()
        ready_at = now_ms()
        while True:
            while context.running is not None or context.turns:
                await context.changed.wait()
            seen = context.info.last_used_at
            idle_for = (now_ms() - max(seen, ready_at)) / 1000
            with trio.move_on_after(max(0.0, idle_s - idle_for)) as timer:
                while context.running is None and not context.turns and seen == context.info.last_used_at:
                    await context.changed.wait()
            if timer.cancelled_caught:
                ms = context.info.idle_timeout_ms
                await self.kill(context, f"idle for {ms} ms (its idleTimeoutMs)")
                return

    def _mark_dead(self, context: Context, reason: str) -> None:
        if context.info.dead:
            return
        context.info.dead, context.info.reason = True, reason
        log.info("context %s is dead: %s", context.info.id, reason)
        context.dead.set()
        try:
            self._save(context)
        except OSError as exc:
            log.warning("context %s: could not record its end: %s", context.info.id, exc)
        for run in [*([context.running] if context.running else []), *context.turns]:
            run.turn.set()
        context.notify()

    def _save(self, context: Context) -> None:
        context.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = json.dumps(asdict(context.info), ensure_ascii=False).encode("utf-8")
        launch.write_private(context.directory / "context.json", data)

    # -- recovery ------------------------------------------------------------------------------

    async def recover(self, rows: list[ExecutionRow]) -> None:
        """Take back the contexts a previous daemon left, then their unfinished executions."""
        infos = await trio.to_thread.run_sync(self._load)
        known = self.ex.supervisor.known()
        for info in infos:
            context = Context(info, self.root / info.id)
            self.all[info.id] = context
            if info.dead:
                context.dead.set()
                continue
            held = known.get(info.id)
            alive = held is not None and held.status is None
            if held is None and info.child is not None:
                child = sandbox.ChildInfo.from_dict(info.child)
                alive = await self.ex.supervisor.adopt(child)
            if not alive:
                if held is not None:
                    await self._release(info.id)
                self._mark_dead(context, "its interpreter ended while the daemon was down")
                continue
            self.nursery.start_soon(self._hold, context, True, name=f"context {info.id}")
        for context in self.all.values():
            if not context.info.dead:
                with trio.move_on_after(READY_WAIT_S):
                    await _first(context.ready.wait, context.dead.wait)
        # What was running first: it has its context's turn, the queued ones wait behind it.
        for row in sorted(rows, key=lambda r: (r.status.value == "queued", r.id)):
            live = Live(row.id, row, row.status)
            busy = self.all.get(row.context_id or "")
            # One still `queued` may have been handed over already: its `running` commits
            # lazily, and the daemon died before it did. Its driver says so; it is not run again.
            resume = busy is not None and (row.status.value != "queued" or busy.handed(row.id))
            self.submit(live, resume=resume)

    async def _release(self, name: str) -> None:
        try:
            await self.ex.supervisor.signal(name, signals.SIGKILL)
            await self.ex.supervisor.wait_empty(name)
            await self.ex.supervisor.release(name)
        except sandbox.SandboxError as exc:
            log.warning("context %s: could not release its tree: %s", name, exc)

    def _load(self) -> list[ContextInfo]:
        found = []
        if not self.root.is_dir():
            return []
        for entry in sorted(self.root.iterdir()):
            try:
                data = json.loads((entry / "context.json").read_bytes())
                found.append(ContextInfo(**data))
            except (OSError, ValueError, TypeError) as exc:
                log.warning("context %s: unreadable, left out: %s", entry.name, exc)
        return found


def spawn_spec(
    ex: RunContext, context: Context, image: Image, directory: Path, workspace: Path
) -> sandbox.SpawnSpec:
    """The interpreter's tree: the image's program for the language running the driver."""
    info = context.info
    lang = image.languages[info.language]
    if image.sandboxed:
        directory = Path(os.path.realpath(directory))
    driver = str(directory / DRIVERS[info.language][1])
    sock = str(directory / "chan" / "sock")
    argv: tuple[str, ...] = (*(driver if part == "{file}" else part for part in lang.argv), sock)
    env = launch.base_env(info.id, directory / "progress")
    del env["WORKBENCH_PROGRESS"]
    env["WORKBENCH_CONTEXT_ID"] = info.id
    if image.sandboxed and image.user is not None:
        env["USER"] = env["LOGNAME"] = launch.user_name(image.user[0])
    env.update(image.env)
    env.update(info.env)
    if image.sandboxed:
        if image.bubblewrap is None:
            raise sandbox.SpawnError(f"image {image.name!r} is unavailable: {image.unavailable_reason}")
        layout = ex.settings.layout
        hidden = [os.path.realpath(layout.data_dir)]
        root = os.path.realpath(layout.workspaces_dir)
        if not root.startswith(hidden[0].rstrip("/") + "/"):
            hidden.append(root)
        if ex.settings.tokens_file is not None:
            hidden.append(os.path.realpath(ex.settings.tokens_file))
        box = sandbox.SandboxLayout(
            cwd=info.cwd,
            writable=(os.path.realpath(workspace), str(directory / "chan")),
            readable=(driver,),
            hidden=tuple(hidden),
            network=image.network,
        )
        argv = sandbox.sandboxed_argv(
            image.bubblewrap, box, argv, image.user, launch.sandbox_limits(image.limits)
        )
    return sandbox.SpawnSpec(
        name=info.id,
        argv=argv,
        env=env,
        cwd=info.cwd,
        dir=str(directory),
        stdout_path=str(directory / "stdout"),
        stderr_path=str(directory / "stderr"),
        limits=launch.sandbox_limits(image.limits),
        containment=ex.containment,
        tag=("WORKBENCH_CONTEXT_ID", info.id),
    )


def _ended(status: sandbox.ExitStatus | None) -> str:
    if status is None or not status.known:
        return "its interpreter ended (how is not known)"
    if status.limit:
        return f"its interpreter was killed: {status.limit}"
    if status.signal:
        return f"its interpreter was killed by signal {status.signal}"
    return f"its interpreter exited with code {status.exit_code}"


def _field(name: str, message: str) -> Exception:
    return field_error(name, message)


async def _first(*waits: Any) -> None:
    await first_of(*waits)
