"""An execution's output as its journal holds it, for a node that has none of its files.

A node that ends an execution another node ran (`node_lost`, `workbench.core.cluster`) has not
its spool files: they are on that node's disk. Its final preview and its exit's tails are made
instead from the output events, exactly as `preview` and `finish.tail` make them from the files:
the events hold the same bytes, up to the output budget. Past the budget, what the journal lacks
of a stream is counted as elided in its preview.
"""

from __future__ import annotations

import json

from workbench.core.finish import tail_text
from workbench.core.layout import STREAMS
from workbench.core.preview import stream_preview
from workbench.core.store import ExecutionRow, Store
from workbench.wire.models import Preview

#: Events read per page.
_PAGE = 1000


async def journaled_output(store: Store, execution_id: str) -> dict[str, bytes]:
    """The bytes of each stream (`stdout`, `stderr`) that the execution's output events hold."""
    output = {stream: bytearray() for stream in STREAMS}
    after = 0
    while True:
        page = await store.read_events(execution_id, after, _PAGE)
        for event in page.events:
            if event.event_type == "output":
                body = json.loads(event.body)
                if body.get("stream") in output and body.get("outputDelta"):
                    output[body["stream"]] += body["outputDelta"].encode("utf-8")
        if len(page.events) < _PAGE:
            return {stream: bytes(data) for stream, data in output.items()}
        after = page.events[-1].sequence


def journaled_preview(row: ExecutionRow, output: dict[str, bytes]) -> Preview:
    """The final preview of `row` made from `output` (`journaled_output`)."""
    shown = {}
    for stream, size in (("stdout", row.stdout_bytes), ("stderr", row.stderr_bytes)):
        text, elided = _preview(output[stream], row)
        shown[stream] = (text, elided + max(0, size - len(output[stream])))
    return Preview(
        stdout=shown["stdout"][0],
        stderr=shown["stderr"][0],
        stdout_elided_bytes=shown["stdout"][1],
        stderr_elided_bytes=shown["stderr"][1],
    )


def _preview(data: bytes, row: ExecutionRow) -> tuple[str, int]:
    def read(offset: int, length: int) -> bytes:
        return data[offset : offset + length]

    plain = row.preview_format == "plain"
    return stream_preview(read, len(data), row.preview_bytes, final=True, plain=plain)


def journaled_tails(output: dict[str, bytes]) -> tuple[str, str]:
    """The exit's `stdoutTail` and `stderrTail` made from `output` (`journaled_output`)."""
    return tail_text(output["stdout"]), tail_text(output["stderr"])
