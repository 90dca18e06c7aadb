"""Pure pieces, without processes: settings, ids, progress lines, the display buffer, the slot queue."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from api.errors import json_text
from workbench.core.batches import stop_items, stopped_by_batch
from workbench.core.capture import parse_progress
from workbench.core.display import FOLLOWER_BUFFER_BYTES, DisplayFollower, DisplayHub, split_text
from workbench.core.live import Live, Slots, Stop
from workbench.core.records import execution_from_row
from workbench.core.settings import ContainmentSetting, Settings, ShutdownMode
from workbench.core.store import ExecutionRow
from workbench.wire.errors import ConfigError
from workbench.wire.ids import new_execution_id, ulid
from workbench.wire.models import EXECUTION_ID
from workbench.wire.status import ExecutionStatus


def test_settings_read_every_documented_variable(tmp_path: Path) -> None:
    env = {
        "WORKBENCH_DATA_DIR": str(tmp_path),
        "WORKBENCH_BIND": "127.0.0.1:9999",
        "WORKBENCH_TOKEN": "a-token-of-sixteen-chars",
        "WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES": "1000",
        "WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES": "100",
        "WORKBENCH_MAX_CONCURRENT_EXECUTIONS": "3",
        "WORKBENCH_MAX_QUEUED_EXECUTIONS": "4",
        "WORKBENCH_DEFAULT_TIMEOUT_MS": "5000",
        "WORKBENCH_EXIT_WEBHOOK_URL": "http://127.0.0.1:1/hook",
        "WORKBENCH_CONTAINMENT": "pgroup",
        "WORKBENCH_SHUTDOWN_MODE": "keep",
        "WORKBENCH_STORE_URL": "postgresql://db.example/workbench",
        "WORKBENCH_NODE_ID": "node-7",
        "WORKBENCH_NODE_URL": "https://node-7.example:8787",
        "WORKBENCH_NODE_LEASE_MS": "5000",
        "WORKBENCH_URL": "http://ignored-by-the-daemon",
        "HOME": "/not/a/setting",
    }
    s = Settings.load(env)
    assert (s.data_dir, s.bind, s.max_concurrent_executions, s.max_queued_executions) == (
        tmp_path,
        "127.0.0.1:9999",
        3,
        4,
    )
    assert (s.execution_event_output_budget_bytes, s.execution_event_delta_max_bytes) == (1000, 100)
    assert (s.containment, s.shutdown_mode) == (ContainmentSetting.PGROUP, ShutdownMode.KEEP)
    assert (s.store_url, s.node_id, s.node_url, s.node_lease_ms) == (
        "postgresql://db.example/workbench",
        "node-7",
        "https://node-7.example:8787",
        5000,
    )
    assert Settings.load({}, bind="127.0.0.1:1").bind == "127.0.0.1:1", "flags override variables"


def test_the_sandbox_user_is_read_and_applies_only_under_root() -> None:
    assert Settings.load({}).sandbox_user == (65534, 65534)
    assert Settings.load({"WORKBENCH_SANDBOX_UID": "1234"}).sandbox_user == (1234, 1234)
    given = Settings.load({"WORKBENCH_SANDBOX_UID": "1234:99"})
    assert given.sandbox_user == (1234, 99)
    assert given.workspace_owner == ((1234, 99) if os.geteuid() == 0 else None)
    assert given.layout.workspace_owner == given.workspace_owner
    assert Settings.load({"WORKBENCH_SANDBOX_UID": "0"}).workspace_owner is None


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"WORKBENCH_MAX_CONCURENT_EXECUTIONS": "3"}, "WORKBENCH_MAX_CONCURENT_EXECUTIONS"),
        ({"WORKBENCH_MAX_CONCURRENT_EXECUTIONS": "many"}, "WORKBENCH_MAX_CONCURRENT_EXECUTIONS"),
        ({"WORKBENCH_MAX_CONCURRENT_EXECUTIONS": "0"}, "WORKBENCH_MAX_CONCURRENT_EXECUTIONS"),
        ({"WORKBENCH_CONTAINMENT": "docker"}, "WORKBENCH_CONTAINMENT"),
        ({"WORKBENCH_SHUTDOWN_MODE": "later"}, "WORKBENCH_SHUTDOWN_MODE"),
        ({"WORKBENCH_EXIT_WEBHOOK_URL": "ftp://x"}, "WORKBENCH_EXIT_WEBHOOK_URL"),
        ({"WORKBENCH_TOKEN": "short"}, "WORKBENCH_TOKEN"),
        ({"WORKBENCH_DEFAULT_TIMEOUT_MS": "999999999999"}, "WORKBENCH_DEFAULT_TIMEOUT_MS"),
        ({"WORKBENCH_BIND": "nowhere"}, "nowhere"),
        ({"WORKBENCH_BIND": "0.0.0.0:8787"}, "--allow-remote"),
        ({"WORKBENCH_STORE_URL": "mysql://x"}, "WORKBENCH_STORE_URL"),
        ({"WORKBENCH_NODE_ID": "a/b"}, "WORKBENCH_NODE_ID"),
        ({"WORKBENCH_NODE_LEASE_MS": "100"}, "WORKBENCH_NODE_LEASE_MS"),
        ({"WORKBENCH_SANDBOX_UID": "nobody"}, "WORKBENCH_SANDBOX_UID"),
        ({"WORKBENCH_SANDBOX_UID": "-1"}, "WORKBENCH_SANDBOX_UID"),
        ({"WORKBENCH_SANDBOX_UID": "1000:"}, "WORKBENCH_SANDBOX_UID"),
        ({"WORKBENCH_MAX_CONTEXTS": "0"}, "WORKBENCH_MAX_CONTEXTS"),
    ],
)
def test_a_bad_or_unknown_setting_is_refused_by_name(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        Settings.load(env)


def test_the_live_contexts_are_bounded_by_default_and_by_the_variable() -> None:
    assert Settings.load({}).max_contexts == 64
    assert Settings.load({"WORKBENCH_MAX_CONTEXTS": "5"}).max_contexts == 5
    with pytest.raises(ConfigError, match="WORKBENCH_MAX_CONTEXTS must be at least 1"):
        Settings.load({}, max_contexts=0)


def test_a_bad_bind_variable_is_refused_even_under_the_flag() -> None:
    with pytest.raises(ConfigError, match="WORKBENCH_BIND"):
        Settings.load({"WORKBENCH_BIND": "nowhere"}, bind="127.0.0.1:1")


def test_the_known_settings_are_the_daemons_only() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.load({"WORKBENCH_NO_SUCH": "1"})
    known = caught.value.message.partition("known settings:")[2]
    assert "WORKBENCH_DATA_DIR" in known
    for client_side in ("WORKBENCH_URL", "WORKBENCH_EXECUTION_ID", "WORKBENCH_PROGRESS"):
        assert client_side not in known


def test_a_remote_bind_needs_the_explicit_flag() -> None:
    assert Settings.load({"WORKBENCH_BIND": "0.0.0.0:8787"}, allow_remote=True).bind == "0.0.0.0:8787"


def test_ids_are_well_formed_unique_and_sorted_by_creation() -> None:
    ids = [new_execution_id() for _ in range(2000)]
    assert all(EXECUTION_ID.fullmatch(i) for i in ids)
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert ulid(1000) < ulid(2000)


@pytest.mark.parametrize(
    ("line", "parsed"),
    [
        (b"3/10 building", (3, 10, "building")),
        (b"  1 / 2  ", (1, 2, None)),
        (b"0.5/1 half way", (0.5, 1, "half way")),
        (b"10/10", (10, 10, None)),
        (b"nothing", None),
        (b"1/0", None),
        (b"-1/3", None),
        (b"3/", None),
        (b"\xff/3", None),
    ],
)
def test_progress_lines(line: bytes, parsed: tuple[float, float, str | None] | None) -> None:
    assert parse_progress(line) == parsed


def test_split_text_never_cuts_a_character() -> None:
    text = "a€𝄞b" * 1000
    for limit in (4, 5, 7, 100):
        pieces = split_text(text, limit)
        assert "".join(pieces) == text
        assert all(0 < len(p.encode()) <= limit for p in pieces)
    assert split_text("", 10) == []


def test_a_slow_display_follower_drops_and_counts_instead_of_growing() -> None:
    follower = DisplayFollower()
    hub = DisplayHub({follower})
    chunk = b"x" * (FOLLOWER_BUFFER_BYTES // 4)
    for _ in range(6):
        hub.publish("stdout", chunk)
    assert follower.pending_bytes == FOLLOWER_BUFFER_BYTES
    pending, missed = follower.take()
    assert sum(len(t) for _, t in pending) == FOLLOWER_BUFFER_BYTES
    assert missed == 2 * len(chunk)
    hub.publish("stderr", "é".encode()[:1])  # half a character waits for the rest
    assert follower.take() == ([], 0)
    hub.publish("stderr", "é".encode()[1:])
    assert follower.take() == ([("stderr", "é")], 0)


def live(n: int) -> Live:
    row = ExecutionRow(
        id=f"ex_{n}",
        kind="workbench_bash",
        principal="admin",
        session_id="default",
        status=ExecutionStatus.QUEUED,
        cwd="/",
        image="host",
        created_at=0,
        deadline_at=1,
        timeout_ms=1,
        budget_bytes=1,
    )
    return Live(row.id, row, row.status)


def test_slots_grant_in_request_order_and_respect_capacity() -> None:
    slots = Slots(2)
    lives = [live(i) for i in range(5)]
    for one in lives:
        slots.request(one)
    assert [one.granted.is_set() for one in lives] == [True, True, False, False, False]
    slots.withdraw(lives[3])  # cancelled while queued
    slots.release(lives[0])
    assert [one.granted.is_set() for one in lives] == [True, True, True, False, False]
    slots.release(lives[1])
    assert lives[4].granted.is_set() and not lives[3].granted.is_set()
    assert slots.free == 0 and slots.queued == 0


def test_slots_keep_caps_and_let_the_next_that_fits_go_first() -> None:
    """One principal (or batch) at its cap waits; another's execution behind it goes first."""
    slots = Slots(3)
    slots.set_cap("principal:a", 1)
    lives = [live(i) for i in range(4)]
    for one, key in zip(lives, ("principal:a", "principal:a", "principal:b", "principal:a"), strict=True):
        one.keys = (key,)
        slots.request(one)
    assert [one.granted.is_set() for one in lives] == [True, False, True, False]
    assert slots.free == 1 and slots.queued_by["principal:a"] == 2
    assert slots.room(("principal:a",)) == 0 and slots.room(("principal:b",)) == 1
    slots.release(lives[0])
    assert [one.granted.is_set() for one in lives] == [True, True, True, False]
    slots.withdraw(lives[3])
    assert slots.queued == 0 and slots.queued_by["principal:a"] == 0


def test_slots_of_keys_alone_wait_for_their_caps_not_the_daemons() -> None:
    """A code context's cell takes a slot of its principal's cap and none of the daemon's; one
    counted while it waits for its context (`park`) is among its principal's waiting."""
    slots = Slots(1)
    slots.set_cap("principal:a", 2)
    command, *cells = [live(i) for i in range(4)]
    for one in [command, *cells]:
        one.keys = ("principal:a",)
    for one in cells:
        one.daemon_slot = False
    slots.request(command)
    slots.park(cells[0])
    assert slots.queued_by["principal:a"] == 1 and slots.queued == 1
    slots.request(cells[0])
    slots.request(cells[1])
    assert command.granted.is_set() and cells[0].granted.is_set() and not cells[1].granted.is_set()
    assert slots.free == 0 and slots.queued_for_daemon == 0 and slots.queued_by["principal:a"] == 1
    assert slots.room(("principal:a",), daemon_slot=False) == 0
    slots.release(command)  # the daemon's slot frees, the principal's cap too
    assert cells[1].granted.is_set() and slots.free == 1
    slots.park(cells[2])
    slots.withdraw(cells[2])  # cancelled while waiting for its context
    slots.release(cells[0])
    assert slots.free == 1 and slots.queued == 0 and slots.queued_by["principal:a"] == 0
    assert slots.room(("principal:a",), daemon_slot=False) == 1 and slots.room(("principal:a",)) == 1


@pytest.mark.parametrize(
    "line",
    [("9" * 5000 + "/10").encode(), ("9" * 400 + ".5/10").encode(), b"1/" + b"9" * 19, b"1e400/2"],
)
def test_progress_numbers_out_of_bounds_are_not_progress(line: bytes) -> None:
    assert parse_progress(line) is None


def test_retention_and_metrics_settings_parse_or_name_the_variable() -> None:
    from workbench.core.settings import Settings
    from workbench.wire.errors import ConfigError

    assert Settings.load(environ={"WORKBENCH_RETENTION": "7d"}).retention_ms == 7 * 24 * 3600 * 1000
    assert Settings.load(environ={"WORKBENCH_RETENTION": "90m"}).retention_ms == 90 * 60 * 1000
    assert Settings.load(environ={}).retention_ms is None
    assert Settings.load(environ={"WORKBENCH_METRICS_OPEN": "1"}).metrics_open
    for name, raw in (
        ("WORKBENCH_RETENTION", "0d"),
        ("WORKBENCH_RETENTION", "7 days"),
        ("WORKBENCH_RETENTION", "-1h"),
        ("WORKBENCH_METRICS_OPEN", "yes"),
    ):
        with pytest.raises(ConfigError, match=name):
            Settings.load(environ={name: raw})


def test_an_item_submitted_after_its_batch_stopped_its_items_is_stopped_so() -> None:
    """Recovery submits a batch before its items: a failFast batch that read its journal first
    stopped the items it had, none yet. One submitted later is stopped with its batch's reason
    and grace; one of another batch, or of a batch that goes on, is not."""
    batch = live(0)
    batch.row.kind = "batch"
    slots = Slots(2)
    stop_items(slots, {}, batch, "failFast: item ex_9 ended failed", 250)
    items = [live(1), live(2), live(3)]
    items[0].row.batch_id = batch.id
    items[1].row.batch_id = "ex_other"
    going_on = live(4)
    items[2].row.batch_id = going_on.id
    lives = {batch.id: batch, going_on.id: going_on}
    for item in items:
        stopped_by_batch(lives, item)
    assert (items[0].stop, items[0].reason, items[0].grace_ms) == (
        Stop.CANCEL,
        "failFast: item ex_9 ended failed",
        250,
    )
    assert items[0].kick.is_set()
    assert items[1].stop is None and items[2].stop is None


def test_a_stored_value_with_a_lone_surrogate_is_read_escaped() -> None:
    """A store written before cells' values were escaped holds one as a JSON escape (`\\ud800`):
    its record is read with it escaped, as a new one is kept, and can be written as JSON (it
    broke every read and listing of it)."""
    row = live(1).row
    row.result_json = '{"text/plain": "a\\ud800 and \\udcff"}'
    record = execution_from_row(row, [])
    assert record.result == {"text/plain": "a\\ud800 and \\udcff"}
    assert json.loads(json_text(record))["result"] == {"text/plain": "a\\ud800 and \\udcff"}
    row.result_json = '{"text/plain": "\\\\ud800 kept as written, \\ud83d\\ude00"}'
    assert execution_from_row(row, []).result == {"text/plain": "\\ud800 kept as written, \U0001f600"}
