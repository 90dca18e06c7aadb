"""The program a pre-started (warm) Python interpreter runs: `python3 -c <this file's text>`.

It is not imported by the daemon: `warm.py` passes its text to the image's own interpreter
(and the interpreter's directory as its one argument, for `ps`),
which has done its whole start-up (site, encodings, sitecustomize) when it gets here. It says
so (the file `started` in its directory; a sandbox's, a byte on its socket), then
blocks reading its stdin, a pipe whose write end the shim holds, until an end of file. Nothing
(the pool was closed, the shim died): it exits at once. A claim: NUL-separated fields
``warm1, cwd, script, stdin, stdout, stderr, NAME=VALUE..., end``, after which it becomes what
``python3 <script>`` started by the shim would be at its first line:

- fds 0, 1 and 2 are the execution's stdin (or /dev/null) and spool files, opened with the
  flags the shim uses; `sys.stdin` is made again (its seekability is cached at start-up, when
  it was the pipe); no other fd is left open. In a sandbox (its user cannot open those files)
  stdin is a Unix socket instead: the shim sends the three fds with the claim (``SCM_RIGHTS``),
  after a line ``rlimits WHICH:SOFT:HARD...``, its leader's, which it lowers its own to.
- the working directory, and exactly the execution's environment (`os.environ` and the C
  environment its children inherit), in the order the shim would have passed it;
- `sys.argv`, `sys.orig_argv`, `sys.path[0]`, `sys.path_importer_cache` and `__main__`
  (`__file__`, `__cached__`, a `SourceFileLoader`; nothing of this driver) as for a script;
- the code compiled from the file's bytes under its own name, run in `__main__`; an exception
  leaves with this program's frame cut from its traceback, so the interpreter reports it (and
  exits: 1, SIGINT for a KeyboardInterrupt, SystemExit's code) exactly as for a script.

It imports nothing that start-up did not (`os`, `sys` and `stat`, already loaded; a sandbox's
`_socket` and `resource` are removed from `sys.modules` again), so `sys.modules` is a cold
start's. What differs: /proc/self/cmdline and /proc/self/environ (the
process's original ones, from before the claim), its start time, and one frame (`<string>`)
below the code's module frame.
"""


def _warm() -> "tuple[types.CodeType, dict[str, object]]":  # type: ignore[name-defined]  # noqa: F821
    import os
    import stat
    import sys

    try:
        started_in = os.getcwd()  # now: its directory is removed once it is claimed
    except OSError:
        started_in = ""
    chunks: list[bytes] = []
    given = None
    if stat.S_ISSOCK(os.fstat(0).st_mode):
        given = _receive(chunks)
    else:
        _read(chunks)
    received = b"".join(chunks)
    if given is not None:
        # A sandbox's: first the rlimits its leader got (`sandbox._warmbox.leader_limits`).
        line, _, received = received.partition(b"\n")
        if not line.startswith(b"rlimits "):
            os._exit(0)
        limits = [tuple(int(n) for n in field.split(b":")) for field in line.split()[1:]]
    parts = received.split(b"\0")
    if len(parts) < 7 or parts[0] != b"warm1" or parts[-1] != b"end" or given == []:
        os._exit(0)  # never claimed: the pool (or the shim) is gone
    cwd, script, stdin, stdout, stderr = (os.fsdecode(p) for p in parts[1:6])
    try:
        if given is not None:
            for target, fd in enumerate(given):
                os.dup2(fd, target)
                os.close(fd)
            _limit(limits)
        else:
            _open_stdio(stdin, stdout, stderr)
        os.chdir(cwd)
    except OSError as e:
        os.write(2, f"could not start: {e}\n".encode())
        os._exit(126)
    os.environ.clear()
    for item in parts[6:-1]:
        key, _, value = item.partition(b"=")
        os.environb[key] = value
    import io

    old = sys.stdin
    buffer = io.open(0, "rb", closefd=False)  # noqa: SIM115, UP020
    buffer.raw.name = "<stdin>"  # type: ignore[attr-defined]  # as the interpreter names it
    reader = io.TextIOWrapper(
        buffer,
        encoding=old.encoding,
        errors=old.errors,
        newline="\n",
        line_buffering=bool(old.line_buffering),
        write_through=getattr(old, "write_through", False),
    )
    reader.mode = "r"  # type: ignore[misc]
    sys.stdin = sys.__stdin__ = reader  # type: ignore[misc]
    sys.argv[:] = [script]
    sys.orig_argv[-3:] = [script]  # -c, this program, its directory
    if not getattr(sys.flags, "safe_path", False):
        if sys.path[0] == "":  # `-c`'s: an import at start-up looked in the cwd of then
            sys.path_importer_cache.pop(started_in, None)
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    sys.path_importer_cache[script] = None
    main = sys.modules["__main__"].__dict__
    keep = ("__name__", "__doc__", "__package__", "__loader__", "__spec__", "__annotations__", "__builtins__")
    for name in [name for name in main if name not in keep]:
        del main[name]
    main["__doc__"] = None  # this program's docstring
    main["__loader__"] = sys.modules["_frozen_importlib_external"].SourceFileLoader("__main__", script)
    main["__file__"] = script
    main["__cached__"] = None
    with open(script, "rb") as f:
        source = f.read()
    return compile(source, script, "exec", dont_inherit=True), main


def _read(chunks: "list[bytes]") -> None:
    """The claim from stdin, a pipe (a host one's); first, that start-up is over (`warm.STARTED`):
    whatever it wrote is in the pool's files by now."""
    import os
    import sys

    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
        os.close(os.open(os.path.join(sys.argv[1], "started"), flags, 0o600))
    except (OSError, IndexError):
        pass  # then never claimed: its kind's starts stay cold
    while True:
        chunk = os.read(0, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)


def _open_stdio(stdin: str, stdout: str, stderr: str) -> None:
    """fds 0, 1 and 2 as the shim opens them for a cold start; raises OSError."""
    import os

    fd = os.open(stdin, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    os.set_blocking(fd, True)
    os.dup2(fd, 0)
    os.close(fd)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC
    for target, path in ((1, stdout), (2, stderr)):
        fd = os.open(path, flags, 0o600)
        os.dup2(fd, target)
        os.close(fd)


def _limit(limits: "list[tuple[int, ...]]") -> None:
    """Lower this process's rlimits to `limits` (which, soft, hard); `resource` is forgotten again."""
    import os
    import sys

    before = set(sys.modules)
    import resource

    try:
        for which, soft, hard in limits:
            resource.setrlimit(which, (soft, hard))
    except (OSError, ValueError) as e:
        os.write(2, f"could not start: cannot set the limits: {e}\n".encode())
        os._exit(126)
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _receive(chunks: "list[bytes]") -> "list[int]":
    """The claim from a socket (a sandbox's: its stdio comes with it, opened by the shim);
    `_socket` is then forgotten again: `sys.modules` stays a cold start's."""
    import sys

    before = set(sys.modules)
    import _socket

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM, 0, 0)
    fds: list[int] = []
    try:
        sock.send(b"r")  # started: the shim may claim it now (`sandbox._warmbox.ready`)
        while True:
            data, ancillary, _flags, _address = sock.recvmsg(1 << 16, _socket.CMSG_SPACE(3 * 4), 0x40000000)
            for level, kind, payload in ancillary:  # MSG_CMSG_CLOEXEC above: none leaks on
                if (level, kind) == (_socket.SOL_SOCKET, _socket.SCM_RIGHTS):
                    fds += [
                        int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, len(payload), 4)
                    ]
            if not data:
                break
            chunks.append(data)
    finally:
        sock.detach()
    for name in set(sys.modules) - before:
        del sys.modules[name]
    return fds if len(fds) == 3 else []


try:
    exec(*_warm())
except BaseException as _e:
    # Not this program's frames: the module's (always first), and _warm's (a compile error).
    _tb = _e.__traceback__.tb_next if _e.__traceback__ is not None else None
    if _tb is not None and (_tb.tb_frame.f_code.co_filename, _tb.tb_frame.f_code.co_name) == (
        "<string>",
        "_warm",
    ):
        _tb = _tb.tb_next
    _e.__traceback__ = _tb
    del _tb
    raise
