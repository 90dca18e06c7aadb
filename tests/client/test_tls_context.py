"""What a client verifies its daemon's certificate with: nothing loaded where there is no TLS."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from tests import tls
from workbench import AsyncClient, Client


@pytest.mark.parametrize("url", ["http://127.0.0.1:1", "unix:///run/workbench.sock"])
def test_a_client_of_a_daemon_without_tls_loads_no_certificate_store(url: str) -> None:
    with Client(url, token="t") as client:
        context = client._verify()
    assert isinstance(context, ssl.SSLContext)
    assert context.cert_store_stats()["x509_ca"] == 0  # the system's store was not read
    # It trusts nothing: a TLS connection made through it could only fail.
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname


async def test_the_async_client_shares_the_same_context() -> None:
    async with AsyncClient("http://127.0.0.1:1", token="t") as client:
        context = client._verify()
    with Client("http://127.0.0.1:1", token="t") as other:
        assert other._verify() is context


def test_an_https_daemon_is_verified_with_the_given_ca_else_the_systems_store(tmp_path: Path) -> None:
    certs = tls.make_certs(tmp_path)
    with Client("https://127.0.0.1:1", token="t", ca_file=str(certs.ca)) as client:
        context = client._verify()
    assert isinstance(context, ssl.SSLContext)
    assert context.cert_store_stats()["x509_ca"] == 1
    with Client("https://127.0.0.1:1", token="t") as client:
        assert client._verify() is True  # httpx's default: the system's store
