"""Serving: the daemon core plus its HTTP face on hypercorn's trio worker, until SIGTERM/SIGINT."""

from __future__ import annotations

import gc
import json
import logging
import os
import resource
import signal
import ssl
import sys
import time
from pathlib import Path
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.utils import wrap_app

from api.app import access_log, create_app
from api.errors import error_body
from api.listen import Gate, chunk_writer, serve_http
from api.unix_socket import UnixListener, bind_unix
from workbench.core.daemon import Daemon, open_daemon
from workbench.core.settings import Settings, is_loopback, split_bind
from workbench.core.waiting import first_of
from workbench.wire.errors import ConfigError

log = logging.getLogger("workbench.serve")

#: What a client assumes when nothing says otherwise (the banner says what to export instead).
DEFAULTS = Settings()
#: How long in-flight responses get to finish after a stop signal.
GRACEFUL_S = 5.0
#: How long the `503` of a request refused during a stop may take to read its body and be written.
_REFUSE_S = 1.0
#: How long a connection may go without sending complete request headers: a new one, and one
#: idle between requests. Longer than the 5 s after which httpx (and so the SDK and the CLI)
#: stops reusing an idle connection, so a client never sends on one the daemon is closing.
KEEP_ALIVE_S = 15
#: Connections the kernel queues before the daemon accepts them; hypercorn's 100 dropped 77 % of
#: a burst of 1,000 connects on loopback (each then waits a second for its SYN to be sent again).
#: Linux caps it at net.core.somaxconn (4096 by default since 5.4).
BACKLOG = 4096
#: File descriptors kept for everything but HTTP connections (the store, inotify, the supervisor),
#: plus this many per execution that may run at once (its spool and progress files).
_FDS_RESERVED = 128
_FDS_PER_EXECUTION = 4


def hypercorn_config(settings: Settings) -> Config:
    config = Config()
    config.bind = [settings.bind]  # the Unix socket is bound by `_listen` (api.unix_socket)
    if settings.tls:
        config.certfile, config.keyfile = str(settings.tls_cert), str(settings.tls_key)
        config.alpn_protocols = ["http/1.1"]  # the one protocol served, with its limits
        config.ssl_handshake_timeout = KEEP_ALIVE_S
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.graceful_timeout = GRACEFUL_S
    config.keep_alive_timeout = KEEP_ALIVE_S
    config.backlog = BACKLOG
    # Clients (and benchmarks) may send many requests on one connection.
    config.keep_alive_max_requests = 100_000
    config.h11_max_incomplete_size = 64 * 1024
    return config


async def serve(
    settings: Settings,
    *,
    shutdown: trio.Event | None = None,
    hurry: trio.Event | None = None,
    task_status: trio.TaskStatus[tuple[Daemon, list[str]]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the daemon until `shutdown` is set; `hurry` cuts the wait for in-flight responses.

    Reports (daemon, bound addresses) through `task_status` once it accepts requests.
    """
    shutdown = shutdown if shutdown is not None else trio.Event()
    hurry = hurry if hurry is not None else trio.Event()
    config = hypercorn_config(settings)
    gate = Gate(connection_limit(settings, raise_fd_limit()))
    # Bound before the daemon starts: a busy port stops it before it adopts any execution.
    sockets, unix = _listen(settings, config)
    try:
        async with open_daemon(settings) as daemon:
            await _serve_daemon(daemon, settings, config, sockets, gate, shutdown, hurry, task_status)
    finally:
        for sock in [*sockets.secure_sockets, *sockets.insecure_sockets]:
            sock.close()
        if unix is not None:
            unix.remove()  # only the socket made here: never one another daemon listens on since


def raise_fd_limit() -> int:
    """Raise the soft limit of file descriptors to the hard one (each connection holds one, and a
    soft limit of 1,024 is common); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20  # what Linux allows at most (fs.nr_open) unless raised
    if soft != resource.RLIM_INFINITY and soft < hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as exc:
            log.warning("could not raise the file descriptor limit from %d to %d: %s", soft, hard, exc)
    return soft if soft != resource.RLIM_INFINITY else hard


def connection_limit(settings: Settings, fds: int) -> int:
    """WORKBENCH_MAX_CONNECTIONS, lowered to what `fds` descriptors leave room for."""
    room = fds - _FDS_RESERVED - _FDS_PER_EXECUTION * settings.max_concurrent_executions
    limit = min(settings.max_connections, max(16, room))
    if limit < settings.max_connections:
        log.warning(
            "at most %d connections at once (WORKBENCH_MAX_CONNECTIONS is %d; the file descriptor "
            "limit is %d)",
            limit,
            settings.max_connections,
            fds,
        )
    return limit


def _listen(settings: Settings, config: Config) -> tuple[Any, UnixListener | None]:
    """The listening sockets of `config`, and the Unix socket of the settings (plain HTTP: only
    this user reaches it, 0600, without a network); ConfigError (one line) when an address cannot
    be bound, or something not this daemon's is at the socket's path."""
    try:
        config.create_ssl_context()  # a certificate or key that does not load stops the start here
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(
            f"cannot serve HTTPS with WORKBENCH_TLS_CERT={config.certfile} and "
            f"WORKBENCH_TLS_KEY={config.keyfile}: {exc}"
        ) from None
    try:
        sockets = config.create_sockets()
    except OSError as exc:
        where = ", ".join([*config.bind, *config.insecure_bind])
        raise ConfigError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    unix = None
    if settings.unix_socket is not None:
        try:
            unix = bind_unix(settings.unix_socket)
        except ConfigError:
            for sock in [*sockets.secure_sockets, *sockets.insecure_sockets]:
                sock.close()
            raise
        sockets.insecure_sockets.append(unix.sock)
    for sock in [*sockets.secure_sockets, *sockets.insecure_sockets]:
        sock.listen(config.backlog)
    return sockets, unix


async def _serve_daemon(
    daemon: Daemon,
    settings: Settings,
    config: Config,
    sockets: Any,
    gate: Gate,
    shutdown: trio.Event,
    hurry: trio.Event,
    task_status: trio.TaskStatus[tuple[Daemon, list[str]]],
) -> None:
    app = create_app(daemon)
    host, _port = split_bind(settings.bind)
    if not is_loopback(host):
        log.warning(
            "listening on %s: anyone who can reach it and has a token can run commands%s",
            settings.bind,
            "" if settings.tls else " (no TLS: tokens and output cross the network in the clear)",
        )

    tracked = InFlight(app, daemon.stopping)
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            serve_http, wrap_app(tracked, config.wsgi_max_body_size, "asgi"), config, sockets, gate
        )
        task_status.started((daemon, binds))
        try:
            await shutdown.wait()
        finally:
            # Streams and long-polls end, and new work is refused; in-flight responses get up to
            # GRACEFUL_S to finish. Then the server stops at once: an idle keep-alive connection
            # would otherwise hold it for the whole graceful period. Cancelled instead (what
            # started the daemon failed), the stop begins all the same: the daemon's own end
            # waits for what only a stop ends.
            daemon.begin_stop()
        with trio.move_on_after(GRACEFUL_S):
            await first_of(tracked.wait_idle, hurry.wait)
        nursery.cancel_scope.cancel()


class InFlight:
    """An ASGI wrapper that counts the HTTP requests being answered (bodies still streaming included).

    A piece of a streamed body (an SSE stream's events) goes straight to its connection when its
    response is chunked (`api.listen.chunk_writer`). It also shields the last message of each
    response. quart-trio cancels its handler once the request side ends, and hypercorn ends it
    (`http.disconnect`) from inside that very send; the rest of the send (closing the connection
    after `Connection: close`, arming the keep-alive timer otherwise) then ran cancelled, and the
    connection stayed open with no timer at all.

    Once the daemon is `stopping`, a request that arrives is answered `503 unavailable` (the JSON
    error of API.md) without reaching the app, and one whose handler the end of the graceful
    period cancels before it answered gets that `503` too, not hypercorn's bare `500`.
    """

    def __init__(self, app: Any, stopping: trio.Event | None = None) -> None:
        self.app = app
        self.stopping = stopping if stopping is not None else trio.Event()
        self.active = 0
        self._idle = trio.Event()
        self._idle.set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        began = time.perf_counter()
        if self.stopping.is_set():
            await _refuse(scope, send, receive, began)
            return
        self.active += 1
        self._idle = trio.Event() if self._idle.is_set() else self._idle

        chunk = chunk_writer(send)  # pieces of a chunked body go straight to the connection
        started = False

        async def send_piece(message: Any) -> None:
            nonlocal started
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    body = message.get("body", b"")
                    if body and chunk is not None and await chunk(body):
                        return
                else:
                    with trio.CancelScope(shield=True):
                        await send(message)
                    return
            started = True
            await send(message)

        try:
            await self.app(scope, receive, send_piece)
        finally:
            try:
                # Cut short by the stop (cancelled, or ended by its connection's close) before
                # it answered: say so, instead of hypercorn's empty `500`.
                if not started and self.stopping.is_set():
                    await _refuse(scope, send, None, began)
            finally:
                self.active -= 1
                if self.active == 0:
                    self._idle.set()

    async def wait_idle(self) -> None:
        """Return once no request is being answered."""
        while self.active:
            await self._idle.wait()


async def _refuse(scope: Any, send: Any, receive: Any, began: float) -> None:
    """Answer `503 unavailable` (the daemon is stopping) and close, whatever cancels the caller;
    the request's body is read first when `receive` is given (closing with unread bytes sends a
    reset, which can destroy the answer before the client reads it)."""
    body = json.dumps(error_body("unavailable", "the daemon is stopping; try again once it is back")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", b"%d" % len(body)),
        (b"retry-after", b"1"),
        (b"connection", b"close"),
    ]
    with trio.CancelScope(shield=True):
        if receive is not None:
            with trio.move_on_after(_REFUSE_S):
                while (await receive()).get("more_body", False):
                    pass
        with trio.move_on_after(_REFUSE_S):
            try:
                await send({"type": "http.response.start", "status": 503, "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
            except Exception:  # the connection is gone: there is no one left to tell
                return
    access_log.info(
        "method=%s route=- status=503 duration_ms=%.1f principal=-",
        scope.get("method", "-"),
        (time.perf_counter() - began) * 1000,
    )


def main(
    *, bind: str | None, data_dir: Path | None, unix_socket: Path | None, allow_remote: bool | None
) -> int:
    """`workbench serve`: load the settings (flags over the environment), then serve until stopped."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        settings = Settings.load(
            bind=bind, data_dir=data_dir, unix_socket=unix_socket, allow_remote=allow_remote
        )
        status = run(settings)
    except ConfigError as exc:
        _say(exc.message)
        status = 2
    _unread_stderr_to_null()
    return status


def _unread_stderr_to_null() -> None:
    """A stderr that nothing reads any more (see `_say`) would fail the interpreter's last
    flush and turn a clean stop into exit status 120: what it holds goes to /dev/null instead."""
    try:
        sys.stderr.flush()
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stderr.fileno())
        os.close(null)


def run(settings: Settings) -> int:
    """`workbench serve`: serve until stopped; returns the process exit status."""

    async def main() -> None:
        shutdown, hurry = trio.Event(), trio.Event()
        # Signals stay caught until the very end: a second one must not kill the daemon while it
        # stops its executions (it only cuts the wait for in-flight responses).
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:

                async def on_signals() -> None:
                    async for signum in signals:
                        name = signal.Signals(signum).name
                        if shutdown.is_set():
                            log.warning("%s again: not waiting for in-flight requests", name)
                            hurry.set()
                        else:
                            log.info("%s: stopping", name)
                            shutdown.set()

                async def serve_until_stopped(
                    *, task_status: trio.TaskStatus[tuple[Daemon, list[str]]]
                ) -> None:
                    await serve(settings, shutdown=shutdown, hurry=hurry, task_status=task_status)
                    nursery.cancel_scope.cancel()

                nursery.start_soon(on_signals)
                daemon, binds = await nursery.start(serve_until_stopped)
                token_state = None
                if settings.token is None:
                    token_state = "generated" if daemon.token_created else "stored"
                for line in banner(settings, binds, token_state):
                    _say(line)
                refused = daemon.service.store.health.error()
                if refused is not None:
                    _say(refused.message)
                settle_start_up()

    try:
        trio.run(main)
    except BaseExceptionGroup as group:
        # A setting, image, lock or store problem at start is one clear error, not a traceback.
        config_errors = group.subgroup(ConfigError)
        if config_errors is None:
            raise
        raise _first(config_errors) from None
    return 0


def _say(line: str) -> None:
    """A line of the daemon's on stderr. One nothing reads any more (`serve 2>&1 | head -1`) is
    no reason to stop serving: the line goes nowhere, as the log does (`logging` drops it)."""
    try:
        print(f"workbench: {line}", file=sys.stderr, flush=True)
    except OSError:
        pass


def settle_start_up() -> None:
    """Leave what start-up made (modules, the app, the routes: most of the objects a daemon will
    ever hold) out of the garbage collector's full passes, which would otherwise walk all of it,
    tens of milliseconds with the event loop stopped, each time they run."""
    gc.collect()
    gc.freeze()


def banner(settings: Settings, binds: list[str], token_state: str | None) -> list[str]:
    """What `serve` says once it listens: each address as `WORKBENCH_URL` takes it, the data dir,
    the token, and what a client must export to find this daemon when it is not at the defaults."""
    import shlex

    urls = ["unix://" + b.removeprefix("http://unix:") if b.startswith("http://unix:") else b for b in binds]
    lines = [f"listening on {', '.join(urls)}", f"data dir {settings.data_dir}"]
    if token_state is not None:
        lines.append(f"token {token_state} in {settings.token_path}")
    exports = []
    if urls and urls[0] != f"http://{DEFAULTS.bind}":
        exports.append(f"WORKBENCH_URL={shlex.quote(urls[0])}")
    if settings.data_dir != DEFAULTS.data_dir and settings.token is None:
        exports.append(f"WORKBENCH_DATA_DIR={shlex.quote(str(settings.data_dir))}")
    if exports:
        lines.append(f"clients find it with: export {' '.join(exports)}")
    return lines


def _first(group: BaseExceptionGroup[ConfigError]) -> ConfigError:
    exc = group.exceptions[0]
    return _first(exc) if isinstance(exc, BaseExceptionGroup) else exc
