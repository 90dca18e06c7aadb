"""The daemon's Unix socket (`--unix-socket PATH`): made only where nothing of another's is.

A socket another process listens on, a file or a directory at PATH is never removed: the start is
refused with one line. A socket file nothing listens on (its daemon was killed) is replaced. At
the stop, the daemon removes the socket only while PATH is still the one it made.
"""

from __future__ import annotations

import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from workbench.wire.errors import ConfigError

#: How long a connect to a socket found at PATH may take to tell whether something listens.
_PROBE_S = 2.0


@dataclass(frozen=True)
class UnixListener:
    """A bound Unix socket (0600, not yet listening) and the file it made."""

    sock: socket.socket
    path: Path
    device: int
    inode: int

    def remove(self) -> None:
        """Remove the socket file if it is still the one made here (not another daemon's since)."""
        try:
            found = os.lstat(self.path)
        except OSError:
            return
        if (found.st_dev, found.st_ino) == (self.device, self.inode):
            self.path.unlink(missing_ok=True)


def bind_unix(path: Path) -> UnixListener:
    """Bind a Unix socket at `path` (0600), replacing only a stale socket file.

    Raises:
        ConfigError: one line: something that is not a socket is there, another process listens
            there, or the socket cannot be made.
    """
    _clear(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # the Unix socket is 0600
    try:
        sock.bind(str(path))
        made = os.lstat(path)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on unix:{path}: {exc.strerror or exc}") from None
    finally:
        os.umask(old)
    sock.setblocking(False)
    return UnixListener(sock, path, made.st_dev, made.st_ino)


def _clear(path: Path) -> None:
    """Remove a stale socket file at `path`; refuse anything else that is there."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"--unix-socket {path}: {exc.strerror or exc}") from None
    if not stat.S_ISSOCK(found.st_mode):
        what = "a directory" if stat.S_ISDIR(found.st_mode) else "a file"
        raise ConfigError(f"--unix-socket {path} is {what}, not a socket: it is not replaced")
    if _listened_on(path):
        raise ConfigError(
            f"another process listens on the Unix socket {path}: stop it first or choose another "
            "--unix-socket"
        )
    path.unlink(missing_ok=True)


def _listened_on(path: Path) -> bool:
    """Whether a process accepts connections on the socket file `path` (one that does not answer
    in time, its backlog full, counts as listening)."""
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(_PROBE_S)
    try:
        probe.connect(str(path))
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except (TimeoutError, BlockingIOError):
        return True
    except OSError as exc:
        reason = exc.strerror or exc
        raise ConfigError(f"--unix-socket {path}: cannot tell whether it is in use: {reason}") from None
    finally:
        probe.close()
    return True
