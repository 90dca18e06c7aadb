"""`workbench serve` refuses at start, with one line and exit status 2, a setting it could only
fail on later: a time or size past what the store and dates hold, a URL with no host. A refused
start makes nothing: no data dir, no token."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from tests import ceilings
from tests.cli.test_serve import SERVE, clean_env

DAYS_100_YEARS = "longer than 100 years (36500d), the longest duration"
MS_100_YEARS = "more than 3153600000000 (100 years), the most it may be"
BYTES_1_PIB = "more than 1125899906842624 (1 PiB), the most it may be"


async def refused_start(tmp_path: Path, **variables: str) -> str:
    """Run `workbench serve` with `variables`: its one line, once it is refused (exit status 2)."""
    data_dir = tmp_path / "data"
    with ceilings.within(60, "`workbench serve` to refuse its settings"):
        done = await trio.run_process(
            [*SERVE, "--bind", "127.0.0.1:0", "--data-dir", str(data_dir)],
            env=clean_env(tmp_path, **variables),
            check=False,
            capture_stderr=True,
        )
    text = done.stderr.decode()
    assert done.returncode == 2, text
    assert text.count("\n") == 1 and "Traceback" not in text, text
    assert not data_dir.exists(), "a refused start makes nothing"
    return text


@pytest.mark.parametrize(
    ("name", "raw", "reason"),
    [
        ("WORKBENCH_RETENTION", "999999999999d", f"'999999999999d' is {DAYS_100_YEARS}"),
        ("WORKBENCH_RETENTION", "36501d", f"'36501d' is {DAYS_100_YEARS}"),
        ("WORKBENCH_SESSION_TTL_MS", "99999999999999999999", f"99999999999999999999 is {MS_100_YEARS}"),
        ("WORKBENCH_NODE_LEASE_MS", "3153600000001", f"3153600000001 is {MS_100_YEARS}"),
        ("WORKBENCH_MAX_FILE_BYTES", "9" * 25, f"{'9' * 25} is {BYTES_1_PIB}"),
        ("WORKBENCH_WORKSPACE_QUOTA_BYTES", "9" * 25, f"{'9' * 25} is {BYTES_1_PIB}"),
        ("WORKBENCH_MIN_FREE_BYTES", "9" * 25, f"{'9' * 25} is {BYTES_1_PIB}"),
        ("WORKBENCH_EXECUTION_EVENT_OUTPUT_BUDGET_BYTES", "9" * 25, f"{'9' * 25} is {BYTES_1_PIB}"),
        ("WORKBENCH_EXECUTION_EVENT_DELTA_MAX_BYTES", "9" * 25, f"{'9' * 25} is {BYTES_1_PIB}"),
    ],
)
async def test_a_time_or_size_past_its_bound_is_refused_at_start(
    tmp_path: Path, name: str, raw: str, reason: str
) -> None:
    assert await refused_start(tmp_path, **{name: raw}) == f"workbench: bad value for {name}: {reason}\n"


@pytest.mark.parametrize("name", ["WORKBENCH_EXIT_WEBHOOK_URL", "WORKBENCH_NODE_URL"])
@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("http://", "has no host"),
        ("https://", "has no host"),
        ("http://:8080/exits", "has no host"),
        ("http://example.test:99999/", "has a port out of range (1 to 65535)"),
        ("http://example.test:port/", "has a port out of range (1 to 65535)"),
        ("https://example.test:0/", "has a port out of range (1 to 65535)"),
        ("ftp://example.test/", "is not an http(s) URL"),
    ],
)
async def test_a_url_without_a_host_or_with_a_bad_port_is_refused_at_start(
    tmp_path: Path, name: str, raw: str, reason: str
) -> None:
    line = await refused_start(tmp_path, **{name: raw})
    assert line == f"workbench: bad value for {name}: {raw!r} {reason}\n"


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("WORKBENCH_TOKENS_FILE", "tokens file {path} (WORKBENCH_TOKENS_FILE) does not exist"),
        ("WORKBENCH_IMAGES_DIR", "{path}"),
    ],
)
async def test_a_missing_tokens_file_or_images_dir_makes_no_data_dir(
    tmp_path: Path, name: str, said: str
) -> None:
    """Promise 7: a start refused for its configuration leaves no data dir, token or key behind."""
    path = tmp_path / "nonexistent"
    line = await refused_start(tmp_path, **{name: str(path)})
    assert said.format(path=path) in line
