"""Input to an interactive execution, one piece per request: for `send` and for `run -i`/`attach`.

The rule is the Python client's (`workbench.client.backlog`): a piece refused because the execution
has not read what was sent before (`input_backlog`) was not taken at all, and is sent again, after
a pause that doubles up to a quarter of a second, until it is taken or the caller's bound passes.
"""

from __future__ import annotations

import time

from workbench.cli.http import ApiError, Http
from workbench.client.backlog import Resend


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
    resend = Resend({"input_backlog": backlog_for, "unavailable": reconnect_for})
    while True:
        try:
            http.request_bytes("POST", path, data, query=query, ok=(204,))
            return
        except ApiError as exc:
            pause = resend.after(exc.code)
            if pause is None:
                raise
        time.sleep(pause)
