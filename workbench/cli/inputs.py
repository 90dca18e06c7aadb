"""Input to an interactive execution, one piece per request: for `send` and for `run -i`/`attach`.

The daemon takes a piece whole or not at all: while the execution has not read what was sent
before (`input_backlog`: its supervisor keeps at most 1 MiB unread), none of the piece was taken,
and it is sent again, after a pause that doubles up to a quarter of a second, until it is taken
or the caller's bound passes. So a program that reads slowly gets every byte once, in order.
"""

from __future__ import annotations

import time

from workbench.cli.http import ApiError, Http

#: The most bytes one input request carries (the daemon's limit).
MAX_INPUT_BYTES = 1 << 20
#: How long a piece refused with `input_backlog` waits before it is sent again (doubling).
BACKLOG_PAUSE_S, BACKLOG_PAUSE_MAX_S = 0.01, 0.25


def send_piece(
    http: Http,
    path: str,
    data: bytes,
    *,
    eof: bool = False,
    record: bool = True,
    backlog_for: float | None = None,
    reconnect_for: float = 0.0,
) -> None:
    """POST `data` (at most `MAX_INPUT_BYTES`) to the execution's input route `path`.

    Refused with `input_backlog`, it is sent again for up to `backlog_for` seconds (None: for as
    long as it takes); when the daemon cannot be reached (`unavailable`), for up to
    `reconnect_for`. Any other error, or the last one once its bound passed, is raised.
    """
    query = {"eof": "true" if eof else "false", "record": "true" if record else "false"}
    pause = BACKLOG_PAUSE_S
    since: dict[str, float] = {}
    while True:
        try:
            http.request_bytes("POST", path, data, query=query, ok=(204,))
            return
        except ApiError as exc:
            bound = {"input_backlog": backlog_for, "unavailable": reconnect_for}.get(exc.code, 0.0)
            first = since.setdefault(exc.code, time.monotonic())
            if bound is not None and time.monotonic() - first >= bound:
                raise
        time.sleep(pause)
        pause = min(pause * 2, BACKLOG_PAUSE_MAX_S)
