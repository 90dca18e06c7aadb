"""HTTPS: a daemon with `WORKBENCH_TLS_CERT`/`WORKBENCH_TLS_KEY` serves TLS only (its TCP port),
the Python client and the CLI reach it trusting a given CA (`WORKBENCH_TLS_CA`), and a
non-loopback bind needs TLS or an explicit `--allow-remote`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from tests import ceilings
from tests.conftest import TOKEN, DaemonHandle
from tests.tls import Certs, make_certs
from workbench.client import AsyncClient
from workbench.core.settings import Settings
from workbench.wire.errors import ConfigError, Unavailable

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    return make_certs(tmp_path / "certs")


async def tls_daemon(make_daemon: Any, certs: Certs, **overrides: Any) -> DaemonHandle:
    handle: DaemonHandle = await make_daemon(
        tls_cert=certs.cert, tls_key=certs.key, tls_ca=certs.ca, **overrides
    )
    return handle


async def test_the_client_the_cli_healthz_and_sse_over_https(
    make_daemon: Any, certs: Certs, tmp_path: Path
) -> None:
    sock = tmp_path / "wb.sock"
    wb = await tls_daemon(make_daemon, certs, unix_socket=sock)
    assert wb.url.startswith("https://127.0.0.1:")
    health = await wb.client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    # The Unix socket (0600, this user only) stays plain HTTP.
    async with AsyncClient(f"unix://{sock}", TOKEN) as local:
        assert (await local.health()).status == "ok"

    async with AsyncClient(wb.url, TOKEN, ca_file=str(certs.ca)) as client:
        done = await client.run_bash("echo over-tls")
        assert done.status == "completed" and await client.output(done) == b"over-tls\n"
        started = await client.run_bash("echo one; sleep 0.2; echo two", background=True)
        seen = [e async for e in client.events(started)]
        deltas = "".join(getattr(e, "output_delta", None) or "" for e in seen)
        assert deltas == "one\ntwo\n" and seen[-1].event_type == "status"

    # Not trusted without the CA; plain HTTP on the TLS port gets no answer.
    async with AsyncClient(wb.url, TOKEN) as untrusting:
        with pytest.raises(Unavailable, match=r"CERTIFICATE_VERIFY_FAILED.*WORKBENCH_TLS_CA"):
            await untrusting.health()
    with pytest.raises(httpx.HTTPError):
        async with httpx.AsyncClient(timeout=10) as plain:
            await plain.get(wb.url.replace("https://", "http://") + "/healthz")

    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(
        WORKBENCH_URL=wb.url, WORKBENCH_TOKEN=TOKEN, WORKBENCH_DATA_DIR=str(wb.data_dir.parent / "cli")
    )
    argv = [sys.executable, "-m", "workbench", "run", "--", "echo", "from-the-cli"]
    with ceilings.within(60, "the CLI over TLS"):
        trusted = await trio.run_process(
            argv,
            env={**env, "WORKBENCH_TLS_CA": str(certs.ca)},
            cwd=REPO,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        untrusted = await trio.run_process(
            argv, env=env, cwd=REPO, capture_stdout=True, capture_stderr=True, check=False
        )
    assert trusted.returncode == 0 and trusted.stdout == b"from-the-cli\n", trusted.stderr
    assert untrusted.returncode != 0 and b"WORKBENCH_TLS_CA" in untrusted.stderr, untrusted.stderr


async def test_a_non_loopback_bind_needs_tls_or_allow_remote(make_daemon: Any, certs: Certs) -> None:
    with pytest.raises(ConfigError, match="no TLS") as refused:
        Settings.load(environ={"WORKBENCH_BIND": "0.0.0.0:8787"})
    assert "--allow-remote" in refused.value.message and "WORKBENCH_TLS_CERT" in refused.value.message
    tls = {"WORKBENCH_TLS_CERT": str(certs.cert), "WORKBENCH_TLS_KEY": str(certs.key)}
    assert Settings.load(environ={"WORKBENCH_BIND": "0.0.0.0:8787", **tls}).tls
    told = Settings.load(environ={"WORKBENCH_BIND": "0.0.0.0:8787", "WORKBENCH_ALLOW_REMOTE": "1"})
    assert told.allow_remote and not told.tls
    for half in ({"WORKBENCH_TLS_CERT": str(certs.cert)}, {"WORKBENCH_TLS_KEY": str(certs.key)}):
        with pytest.raises(ConfigError, match="give both or neither"):
            Settings.load(environ=half)
    with pytest.raises(ConfigError, match=r"WORKBENCH_TLS_CA: .* is not a file"):
        Settings.load(environ={"WORKBENCH_TLS_CA": str(certs.ca) + ".missing"})

    wb = await tls_daemon(make_daemon, certs, bind="0.0.0.0:0")
    port = wb.url.rpartition(":")[2]
    health = await wb.client.get(f"https://127.0.0.1:{port}/healthz")
    assert health.status_code == 200
