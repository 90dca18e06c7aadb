"""The shim process: ``python -m sandbox.shim RUN_DIR [--idle-linger SECONDS]``.

It is started by the daemon-side client (`sandbox.open_supervisor`), never by hand. The
process the client starts takes RUN_DIR/shim.lock, binds RUN_DIR/shim.sock, probes the machine,
then forks the long-lived shim, writes its pid to RUN_DIR/shim.pid and exits with
EXIT_READY, so that the client knows the socket is listening and never has to reap the shim.
EXIT_LOCKED means another shim holds the lock (connect to it); anything else is a failure
explained in RUN_DIR/shim.log.

The shim is the parent and child subreaper of every execution, and outlives a daemon crash.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import resource
import socket
import sys

from ._detect import detect
from ._linux import set_child_subreaper
from ._protocol import EXIT_FAILED, EXIT_LOCKED, EXIT_READY, LOCK_NAME, PID_NAME, SOCKET_NAME
from ._server import Shim


def _listen(run_dir: str) -> socket.socket:
    """Bind RUN_DIR/shim.sock, mode 0600 from the start (never connectable by others)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(run_dir, SOCKET_NAME))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_umask = os.umask(0o177)
    # Bound relative to RUN_DIR: a socket address holds at most 107 bytes, a path need not.
    os.chdir(run_dir)
    try:
        listener.bind(SOCKET_NAME)
    finally:
        os.chdir("/")
        os.umask(old_umask)
    listener.listen(512)
    return listener


def _write_pid(run_dir: str, pid: int) -> None:
    path = os.path.join(run_dir, PID_NAME)
    with open(f"{path}.tmp", "w") as f:
        f.write(f"{pid}\n")
    os.rename(f"{path}.tmp", path)


def main(argv: list[str] | None = None) -> int:
    """Run the launcher, then (in its forked child) the shim; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m sandbox.shim")
    parser.add_argument("run_dir")
    parser.add_argument(
        "--idle-linger",
        type=float,
        default=30.0,
        help="seconds to stay once no client is connected and nothing is alive",
    )
    args = parser.parse_args(argv)
    run_dir = os.path.abspath(args.run_dir)
    os.makedirs(run_dir, mode=0o700, exist_ok=True)
    lock = os.open(os.path.join(run_dir, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print(f"shim: another shim holds {run_dir}/{LOCK_NAME}", file=sys.stderr)
        return EXIT_LOCKED
    try:
        listener = _listen(run_dir)
        caps = detect()
        # pidfds of swept processes may be many: use all the fds we are allowed.
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except OSError as e:
        print(f"shim: cannot start in {run_dir}: {e}", file=sys.stderr)
        return EXIT_FAILED
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        # The lock's open file description is shared with the child, which keeps it held.
        _write_pid(run_dir, pid)
        os._exit(EXIT_READY)
    set_child_subreaper()
    Shim(run_dir, listener, caps, args.idle_linger).run()
    return EXIT_READY


if __name__ == "__main__":
    sys.exit(main())
