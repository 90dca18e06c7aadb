"""The sessions methods of both clients: `sessions` (the principal's sessions, with their sizes and
what holds them) and `delete_session` (a workspace removed with every file in it)."""

from __future__ import annotations

import builtins

import httpx

from workbench.client.base import Base
from workbench.client.calls import Call, _expect, segment
from workbench.client.plan import Plan, method, send
from workbench.wire.files import Session, SessionList


def session_path(session_id: str) -> str:
    """`/v1/sessions/{session_id}`, the id escaped as one path segment."""
    return f"/v1/sessions/{segment(session_id)}"


def sessions_call() -> Call[builtins.list[Session]]:
    @_expect(200)
    def parse(response: httpx.Response) -> builtins.list[Session]:
        return SessionList.model_validate_json(response.content).sessions

    return Call("GET", "/v1/sessions", parse)


def delete_session_call(session_id: str | None) -> Call[None]:
    @_expect(204)
    def parse(response: httpx.Response) -> None:
        return None

    if session_id is None:
        return Call("DELETE", "/v1/sessions", parse)
    # Resent after a broken connection too: a 404 to the resend means the first try removed it.
    return Call("DELETE", session_path(session_id), parse, deletes=True)


@method
def sessions(client: Base) -> Plan[builtins.list[Session]]:
    """Your sessions, by id: each one's size against its quota, when it last changed, and its
    live executions and code contexts (which hold its delete)."""
    return (yield from send(client, sessions_call()))


@method
def delete_session(client: Base, session_id: str) -> Plan[None]:
    """Remove the session's workspace with every file in it. `Conflict` (nothing removed) while an
    execution of it is queued or running or a code context of it lives; `NotFound` when there is
    no such session."""
    if not session_id:
        raise ValueError("delete_session: which session? (to remove them all: delete_sessions())")
    return (yield from send(client, delete_session_call(session_id)))


@method
def delete_sessions(client: Base) -> Plan[None]:
    """Remove every one of your sessions; `Conflict`, and nothing removed, while any is held (as
    `delete_session` says)."""
    return (yield from send(client, delete_session_call(None)))
