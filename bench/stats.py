"""Percentiles and the A-B-A-B alternation every figure is measured with."""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence

Measure = Callable[[], Awaitable[float]]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between the closest ranks."""
    if not values:
        raise ValueError("no samples")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


async def alternate(rounds: int, *measures: Measure, warmup: int = 0) -> list[list[float]]:
    """Run the measures in turn, A B A B ... (`rounds` each after `warmup` unrecorded ones)."""
    samples: list[list[float]] = [[] for _ in measures]
    for i in range(warmup + rounds):
        for j, measure in enumerate(measures):
            value = await measure()
            if i >= warmup:
                samples[j].append(value)
    return samples


def timed_sync(fn: Callable[[], object]) -> Measure:
    """A measure of a blocking call (it runs on the event loop thread: nothing else runs then)."""

    async def measure() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return measure
