"""`format_time`: RFC 3339 UTC with milliseconds, the same text as datetime's for any time."""

from __future__ import annotations

import datetime as dt

import pytest

from workbench.core.records import format_time


def _by_datetime(ms: int) -> str:
    stamp = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


@pytest.mark.parametrize(
    "ms",
    [
        0,
        1,
        999,
        1000,
        -1,  # a millisecond before the epoch: 1969-12-31T23:59:59.999Z
        -1000,
        -1001,
        951_782_400_000,  # 2000-02-29 (a leap day)
        1_796_083_200_123,  # 2026-12-01T00:00:00.123Z
        1_798_761_599_999,  # the last millisecond of 2026
        253_402_300_799_999,  # the last of year 9999
    ],
)
def test_a_time_is_formatted_as_datetime_formats_it(ms: int) -> None:
    assert format_time(ms) == _by_datetime(ms)


def test_times_within_one_second_differ_in_their_milliseconds_only() -> None:
    base = 1_796_083_200_000
    texts = [format_time(base + m) for m in range(0, 1000, 7)]
    assert all(t is not None and t.startswith("2026-12-01T00:00:00.") for t in texts)
    assert [t[-4:-1] for t in texts if t] == [f"{m:03d}" for m in range(0, 1000, 7)]
    assert format_time(base + 1000) == "2026-12-01T00:00:01.000Z"


def test_no_time_is_none() -> None:
    assert format_time(None) is None
