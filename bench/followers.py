"""Many SSE followers of one execution, in a process of their own (row 6).

``python -m bench.followers PORT TOKEN EXECUTION_ID N``: opens N streams, prints ``ready`` once
every stream has had its first event, follows each to the terminal event, then prints one JSON
line: how many followers saw every event (ids 1..last without a gap, the terminal event last),
and, from the first follower, how many output lines it got.
"""

from __future__ import annotations

import json
import sys

import trio

from bench.wire import Client, SseParser


async def follow(
    client: Client, execution_id: str, index: int, connected: trio.Semaphore | None, result: dict[str, object]
) -> None:
    parser = SseParser()
    last = 0
    gaps = 0
    terminal = False
    lines = 0
    partial = ""
    async with client.stream(f"/v1/executions/{execution_id}/events/stream") as body:
        async for piece in body:
            for event in parser.feed(piece):
                if connected is not None:
                    connected.release()
                    connected = None
                if event.id is not None:
                    if event.id != last + 1:
                        gaps += 1
                    last = event.id
                if event.event == "status" and '"status": "running"' not in event.data:
                    status = json.loads(event.data)["status"]
                    terminal = status in {"completed", "failed", "cancelled", "timed_out"}
                elif index == 0 and event.event == "output":
                    text = partial + json.loads(event.data)["outputDelta"]
                    *done, partial = text.split("\n")
                    lines += len(done)
    result.update(last=last, gaps=gaps, terminal=terminal, lines=lines)


async def main(port: int, token: str, execution_id: str, n: int) -> None:
    clients = [Client("127.0.0.1", port, token) for _ in range(n)]
    results: list[dict[str, object]] = [{} for _ in range(n)]
    connected = trio.Semaphore(0, max_value=n)

    async def announce() -> None:
        for _ in range(n):
            await connected.acquire()
        print("ready", flush=True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(announce)
        for i, client in enumerate(clients):
            nursery.start_soon(follow, client, execution_id, i, connected, results[i])
    lasts = {r.get("last") for r in results}
    complete = sum(1 for r in results if r.get("terminal") and r.get("gaps") == 0)
    print(
        json.dumps(
            {
                "followers": n,
                "complete": complete,
                "lastIds": sorted(x for x in lasts if isinstance(x, int)),
                "lines": results[0].get("lines"),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4]))
