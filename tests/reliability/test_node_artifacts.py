"""Artifacts stay on their node: another node fetches them from it (`Range` included), with the
nodes' shared `WORKBENCH_NODE_TOKEN`, and answers `503 node_unavailable` while it is down.

Real `workbench serve` processes on one real PostgreSQL server, each with its own data dir.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests import pg
from tests.conftest import TOKEN
from tests.reliability.conftest import DaemonProcess
from tests.reliability.test_nodes import Factory
from tests.tls import Certs, make_certs

NODE_TOKEN = "node-secret-0123456789abcdef"


def cluster(
    daemon_process: Factory,
    server: pg.PostgresServer,
    tmp_path: Path,
    tokens: dict[str, str | None],
    certs: Certs | None = None,
) -> dict[str, DaemonProcess]:
    """One node per name of `tokens`, each with its `WORKBENCH_NODE_TOKEN` (None: none); HTTPS
    with `certs`."""
    url = server.url_for(tmp_path / "cluster")
    made = {}
    for name, token in tokens.items():
        node = daemon_process(tmp_path / f"node-{name}", WORKBENCH_STORE_URL=url, WORKBENCH_NODE_ID=name)
        if certs is not None:
            node.use_tls(certs.cert, certs.key, certs.ca)
        node.env["WORKBENCH_NODE_URL"] = node.url
        if token is not None:
            node.env["WORKBENCH_NODE_TOKEN"] = token
        made[name] = node
    for node in made.values():
        node.start(wait=False)
    for node in made.values():
        node.wait_healthy()
    return made


def error_of(response: httpx.Response) -> tuple[int, str, str]:
    error = response.json()["error"]
    return response.status_code, error["code"], error["message"]


@pytest.mark.timeout(120)
def test_an_artifact_of_node_a_is_read_through_the_others(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """Whole and by Range through B, as A serves it; C (another token) and D (none) say why they
    cannot; a node call needs the nodes' token; A stopped, B answers 503 node_unavailable."""
    n = cluster(
        daemon_process,
        postgres_server,
        tmp_path,
        {"a": NODE_TOKEN, "b": NODE_TOKEN, "c": "another-secret-0123456789", "d": None},
    )
    a, b, c, d = n["a"], n["b"], n["c"], n["d"]
    # Over a megabyte (many chunks of the owning node's answer, streamed through B), and not
    # UTF-8: the artifact is kept.
    record = a.start_bash("seq 1 200000; printf '\\377'", node="a")
    eid = record["executionId"]
    final = b.wait(eid)
    assert final["status"] == "completed" and final["nodeId"] == "a"
    path = f"/v1/executions/{eid}/artifacts/stdout"
    local = a.client.get(path)
    assert (
        local.status_code == 200
        and local.content == b"".join(b"%d\n" % i for i in range(1, 200001)) + b"\xff"
    )

    whole = b.client.get(path)
    assert whole.status_code == 200 and whole.content == local.content
    for header in ("content-type", "content-length", "accept-ranges", "content-disposition"):
        assert whole.headers[header] == local.headers[header], header
    head = b.client.head(path)
    assert head.status_code == 200 and head.headers["content-length"] == local.headers["content-length"]

    for asked in ("bytes=10-19", "bytes=-7", "bytes=1000000-"):
        mine, theirs = (
            a.client.get(path, headers={"Range": asked}),
            b.client.get(path, headers={"Range": asked}),
        )
        assert theirs.status_code == mine.status_code == 206, asked
        assert (
            theirs.content == mine.content
            and theirs.headers["content-range"] == mine.headers["content-range"]
        )
    refused = b.client.get(path, headers={"Range": "bytes=99999999-"})
    assert refused.status_code == 416 and refused.headers["content-range"] == f"bytes */{len(local.content)}"
    assert refused.json()["error"]["code"] == "range_not_satisfiable"
    assert b.client.get(f"/v1/executions/{eid}/artifacts/nothing").status_code == 404
    assert b.client.get(path, headers={"Authorization": "Bearer wrong-token-000000"}).status_code == 401

    status, code, message = error_of(c.client.get(path))
    assert (status, code) == (503, "node_unavailable") and "WORKBENCH_NODE_TOKEN" in message, message
    status, code, message = error_of(d.client.get(path))
    assert (status, code) == (503, "node_unavailable") and "WORKBENCH_NODE_TOKEN is not set" in message

    # The node route itself: only the nodes' token opens it, and only for this node's executions.
    node_path = f"/v1/nodes/a/artifacts/{eid}/stdout"
    with httpx.Client(base_url=a.url, timeout=30) as bare:
        for headers in (
            {},
            {"Authorization": f"Bearer {TOKEN}"},
            {"Authorization": "Bearer not-it-0123456789"},
        ):
            assert error_of(bare.get(node_path, headers=headers))[:2] == (401, "unauthorized"), headers
        good = {"Authorization": f"Bearer {NODE_TOKEN}"}
        assert bare.get(node_path, headers=good).content == local.content
        assert bare.get(f"/v1/nodes/b/artifacts/{eid}/stdout", headers=good).status_code == 404
        # B ran nothing of it: its own node route does not serve A's execution.
        assert httpx.get(f"{b.url}/v1/nodes/b/artifacts/{eid}/stdout", headers=good).status_code == 404
        status, code, message = error_of(
            httpx.get(f"{d.url}/v1/nodes/d/artifacts/{eid}/stdout", headers=good)
        )
        assert (status, code) == (401, "unauthorized") and "WORKBENCH_NODE_TOKEN is not set" in message

    assert a.stop() == 0
    status, code, message = error_of(b.client.get(path))
    assert (status, code) == (503, "node_unavailable") and "'a'" in message, message
    assert b.client.get(f"/v1/executions/{eid}").json()["nodeId"] == "a", "the record still reads"


@pytest.mark.timeout(120)
def test_nodes_fetch_artifacts_over_https_verified_against_their_ca(
    daemon_process: Factory, postgres_server: pg.PostgresServer, tmp_path: Path
) -> None:
    """With TLS, the node URLs are https:// and a node verifies the other against WORKBENCH_TLS_CA."""
    certs = make_certs(tmp_path / "certs")
    n = cluster(daemon_process, postgres_server, tmp_path, {"a": NODE_TOKEN, "b": NODE_TOKEN}, certs)
    record = n["a"].start_bash("printf 'secret\\377'", node="a")
    assert n["b"].wait(record["executionId"])["nodeId"] == "a"
    path = f"/v1/executions/{record['executionId']}/artifacts/stdout"
    assert n["b"].client.get(path).content == b"secret\xff"
    ranged = n["b"].client.get(path, headers={"Range": "bytes=2-3"})
    assert ranged.status_code == 206 and ranged.content == b"cr"
