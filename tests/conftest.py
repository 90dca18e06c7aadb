"""Shared fixtures: a real daemon on 127.0.0.1:0, its HTTP client, and the leak check."""

from __future__ import annotations

import os
import signal
import ssl
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests import ceilings, pg, procs
from workbench.client.base import no_certificates

TOKEN = "test-token-0123456789abcdef"
# Bounds of an in-process daemon's start (recovery included) and of its stop (the graceful period
# for in-flight responses, then killing what still runs).
START_S = 30
STOP_S = 60


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store",
        choices=("sqlite", "postgres", "both"),
        default="sqlite",
        help="the store engine of the tests' daemons: the embedded SQLite (default), or a "
        "PostgreSQL server the tests start (tests marked sqlite_only are then skipped), or both: "
        "each test of tests/e2e and tests/reliability runs on each engine, the rest on SQLite",
    )


#: The tests that run on each engine with `--store=both`: every one that starts a daemon for
#: what it does, end to end or through a crash.
_ON_BOTH = ("e2e", "reliability")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """With `--store=both`, the e2e and reliability tests run once per engine (`[sqlite]`, `[postgres]`)."""
    if metafunc.config.getoption("--store") != "both":
        return
    tests = Path(__file__).parent
    if "postgres_server" in metafunc.fixturenames:
        return  # its daemons share a PostgreSQL server of their own, whatever the engine
    if metafunc.definition.path.relative_to(tests).parts[0] in _ON_BOTH:
        metafunc.parametrize("store_engine", ["sqlite", "postgres"], indirect=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[pg.PostgresServer]:
    """A real PostgreSQL server for the session (started on first use, removed at the end)."""
    with pg.running_server() as server:
        yield server


@pytest.fixture(autouse=True)
def store_engine(request: pytest.FixtureRequest) -> Iterator[str]:
    """The tests' daemons use the engine `--store` names (their store URL comes from `pg`)."""
    engine: str = getattr(request, "param", None) or request.config.getoption("--store")
    if engine == "both":  # a test that runs on SQLite only (not under tests/e2e or reliability)
        engine = "sqlite"
    if engine == "postgres":
        if request.node.get_closest_marker("sqlite_only") is not None:
            pytest.skip("needs the SQLite store (its file, or its disk)")
        pg.current = request.getfixturevalue("postgres_server")
    try:
        yield engine
    finally:
        pg.current = None


@pytest.hookimpl(trylast=True)  # after pytest-trio's trio_mode has marked the async tests
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every trio test runs under tests/ceilings.py's watch (Hypothesis ones excepted)."""
    for item in items:
        marker = item.get_closest_marker("trio")
        if marker is None or hasattr(getattr(item, "obj", None), "hypothesis"):
            continue
        runner = marker.kwargs.get("run", trio.run)
        item.add_marker(pytest.mark.trio(run=partial(ceilings.run, item, runner)), append=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Iterator[None]:
    """Note the item's ceiling for tests/ceilings.py; pytest-timeout then sets its alarm as usual,
    and ceilings.guard_alarm keeps it out of the watch."""
    item.stash[ceilings.CEILING] = settings.timeout
    yield
    ceilings.guard_alarm()


@dataclass
class DaemonHandle:
    """A running in-process daemon, as a test sees it."""

    url: str
    data_dir: Path
    client: httpx.AsyncClient
    shutdown: trio.Event
    daemon: Any
    settings: Any
    extra: dict[str, Any] = field(default_factory=dict)

    async def start(self, command: str, **body: Any) -> dict[str, Any]:
        """Start a bash execution in the background and return its record."""
        response = await self.client.post(
            "/v1/executions/workbench_bash", json={"command": command, "background": True, **body}
        )
        assert response.status_code == 202, response.text
        record: dict[str, Any] = response.json()
        return record

    async def run(self, command: str, **body: Any) -> dict[str, Any]:
        """Run a bash execution in the foreground and return its (terminal) record."""
        response = await self.client.post(
            "/v1/executions/workbench_bash", json={"command": command, "waitTimeoutMs": 60_000, **body}
        )
        assert response.status_code == 201, response.text
        record: dict[str, Any] = response.json()
        return record

    async def wait(self, execution_id: str, wait_ms: int = 60_000) -> dict[str, Any]:
        response = await self.client.post(
            f"/v1/executions/{execution_id}/wait", json={"waitTimeoutMs": wait_ms}
        )
        assert response.status_code == 200, response.text
        record: dict[str, Any] = response.json()["execution"]
        return record

    async def events(self, execution_id: str, after: int = 0) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while True:
            response = await self.client.get(f"/v1/executions/{execution_id}/events", params={"after": after})
            assert response.status_code == 200, response.text
            page = response.json()
            out.extend(page["events"])
            if page["nextAfter"] == after:
                return out
            after = page["nextAfter"]


def daemon_settings(data_dir: Path, **overrides: Any) -> Any:
    from workbench.core.settings import Settings

    values: dict[str, Any] = {"data_dir": data_dir, "bind": "127.0.0.1:0", "token": TOKEN}
    if pg.current is not None:
        values["store_url"] = pg.current.url_for(data_dir)
    values.update(overrides)
    return Settings.load(environ={}, **values)


@pytest.fixture
async def make_daemon(tmp_path: Path) -> AsyncIterator[Any]:
    """A factory of in-process daemons (real hypercorn on 127.0.0.1:0), stopped at teardown."""
    from api.serve import serve

    handles: list[DaemonHandle] = []
    stopped: list[trio.Event] = []

    async def serving(settings: Any, shutdown: trio.Event, done: trio.Event, *, task_status: Any) -> None:
        try:
            await serve(settings, shutdown=shutdown, task_status=task_status)
        finally:
            done.set()

    async with trio.open_nursery() as nursery:

        async def make(data_dir: Path | None = None, **overrides: Any) -> DaemonHandle:
            settings = daemon_settings(data_dir or tmp_path / "data", **overrides)
            shutdown, done = trio.Event(), trio.Event()
            with ceilings.within(START_S, f"the daemon on {settings.data_dir} to accept requests"):
                daemon, binds = await nursery.start(serving, settings, shutdown, done)
            stopped.append(done)
            url = next(b for b in binds if b.startswith(("http://", "https://")))
            verify: Any = no_certificates()  # over plain HTTP: no certificate store read (~30 ms)
            if settings.tls and settings.tls_ca is not None:  # a test's own CA signed the certificate
                verify = ssl.create_default_context(cafile=str(settings.tls_ca))
            client = httpx.AsyncClient(
                base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120, verify=verify
            )
            handle = DaemonHandle(url, settings.data_dir, client, shutdown, daemon, settings)
            handles.append(handle)
            return handle

        yield make
        for handle in handles:
            await handle.client.aclose()
            handle.shutdown.set()
        with ceilings.within(STOP_S, "the test's daemons to stop once told to"):
            for done in stopped:
                await done.wait()


@pytest.fixture
async def wb(make_daemon: Any) -> DaemonHandle:
    """One daemon with default settings."""
    handle: DaemonHandle = await make_daemon()
    return handle


@pytest.fixture(autouse=True)
def no_leftover_processes(tmp_path: Path) -> Iterator[None]:
    """Every test leaves no process behind: no execution tree and no supervisor of its data dirs."""
    before = procs.workbench_processes(tmp_path)
    yield
    leftover = [p for p in procs.workbench_processes(tmp_path) if p not in before]
    if leftover:
        described = procs.describe(leftover)
        for pid in leftover:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pytest.fail(f"the test left processes alive: {described}")
