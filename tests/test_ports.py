"""tests/ports.py: a port named before its server listens is one the kernel does not hand out."""

from __future__ import annotations

import socket

from tests.ports import ephemeral_range, free_port


def test_a_free_port_is_outside_the_ephemeral_range_and_free() -> None:
    low, high = ephemeral_range()
    assert 0 < low <= high < 65536
    ports = {free_port() for _ in range(20)}
    assert all(not low <= port <= high for port in ports), (ports, low, high)
    assert len(ports) > 1  # drawn at random: two workers do not take the same one in turn
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports.pop()))  # free: nothing listens there
