"""`api.errors.json_text`: wire models written by pydantic's encoder say exactly what
`model_dump` and `json.dumps` said, alone, in a dict, and in a list."""

from __future__ import annotations

import json
from typing import Any

from api.errors import json_text
from workbench.wire.models import Execution

TRICKY = 'quote " backslash \\ nul \x00 unit \x1f tab \t line\n é ✓ 𝄞 \u2028 \ufffd end'

RECORD: dict[str, Any] = {
    "executionId": "ex_01M91KSRT4737PZWMK2GE6CYST",
    "executionKind": "workbench_bash",
    "sessionId": "default",
    "status": "running",
    "command": TRICKY,
    "cwd": "/work/é",
    "image": "host",
    "env": {"A": "1", "B": TRICKY},
    "secretEnvNames": ["S"],
    "metadata": {"nested": {"list": [1, 2.5, None, True, TRICKY]}},
    "rowVersion": 4,
    "createdAt": "2026-12-04T22:46:33.540Z",
    "startedAt": "2026-12-04T22:46:33.561Z",
    "deadlineAt": "2026-12-04T23:46:33.540Z",
    "timeoutMs": 3600000,
    "capabilities": {
        "cancellable": "hard",
        "streamingSupport": True,
        "backgroundSupport": True,
        "detachable": True,
        "interactive": False,
    },
    "output": {
        "stdoutBytes": 1988895,
        "stderrBytes": 0,
        "eventBytes": 1988895,
        "budgetBytes": 5242880,
        "truncated": False,
    },
    "artifacts": [],
    "lastSequence": 33,
    "detached": False,
    "containment": "cgroup",
    "preview": {"stdout": "".join(f"{i}\n" for i in range(3000)), "stderr": TRICKY},
    "service": False,
    "nodeId": "vm",
}


def _old(body: Any) -> Any:
    """What the routes wrote before: every model through `wire()`, then `json.dumps`."""
    if isinstance(body, Execution):
        return body.wire()
    if isinstance(body, dict):
        return {k: _old(v) for k, v in body.items()}
    if isinstance(body, list):
        return [_old(v) for v in body]
    return body


def test_a_record_alone_in_a_dict_and_in_a_list_says_what_it_said() -> None:
    record = Execution.model_validate(RECORD)
    for body in (
        record,
        {"execution": record, "waitTimedOut": False},
        {"executions": [record, record], "nextCursor": None},
        {"executions": [], "nextCursor": "c"},
        {"plain": {"a": [1, "x"]}, "text": TRICKY},
        {1: [record], "list": [1, None]},
    ):
        text = json_text(body)
        assert json.loads(text) == json.loads(json.dumps(_old(body), ensure_ascii=False))


def test_text_stays_text_and_non_ascii_is_written_as_itself() -> None:
    record = Execution.model_validate(RECORD)
    assert json.loads(json_text(record))["command"] == TRICKY
    assert "é ✓ 𝄞" in json_text(record)
    assert json_text({"a": "ready text is not taken as JSON"}) == '{"a": "ready text is not taken as JSON"}'
