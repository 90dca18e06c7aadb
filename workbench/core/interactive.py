"""Interactive executions: what a start's `openStdin`, `tty` and `persistShell` make of its row and
its spawn (see `docs/api.md`). Input and resizes are `workbench.core.inputs`'s; a shell's
state carried between executions is `workbench.core.shells`'.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.core.store import ExecutionRow
from workbench.wire.interactive import DEFAULT_TTY_COLS, DEFAULT_TTY_ROWS
from workbench.wire.models import StartBashRequest, StartCodeRequest

#: `TERM` on a terminal unless the request's `env` sets it.
TERMINAL_TYPE = "xterm-256color"


def row_fields(req: StartBashRequest | StartCodeRequest) -> dict[str, Any]:
    """The row's columns for a start's interactive fields."""
    tty_json = None
    if req.tty:
        size = req.tty_size
        rows, cols = (size.rows, size.cols) if size else (DEFAULT_TTY_ROWS, DEFAULT_TTY_COLS)
        tty_json = json.dumps({"rows": rows, "cols": cols})
    persist = isinstance(req, StartBashRequest) and req.persist_shell
    return {"open_stdin": req.open_stdin or req.tty, "tty_json": tty_json, "persist_shell": persist}


def rerun_fields(row: ExecutionRow) -> dict[str, Any]:
    """The start-body fields that make a rerun as interactive as `row` was (its first size)."""
    body: dict[str, Any] = {}
    if row.tty_json is not None:
        body["tty"] = True
        body["ttySize"] = json.loads(row.tty_json)
    elif row.open_stdin:
        body["openStdin"] = True
    if row.persist_shell:
        body["persistShell"] = True
    return body


def tty_of(row: ExecutionRow) -> tuple[int, int] | None:
    """(rows, cols) of the terminal `row` runs on, or None."""
    if row.tty_json is None:
        return None
    size = json.loads(row.tty_json)
    return int(size["rows"]), int(size["cols"])


def spawn_env(row: ExecutionRow, env: dict[str, str], requested: dict[str, str]) -> None:
    """Set what a terminal needs in `env` (`TERM`, unless the request's own `env` names it)."""
    if row.tty_json is not None and "TERM" not in requested:
        env["TERM"] = TERMINAL_TYPE
