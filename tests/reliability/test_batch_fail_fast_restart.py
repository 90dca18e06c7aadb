"""Promise 6 for `failFast`: a daemon killed while its batch stops its items starts none of them
again once restarted."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import DaemonProcess

Factory = Any


# Its 999 items are cancelled after the restart: up to its wait's 100 s on a machine busy with
# the whole suite, more than the default ceiling leaves.
@pytest.mark.timeout(180)
def test_a_fail_fast_batch_killed_as_an_item_fails_starts_no_other_after_the_restart(
    daemon_process: Factory, tmp_path: Path
) -> None:
    d: DaemonProcess = daemon_process()
    d.start()
    failing = tmp_path / "failing"
    items: list[dict[str, Any]] = [
        {"kind": "workbench_bash", "command": f"sleep 0.5; touch {failing}; exit 3"}
    ]
    items += [{"kind": "workbench_bash", "command": f"touch {tmp_path / f'ran-{i}'}"} for i in range(1, 1000)]
    body = {"items": items, "concurrency": 1, "failFast": True, "background": True}
    response = d.client.post("/v1/executions/batch", json=body)
    assert response.status_code == 202, response.text
    batch = response.json()
    deadline = time.monotonic() + 30
    while not failing.exists():
        assert time.monotonic() < deadline
        time.sleep(0.001)
    time.sleep(0.05)  # the daemon learns of the failure, and is killed while it cancels the rest
    d.kill9()
    d.start()
    # Its 999 items are cancelled one by one after the restart: a few seconds here, and once
    # more than a minute on a machine busy with the whole suite.
    final = d.wait(batch["executionId"], wait_ms=100_000)
    assert sorted(p.name for p in tmp_path.glob("ran-*")) == []
    if final["status"] != "failed":
        counts = Counter(i["status"] for i in final.get("items") or [])
        raise AssertionError(f"the batch is {final['status']} ({counts}); {d.log_text()[-3000:]}")
    assert final["error"]["code"] == "fail_fast", final
    assert [i["status"] for i in final["items"]] == ["failed"] + ["cancelled"] * 999
