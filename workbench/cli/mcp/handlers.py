"""What each tool of `workbench mcp` does, through the Python client: an answer as text for the
model and the same as structured JSON. A refusal of the daemon is raised as its `WorkbenchError`
(the server turns it into a tool error with the API's code and message)."""

from __future__ import annotations

import builtins
import codecs
import logging
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio

from workbench.cli.mcp.stdio import CLIENT_GONE
from workbench.cli.mcp.tools import (
    BashArguments,
    CodeArguments,
    ExecutionArguments,
    ExitsArguments,
    InputArguments,
    ListArguments,
)
from workbench.cli.mcp.waiting import waited_on
from workbench.client.aio import AsyncClient
from workbench.wire.contexts import ContextRequest
from workbench.wire.models import Execution, Exit
from workbench.wire.status import ExecutionStatus

log = logging.getLogger("workbench.mcp")
#: A cancelled tool call looks for its run this many times, this often, among its session's
#: newest runs, and gives up on cancelling it after STOP_S.
STOP_LOOKS = 30
STOP_LOOK_EVERY_S = 0.1
STOP_LOOK_AT = 50
STOP_S = 10.0
#: How long a `cancel` waits for the tree to be dead before answering with the record as it is.
CANCEL_WAIT_S = 30.0
#: One lookup-or-create of a session's context at a time, so two calls at once make one context.
_context_lock = trio.Lock()
#: The most of each tail of an exit that goes into the text answer (the structured one has it all).
EXIT_TAIL_CHARS = 4000
#: Each session's workspace as a run of this server without cwd showed it (its cwd), so that the
#: file tools can say where an absolute path they refuse would be.
WORKSPACES: dict[str, str] = {}


@dataclass(frozen=True)
class Answer:
    """A tool's result: `text` for the model to read, `data` the same as JSON."""

    text: str
    data: dict[str, Any]


def _running_note(execution: Execution, waited: float | None) -> str:
    doing = "running" if execution.status is not ExecutionStatus.QUEUED else "waiting to start"
    if waited is None:
        how = f"was started in the background and goes on {doing}"
    elif waited:
        how = f"was still {doing} after {waited:g} s and goes on {doing}"
    else:  # no wait: a `get`, or a start with waitSeconds 0
        how = f"is {doing}"
    handed = " Its outcome will also come from the exits tool once it ends." if execution.detached else ""
    return (
        f"It {how}: do not start it again. Use the execution tool with "
        f'executionId "{execution.execution_id}": action "wait" to wait for its end, "logs" to '
        f'read its output, "cancel" to stop it.{handed}'
    )


def outcome(execution: Execution, waited: float | None = None) -> Answer:
    """The answer about one execution: its status and exit code, or that it runs on; its output.
    `waited`: how long the call waited for its end (None: started in the background; 0: no wait).
    A service's says whether it is ready (`ready`, `readyAt`)."""
    preview = execution.preview
    data: dict[str, Any] = {
        "executionId": execution.execution_id,
        "status": execution.status.value,
        "running": not execution.terminal,
        "detached": execution.detached,
        "exitCode": execution.exit_code,
        "signal": execution.signal,
        "error": execution.error.wire() if execution.error else None,
        "cwd": execution.cwd,
        "stdout": preview.stdout if preview else "",
        "stderr": preview.stderr if preview else "",
        "stdoutElidedBytes": preview.stdout_elided_bytes if preview else 0,
        "stderrElidedBytes": preview.stderr_elided_bytes if preview else 0,
    }
    if execution.service:
        data.update(service=True, ready=execution.ready, readyAt=execution.ready_at)
    value = (execution.result or {}).get("text/plain")
    if execution.context_id is not None:  # a cell of a code context: its value, whenever read
        data.update(contextId=execution.context_id, result=value)
    named = execution.execution_id + (f" in {execution.context_id}" if execution.context_id else "")
    if execution.terminal:
        head = f"{execution.status.value} ({named})"
        if execution.exit_code is not None:
            head = f"exit code {execution.exit_code} ({execution.status.value}, {named})"
        if execution.error is not None:
            head += f": {_cut(execution.error.message)}"
    else:
        note = _service_note(execution, waited) if execution.service else _running_note(execution, waited)
        data["note"] = note
        head = f"{execution.status.value} ({named}). {note}"
    lines = [head]
    for stream in ("stdout", "stderr"):
        if data[stream]:
            lines += [
                f"--- {stream}{' so far' if not execution.terminal else ''} ---",
                data[stream].rstrip("\n"),
            ]
    traceback = execution.error.traceback if execution.error is not None else None
    if traceback:
        cut = len(traceback) > EXIT_TAIL_CHARS
        lines += [
            "--- traceback" + (" (its end)" if cut else "") + " ---",
            traceback[-EXIT_TAIL_CHARS:].rstrip("\n"),
        ]
    if value is not None:
        lines += ["--- result ---", _cut(value)]
    if execution.output.truncated or data["stdoutElidedBytes"] or data["stderrElidedBytes"]:
        lines.append('(the middle is elided; the execution tool\'s "logs" has all of it)')
    return Answer("\n".join(lines), data)


def _cut(shown: str) -> str:
    """A value or a message as the text answer holds it: its first `EXIT_TAIL_CHARS` characters
    (the structured answer has it all)."""
    if len(shown) <= EXIT_TAIL_CHARS:
        return shown
    more = len(shown) - EXIT_TAIL_CHARS
    return f"{shown[:EXIT_TAIL_CHARS]}... ({more} more characters in the structured answer)"


def _service_note(execution: Execution, waited: float | None) -> str:
    if execution.ready:
        state = "is ready and stays up"
    elif waited is None:
        state = "was started in the background and stays up"
    elif waited:
        state = f"was not ready yet after {waited:g} s; it goes on starting"
    else:
        state = "is not ready yet; it goes on starting"
    return (
        f"The service {state}: do not start it again. Use the execution tool with executionId "
        f'"{execution.execution_id}": action "get" to see whether it is ready, "logs" to read its '
        'output, "cancel" to stop it (its whole process tree).'
    )


async def _service(client: AsyncClient, args: BashArguments) -> Answer:
    readiness = args.readiness
    execution = await _started(
        client,
        args.session_id,
        lambda key: client.run_bash(
            args.command,
            idempotency_key=key,
            background=args.background,
            wait_timeout=None if args.background else args.wait_seconds,
            timeout=args.timeout_seconds,
            cwd=args.cwd,
            session_id=args.session_id,
            image=args.image,
            preview_format="plain",
            service=True,
            ready_port=readiness.port if readiness is not None else None,
            ready_log=readiness.log_pattern if readiness is not None else None,
            ready_timeout=args.ready_timeout_seconds,
        ),
    )
    answer = outcome(execution, None if args.background else args.wait_seconds)
    if execution.terminal:
        return Answer(f"the service ended before it was ready: {answer.text}", answer.data)
    return answer


async def bash(client: AsyncClient, args: BashArguments) -> Answer:
    if args.service:
        return await _service(client, args)
    if args.readiness is not None or args.ready_timeout_seconds is not None:
        raise ValueError("readiness and readyTimeoutSeconds need service: true")
    execution = await _started(
        client,
        args.session_id,
        lambda key: client.run_bash(args.command, idempotency_key=key, **_run_options(args)),
        _waits(args),
    )
    _saw_workspace(args, execution)
    return outcome(execution, None if args.background else args.wait_seconds)


async def code(client: AsyncClient, args: CodeArguments) -> Answer:
    if args.stateful:
        return await _in_context(client, args)
    options = _run_options(args)
    execution = await _started(
        client,
        args.session_id,
        lambda key: client.run_code(args.language, args.code, idempotency_key=key, **options),
        _waits(args),
    )
    _saw_workspace(args, execution)
    return outcome(execution, None if args.background else args.wait_seconds)


async def _in_context(client: AsyncClient, args: CodeArguments) -> Answer:
    """A cell in the session's context of the language: the newest one alive, else a new one
    (looked up in the daemon each time, so a restarted server finds it again)."""
    if args.cwd is not None or args.open_stdin:
        raise ValueError("stateful code runs in the session's interpreter: cwd and openStdin cannot be given")
    image = args.image or "host"
    # No sessionId is the daemon's default session: the record names it, so the lookup must too.
    session_id = args.session_id or ContextRequest.model_fields["session_id"].default
    async with _context_lock:
        found = [
            c
            for c in await client.contexts()
            if (c.record.session_id, c.record.language, c.record.image) == (session_id, args.language, image)
            and c.record.status != "dead"
        ]
        context = found[-1] if found else None
        if context is None:
            context = await client.create_context(args.language, image=image, session_id=session_id)
    options = _run_options(args)
    for fixed in ("cwd", "session_id", "image", "open_stdin"):
        del options[fixed]
    execution = await _started(
        client, session_id, lambda key: context.run(args.code, idempotency_key=key, **options), _waits(args)
    )
    return outcome(execution, None if args.background else args.wait_seconds)


async def _started(
    client: AsyncClient,
    session_id: str | None,
    start: Callable[[str], Awaitable[Execution]],
    wait_s: float | None = None,
) -> Execution:
    """`start(idempotency_key)`: a run's start, with a key of its own, waiting `wait_s` for its end
    (None: not waiting), through a restart of the daemon (`waited_on`). A tool call the client
    cancels (its `notifications/cancelled`, sent when it gives up or its timeout passes) is
    interrupted by the SDK: the run it started is then cancelled too, as the agent asked. A call
    cut short because the client went away (stdin closed) leaves its run going: connections are
    not runs."""
    key = f"mcp-{uuid.uuid4().hex}"
    since = trio.current_time()
    try:
        return await waited_on(client, await start(key), wait_s, since)
    except trio.Cancelled:
        if not CLIENT_GONE.is_set():
            with trio.CancelScope(shield=True), trio.move_on_after(STOP_S):
                await _stop(client, session_id or "default", key)
        raise


async def _stop(client: AsyncClient, session_id: str, key: str) -> None:
    """Cancel the run started with `key`, once the daemon has it (a start interrupted early may
    not be there yet, or ever)."""
    try:
        for _ in range(STOP_LOOKS):
            for found in await client.list(session_id=session_id, limit=STOP_LOOK_AT):
                if found.idempotency_key == key:
                    if not found.terminal:
                        await client.cancel(found, "its MCP tool call was cancelled")
                    return
            await trio.sleep(STOP_LOOK_EVERY_S)
    except Exception:
        log.exception("the run of a cancelled tool call could not be cancelled")


def _waits(args: BashArguments | CodeArguments) -> float | None:
    """How long a start waits for its run's end (None: a background one does not)."""
    return None if args.background else args.wait_seconds


def _saw_workspace(args: BashArguments | CodeArguments, execution: Execution) -> None:
    if args.cwd is None and execution.cwd is not None:
        WORKSPACES[execution.session_id] = execution.cwd


def _run_options(args: BashArguments | CodeArguments) -> dict[str, Any]:
    """The start options the bash and code tools share."""
    return {
        "background": args.background,
        "wait_timeout": None if args.background else args.wait_seconds,
        "timeout": args.timeout_seconds,
        "cwd": args.cwd,
        "session_id": args.session_id,
        "image": args.image,
        "open_stdin": args.open_stdin,
        "preview_format": "plain",
        # A run that outlives the wait is handed over: its outcome reaches the exits tool later.
        "detached": args.background,
        "on_wait_timeout": "return" if args.background else "detach",
    }


async def send_input(client: AsyncClient, args: InputArguments) -> Answer:
    await client.send_input(args.execution_id, args.text, eof=args.eof)
    return outcome(await client.wait(args.execution_id, timeout=args.wait_seconds), args.wait_seconds)


async def execution(client: AsyncClient, args: ExecutionArguments) -> Answer:
    run = args.execution_id
    if args.action == "get":
        return outcome(await client.get(run), 0)
    if args.action == "wait":
        return outcome(await client.wait(run, timeout=args.wait_seconds), args.wait_seconds)
    if args.action == "cancel":
        result = await client.cancel(run, args.reason)
        final = await client.wait(run, timeout=CANCEL_WAIT_S) if result.cancelled else result.execution
        answer = outcome(final, CANCEL_WAIT_S)
        said = "cancelled" if result.cancelled else "not cancelled: it had already ended"
        return Answer(f"{said}. {answer.text}", {**answer.data, "cancelled": result.cancelled})
    if args.offset is not None:
        return await _logs_at_offset(client, args, args.offset)
    return await _logs_after_sequence(client, args)


def _utf8_prefix(data: bytes, limit: int) -> bytes:
    """The longest start of `data` (valid UTF-8) of at most `limit` bytes that ends on a
    character's boundary; at least its first character, so that a page always moves on."""
    cut = max(limit, 1)
    while 0 < cut < len(data) and data[cut] & 0xC0 == 0x80:  # a continuation byte
        cut -= 1
    if cut == 0:  # the first character alone is longer than the limit
        cut = 1
        while cut < len(data) and data[cut] & 0xC0 == 0x80:
            cut += 1
    return data[:cut]


async def _logs_after_sequence(client: AsyncClient, args: ExecutionArguments) -> Answer:
    """Output events after `afterSequence` (less the `skipBytes` of the next one, a page that
    ended inside it), up to `maxBytes` of text: a page may end inside an event, and the next
    continues there."""
    record = await client.get(args.execution_id)  # also: whether the events hold all of it
    after, size, skip, next_skip = args.after_sequence, 0, args.skip_bytes, 0
    parts: builtins.list[str] = []
    streams = ("stdout", "stderr") if args.stream == "both" else (args.stream,)
    full = terminal = False
    while not (full or terminal):
        page = await client.events_page(args.execution_id, after, 1000)
        for event in page.events:
            if event.event_type == "output" and event.stream in streams and event.output_delta:
                delta = event.output_delta.encode("utf-8")
                start = skip if event.sequence == args.after_sequence + 1 else 0
                piece = delta[start:]
                if size + len(piece) > args.max_bytes:
                    piece = _utf8_prefix(piece, args.max_bytes - size) if size < args.max_bytes else b""
                    if parts and size + len(piece) > args.max_bytes:
                        piece = b""  # only a first piece may go over, by less than a character
                    parts.append(piece.decode("utf-8", "replace"))
                    size += len(piece)
                    next_skip, full = start + len(piece), True
                    break  # this event goes on in the next page
                parts.append(piece.decode("utf-8", "replace"))
                size += len(piece)
            after = event.sequence
        terminal = page.terminal and not full
        if not page.events:
            break
    text = "".join(parts)
    truncated = record.output.truncated
    data: dict[str, Any] = {
        "executionId": args.execution_id,
        "stream": args.stream,
        "text": text,
        "nextSequence": after,
        "nextSkipBytes": next_skip,
        "done": terminal,
        "truncated": truncated,
    }
    cursor = f"afterSequence {after}" + (f", skipBytes {next_skip}" if next_skip else "")
    if terminal and not truncated:
        notes = ["that is all of it."]
    elif terminal:
        notes = ["that is all the events hold, but not all of its output."]
    else:
        notes = [f"more may follow: continue with {cursor}."]
    if truncated:
        data["stdoutBytes"], data["stderrBytes"] = record.output.stdout_bytes, record.output.stderr_bytes
        notes.append(
            "Its output went past the event budget: the events stop there, and the rest "
            f"(stdout {record.output.stdout_bytes} bytes in all, stderr {record.output.stderr_bytes}) "
            'is kept whole in its artifacts: read it with a byte offset (stream "stdout" or '
            '"stderr", offset N).'
        )
    return Answer(text + "\n--- " + " ".join(notes), data)


#: The most bytes one character takes in UTF-8.
LONGEST_CHARACTER = 4


def _whole_characters(chunk: bytes, *, final: bool) -> tuple[str, int]:
    """`chunk` as text up to its last whole character, and how many of its bytes that is: a
    character the page's edge cuts starts the next page. Bytes that are not UTF-8 are U+FFFD."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    text = decoder.decode(chunk, final)
    return text, len(chunk) - len(decoder.getstate()[0])


def _first_character(chunk: bytes, *, final: bool) -> tuple[str, int]:
    """The first character of `chunk` (U+FFFD for a byte that starts none), and its bytes; none
    yet when `chunk` holds only the start of one that is still being written (not `final`)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for i in range(len(chunk)):
        text = decoder.decode(chunk[i : i + 1])
        if len(text) > 1:  # a byte that starts nothing, then a character of this byte alone
            return text[:1], i
        if text:
            return text, i + 1
    return (decoder.decode(b"", True)[:1], len(chunk)) if final else ("", 0)


async def _logs_at_offset(client: AsyncClient, args: ExecutionArguments, offset: int) -> Answer:
    """`maxBytes` of one stream from a byte offset: from its artifact where kept, else its events."""
    if args.stream == "both":
        raise ValueError('a byte offset reads one stream: give stream "stdout" or "stderr"')
    record = await client.get(args.execution_id)
    stream = args.stream
    total = record.output.stdout_bytes if stream == "stdout" else record.output.stderr_bytes

    async def read(size: int) -> bytes:
        if any(a.name == stream for a in record.artifacts):
            return await client.artifact(record, stream, offset, offset + size)
        return (await client.output(record, stream))[offset : offset + size]

    chunk = await read(args.max_bytes)
    text, used = _whole_characters(chunk, final=record.terminal and offset + len(chunk) >= total)
    if chunk and not used:  # one character longer than maxBytes: that character, whole
        chunk = await read(LONGEST_CHARACTER)
        text, used = _first_character(chunk, final=record.terminal and offset + len(chunk) >= total)
    next_offset = offset + used
    done = record.terminal and next_offset >= total
    data = {
        "executionId": args.execution_id,
        "stream": stream,
        "offset": offset,
        "text": text,
        "nextOffset": next_offset,
        "totalBytes": total,
        "done": done,
        "status": record.status.value,
    }
    tail = "that is all of it." if done else "more may follow."
    return Answer(f"{text}\n--- bytes {offset}-{next_offset} of {total}; {tail}", data)


async def listing(client: AsyncClient, args: ListArguments) -> Answer:
    runs = await client.list(status=args.status, limit=args.limit)
    rows: builtins.list[dict[str, Any]] = [
        {
            "executionId": e.execution_id,
            "kind": e.execution_kind,
            "status": e.status.value,
            "exitCode": e.exit_code,
            "what": e.command if e.command is not None else f"{e.language}: {(e.code or '')[:80]}",
            "createdAt": e.created_at,
        }
        for e in runs
    ]
    lines = [f"{r['executionId']}  {r['status']:<16} {r['exitCode']!s:>4}  {r['what'][:120]}" for r in rows]
    return Answer("\n".join(lines) or "no executions", {"executions": rows})


async def exits(client: AsyncClient, args: ExitsArguments) -> Answer:
    handed: builtins.list[Exit] = await client.exits(limit=args.limit, wait_timeout=args.wait_seconds)
    items = []
    for item in handed:
        items.append(item.wire())
        await client.ack_exit(item)
    if not items:
        return Answer("no exits", {"exits": []})
    blocks = []
    for item in handed:
        head = f"{item.execution_id}: {item.status.value}"
        if item.exit_code is not None:
            head += f", exit code {item.exit_code}"
        if item.signal is not None:
            head += f", signal {item.signal}"
        blocks.append(
            "\n".join(
                [
                    head,
                    f"--- stdout tail ---\n{item.stdout_tail[-EXIT_TAIL_CHARS:]}" if item.stdout_tail else "",
                    f"--- stderr tail ---\n{item.stderr_tail[-EXIT_TAIL_CHARS:]}" if item.stderr_tail else "",
                ]
            ).strip()
        )
    return Answer("\n\n".join(blocks), {"exits": items})
