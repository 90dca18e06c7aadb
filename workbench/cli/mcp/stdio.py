"""stdin and stdout for the MCP SDK's `stdio_server`, read and written by trio itself.

Left to itself, `stdio_server` wraps the standard streams with `anyio.wrap_file`: every line read,
every write and every flush is a hop to a worker thread and back, three per tool call, a cost the
MCP `bash` round trip pays on top of the daemon's. Here the wire is a pair of non-blocking pipes
that trio waits on directly. As the SDK does, fd 0 and fd 1 are pointed elsewhere while serving
(the null device, and stderr) so that nothing else in the process can read the agent's requests
or write into its answers; they are put back at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator

import trio

_LINE_READ = 65536
#: Set once the client's end of stdin has closed: the client is gone (it crashed, or quit), and
#: tool calls cut short by the server's end are no requests of its to stop their runs.
CLIENT_GONE = trio.Event()


class Lines:
    """The agent's requests: an async iterator of lines (`async for line in stdin`).

    A request whose JSON holds a lone surrogate (`"\\ud800"`, what a JavaScript client makes of a
    string cut through an emoji) is answered here with a JSON-RPC error: the SDK's parser refuses
    it and answers nothing, so a client without a timeout would wait for good.
    """

    def __init__(self, stream: trio.lowlevel.FdStream, answers: Writer) -> None:
        self._stream = stream
        self._answers = answers
        self._buffer = bytearray()
        self._eof = False

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line = bytes(self._buffer[: end + 1])
                del self._buffer[: end + 1]
                text = line.decode("utf-8", "replace")
                refused = _lone_surrogate(text) if _MAYBE_SURROGATE.search(text) else None
                if refused is None:
                    return text
                await self._answers.write(refused)
                await self._answers.flush()
                continue
            if self._eof:
                if self._buffer:
                    rest, self._buffer = bytes(self._buffer), bytearray()
                    return rest.decode("utf-8", "replace")
                raise StopAsyncIteration
            chunk = await self._stream.receive_some(_LINE_READ)
            if not chunk:
                self._eof = True
                CLIENT_GONE.set()
            self._buffer += chunk


class Writer:
    """The answers: `write` gathers text, `flush` sends it in one write. Once the client's end of
    stdout has closed, the client is gone: answers are dropped (the server ends as stdin does),
    rather than ending the server with a broken pipe's traceback."""

    def __init__(self, stream: trio.lowlevel.FdStream) -> None:
        self._stream = stream
        self._pending: list[bytes] = []
        self._gone = False
        self._sending = trio.Lock()  # the SDK's answers, and the refusals `Lines` makes

    async def write(self, text: str) -> None:
        self._pending.append(text.encode("utf-8"))

    async def flush(self) -> None:
        data = b"".join(self._pending)
        self._pending.clear()
        if not data:
            return
        async with self._sending:
            if self._gone:
                return
            try:
                await self._stream.send_all(data)
            except trio.BrokenResourceError:
                self._gone = True
                CLIENT_GONE.set()


#: A `\\u` escape of a surrogate, which a line holds before any lone one can be in it.
_MAYBE_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogate(line: str) -> str | None:
    """The JSON-RPC error answering `line`, a request one of whose strings holds a lone surrogate;
    None for any other line (the SDK parses it, and answers a bad one as it does)."""
    try:
        message = json.loads(line)
        json.dumps(message, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        found = exc.object[exc.start : exc.end].encode("utf-8", "backslashreplace").decode()
    except (ValueError, RecursionError):  # not JSON, or nested too deep: the SDK's to answer
        return None
    else:
        return None
    if not isinstance(message, dict) or "method" not in message:
        return None  # a client's answer to the server: the SDK's to handle
    request_id = message.get("id")
    if request_id is None:
        return ""  # a notification: nothing to answer
    error = {
        "code": -32602,
        "message": f"invalid params: a string holds the lone surrogate {found}: text must be "
        "whole characters (a pair of surrogates, or the character itself)",
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}) + "\n"


@contextlib.contextmanager
def claimed() -> Iterator[tuple[Lines, Writer]]:
    """The wire on private descriptors, fd 0 and 1 diverted meanwhile."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
        reader = trio.lowlevel.FdStream(wire_in)
        writer = trio.lowlevel.FdStream(wire_out)
        try:
            answers = Writer(writer)
            yield Lines(reader, answers), answers
        finally:
            # Closing them puts the pipes back in blocking mode, as the agent's side expects.
            reader.close()
            writer.close()
    finally:
        os.close(null)
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
