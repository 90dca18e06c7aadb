"""The shim's wire protocol: newline-delimited JSON objects over a Unix stream socket.

Requests (client to shim) carry an ``id`` chosen by the client and an ``op``::

    {"id": 1, "op": "hello", "protocol": 1}
        -> {"id": 1, "ok": true, "protocol": 1, "shimPid": 42, "capabilities": {...},
            "children": [KnownChild, ...]}
    {"id": 2, "op": "spawn", "spec": SpawnSpec}       -> {"id": 2, "ok": true, "child": KnownChild}
    {"id": 3, "op": "signal", "name": "ex_1", "signal": 15}             -> {"id": 3, "ok": true}
    {"id": 4, "op": "release", "name": "ex_1"}                          -> {"id": 4, "ok": true}
    {"id": 5, "op": "adopt", "info": ChildInfo}
        -> {"id": 5, "ok": true, "adopted": true, "child": KnownChild}
    {"id": 6, "op": "shutdown"}                                         -> {"id": 6, "ok": true}
    {"id": 7, "op": "input", "name": "ex_1", "data": BASE64, "eof": false}
        -> {"id": 7, "ok": true, "unread": N}     (bytes waiting for the tree to read them)
    {"id": 8, "op": "resize", "name": "ex_1", "rows": 24, "cols": 80}   -> {"id": 8, "ok": true}
    {"id": 9, "op": "claim", "name": "warm-1", "spec": SpawnSpec, "input": BASE64,
     "binds": [[PATH, READONLY], ...], "same": [PATH, ...]}
        -> {"id": 9, "ok": true, "child": KnownChild, "claimed": "warm-1"}

``claim`` renames a waiting pre-started leader (spawned with an open stdin, under a name that
begins with ``warm-``) to ``spec.name`` and sends it ``input`` then an end of file; those
still unclaimed are killed when the client leaves. One spawned with ``claimSocket`` (a
sandbox) is first given the host files ``binds`` in its mount namespace, once the paths
``same`` are checked to be what it bound at its start, and gets its stdio with ``input``
(`sandbox._warmbox`); both lists are optional (empty). Such a sandbox is claimed only once it
has sent a byte on that socket (it waits): before, the claim fails with ``not_ready`` and
changes nothing.

``signal`` takes ``"foreground": true`` to reach the foreground process group of the
execution's terminal instead of its whole tree (where it has a terminal).

A failed request is answered ``{"id": N, "ok": false, "error": {"type": T, "message": M}}``
(types: see ERROR_TYPES). The shim also pushes events, which have no id::

    {"event": "exited", "name": "ex_1", "status": ExitStatus, "empty": true}
    {"event": "empty", "name": "ex_1"}
    {"event": "refused", "error": {...}}      (then closes: it serves one client at a time)

``empty`` follows ``exited`` only when the tree outlived its leader. ``hello`` must come first;
a client that speaks another protocol version gets a ``refused`` error. Events may follow the
answer to ``hello`` at once (in the same read); its ``children`` leave out the unclaimed leaders
the shim is killing, which it forgets by itself once dead.
"""

from __future__ import annotations

import json
from typing import Any

PROTOCOL_VERSION = 1

#: A line longer than this is a protocol error (a spec with a huge env is still far below).
MAX_LINE = 16 * 1024 * 1024

#: Exit codes of the process that `python -m sandbox.shim` starts (it forks the shim proper).
EXIT_READY = 0  # the shim runs and its socket listens
EXIT_FAILED = 1  # see shim.log
EXIT_LOCKED = 3  # another shim holds the run dir's lock: connect to it

SOCKET_NAME = "shim.sock"
LOCK_NAME = "shim.lock"
PID_NAME = "shim.pid"
LOG_NAME = "shim.log"


class ProtocolError(Exception):
    """The peer sent something that is not this protocol."""


def encode(message: dict[str, Any]) -> bytes:
    """One message as a line of JSON (non-ASCII escaped, so any byte string round-trips)."""
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    """One line as a message; raises ProtocolError when it is not a JSON object."""
    try:
        message = json.loads(line)
    except ValueError as e:
        raise ProtocolError(f"not JSON: {e}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


class LineBuffer:
    """Cuts a byte stream into lines."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._unread: list[bytes] = []

    def feed(self, data: bytes | bytearray) -> list[bytes]:
        """Add received bytes; returns the complete lines (without their newline), after any
        that were put back (`unread`)."""
        self._buffer += data
        if b"\n" not in data:
            if len(self._buffer) > MAX_LINE:
                raise ProtocolError("line too long")
            return self.drain()
        *lines, rest = self._buffer.split(b"\n")
        self._buffer = bytearray(rest)
        return self.drain() + [bytes(line) for line in lines]

    def unread(self, lines: list[bytes]) -> None:
        """Put complete lines back, for whoever reads next (`drain`, or the next `feed`)."""
        self._unread = lines + self._unread

    def drain(self) -> list[bytes]:
        """The lines put back, taken."""
        taken, self._unread = self._unread, []
        return taken
