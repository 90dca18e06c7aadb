"""`Slots` grants exactly as a walk of every waiting execution in request order does (the way it
granted before it kept them in groups), over random requests, parks, withdrawals, releases, caps
and holds."""

from __future__ import annotations

import collections
import random

import pytest

from tests.core.test_pieces import live
from workbench.core.live import Live, Slots
from workbench.core.store import ExecutionRow


class Walk:
    """The reference: one list in request order, walked whole at every grant."""

    def __init__(self, capacity: int) -> None:
        self.free = capacity
        self.waiting: list[Live] = []
        self.caps: dict[str, int] = {}
        self.used: collections.Counter[str] = collections.Counter()
        self.held: set[str] = set()
        self.granted: list[str] = []

    def fits(self, one: Live) -> bool:
        if one.daemon_slot and self.free <= 0:
            return False
        return all(self.used[k] < self.caps[k] for k in one.keys if k in self.caps)

    def grant(self) -> None:
        for one in list(self.waiting):
            if self.fits(one) and one.id not in self.held:
                self.waiting.remove(one)
                self.free -= one.daemon_slot
                for key in one.keys:
                    self.used[key] += 1
                self.granted.append(one.id)

    def release(self, one: Live) -> None:
        self.free += one.daemon_slot
        for key in one.keys:
            self.used[key] -= 1
        self.grant()


KEYS = [("principal:a",), ("principal:b",), ("principal:a", "batch:x"), ("principal:b", "batch:y")]


@pytest.mark.parametrize("seed", range(40))
def test_grants_as_a_walk_of_every_waiting_one_in_order(seed: int) -> None:
    rng = random.Random(seed)
    capacity = rng.randint(1, 6)
    slots, walk = Slots(capacity), Walk(capacity)
    held: set[str] = set()

    def holds(row: ExecutionRow) -> bool:
        return row.id in held

    slots.held, slots.holding = holds, lambda: bool(held)
    granted: list[str] = []
    running: list[Live] = []
    waiting: list[Live] = []
    for n in range(300):
        action = rng.random()
        if action < 0.45:
            one = live(n)
            one.keys = rng.choice(KEYS)
            one.daemon_slot = rng.random() < 0.8
            if rng.random() < 0.2:
                slots.park(one)
            slots.request(one)
            walk.waiting.append(one)
            walk.grant()
            waiting.append(one)
        elif action < 0.75 and running:
            one = running.pop(rng.randrange(len(running)))
            slots.release(one)
            walk.release(one)
        elif action < 0.85 and (waiting or running):
            # Given up while waiting (cancelled while queued), or after its grant (its slot back).
            pool = waiting if waiting and (not running or rng.random() < 0.5) else running
            one = pool.pop(rng.randrange(len(pool)))
            slots.withdraw(one)
            if one in walk.waiting:
                walk.waiting.remove(one)
            else:
                walk.release(one)
        elif action < 0.92:
            key, cap = rng.choice(["principal:a", "principal:b", "batch:x", "batch:y"]), rng.randint(0, 4)
            walk.caps[key] = cap
            walk.grant()
            slots.set_cap(key, cap)
        elif waiting:
            one = rng.choice(waiting)
            (held.discard if one.id in held else held.add)(one.id)
            walk.held = set(held)
            walk.grant()
            slots.regrant()
        for one in list(waiting):
            if one.granted.is_set():
                waiting.remove(one)
                running.append(one)
                granted.append(one.id)
        assert sorted(granted) == sorted(walk.granted), n
        assert slots.free == walk.free and +slots.used == +walk.used, n
        assert slots.queued == len(walk.waiting), n
        assert slots.keyed_only == sum(1 for one in walk.waiting if not one.daemon_slot), n
        assert slots.queued_by == collections.Counter(k for one in walk.waiting for k in one.keys), n
    assert granted, "nothing was ever granted: the test says nothing"
