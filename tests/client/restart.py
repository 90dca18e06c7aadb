"""Restarting an in-process daemon on the same port and data dir, its executions kept running."""

from __future__ import annotations

from typing import Any

import trio

from tests.conftest import DaemonHandle
from tests.ports import free_port


async def keeping_daemon(make_daemon: Any) -> DaemonHandle:
    """A daemon on a fixed free port whose stop leaves its executions running (shutdown mode keep)."""
    from workbench.core.settings import ShutdownMode

    handle: DaemonHandle = await make_daemon(bind=f"127.0.0.1:{free_port()}", shutdown_mode=ShutdownMode.KEEP)
    return handle


async def closed(port: int) -> None:
    """Once nothing listens on `port` of 127.0.0.1 any more (a daemon stopped)."""
    while True:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            return
        await stream.aclose()
        await trio.sleep(0.02)


async def restart(make_daemon: Any, first: DaemonHandle) -> DaemonHandle:
    """Stop `first` (streams end, connections drop), then start another on its port and data dir."""
    from workbench.wire.errors import ConfigError

    port = int(first.url.rsplit(":", 1)[1])
    first.shutdown.set()
    with trio.fail_after(20):
        await closed(port)
        while True:
            try:
                handle: DaemonHandle = await make_daemon(first.data_dir, bind=f"127.0.0.1:{port}")
                return handle
            except (OSError, ConfigError):  # the old one may still hold the port or the data dir
                await trio.sleep(0.05)
