"""Ports for servers a test must name before they listen: a service's port, a daemon that
restarts on the same port, an address nobody answers on.

The kernel hands out ports from its ephemeral range to every socket bound to port 0 (each test
daemon) and to every outgoing connection, so one taken from there by binding port 0 may be handed
out again before the test's server binds it (its `Address already in use`, a service ending
`failed`). These are drawn at random below that range instead (above it where there is no room
below), and checked free when drawn.
"""

from __future__ import annotations

import random
import socket

_RANGE_FILE = "/proc/sys/net/ipv4/ip_local_port_range"
_LOWEST = 10_000  # below it, well-known and registered ports of the machine's own services
_pick = random.SystemRandom()  # not the global generator, which tests (hypothesis) may seed


def ephemeral_range() -> tuple[int, int]:
    """The kernel's ephemeral port range (its usual one where it cannot be read)."""
    try:
        with open(_RANGE_FILE) as f:
            low, high = (int(word) for word in f.read().split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def free_port() -> int:
    """A port of 127.0.0.1 that nothing listens on now, outside the ephemeral range."""
    low, high = ephemeral_range()
    candidates = range(_LOWEST, low) if low - _LOWEST >= 1000 else range(high + 1, 65536)
    for _ in range(200):
        port = _pick.choice(candidates)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port of 127.0.0.1 in {candidates.start}-{candidates.stop - 1}")
