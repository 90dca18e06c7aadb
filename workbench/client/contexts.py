"""Code contexts for both clients: `wb.create_context("python")`, `ctx.run(code)`, `ctx.close()`.

Each request is described once here (a plan, see `workbench.client.plan`) and performed by the
client that made the handle: `CodeContext` blocking, `AsyncCodeContext` awaited. `ctx.run` is the
client's `run_code` with the context's id (its one description in `workbench.client.methods`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

import httpx

from workbench.client import methods
from workbench.client.base import Base
from workbench.client.calls import Call, _expect, segment
from workbench.client.config import seconds_to_ms
from workbench.client.plan import Plan, send
from workbench.wire.contexts import Context, ContextList
from workbench.wire.models import Execution

T = TypeVar("T")


def create_plan(
    client: Base,
    language: str,
    image: str | None,
    session_id: str | None,
    env: Mapping[str, str] | None,
    idle_timeout: float | None,
) -> Plan[Context]:
    body: dict[str, Any] = {"language": language}
    optional = {
        "image": image,
        "sessionId": session_id,
        "env": dict(env) if env else None,
        "idleTimeoutMs": seconds_to_ms(idle_timeout),
    }
    body.update({k: v for k, v in optional.items() if v is not None})

    @_expect(201)
    def parse(response: httpx.Response) -> Context:
        return Context.model_validate_json(response.content)

    # Not resent after a broken connection: the daemon takes no idempotency key here, and a
    # second try could start a second interpreter.
    return (yield from send(client, Call("POST", "/v1/contexts", parse, json=body, retry=False)))


def list_plan(client: Base) -> Plan[list[Context]]:
    @_expect(200)
    def parse(response: httpx.Response) -> ContextList:
        return ContextList.model_validate_json(response.content)

    return (yield from send(client, Call("GET", "/v1/contexts", parse))).contexts


def get_plan(client: Base, context_id: str) -> Plan[Context]:
    @_expect(200)
    def parse(response: httpx.Response) -> Context:
        return Context.model_validate_json(response.content)

    return (yield from send(client, Call("GET", _path(context_id), parse)))


def delete_plan(client: Base, context_id: str) -> Plan[None]:
    @_expect(204)
    def parse(response: httpx.Response) -> None:
        return None

    yield from send(client, Call("DELETE", _path(context_id), parse, deletes=True))


def _path(context_id: str) -> str:
    return f"/v1/contexts/{segment(context_id)}"


class _Blocking(Protocol):
    def _run(self, plan: Plan[T]) -> T: ...


class _Awaiting(Protocol):
    async def _run(self, plan: Plan[T]) -> T: ...


class CodeContext:
    """A code context through a `Client`: `run` code in it, `refresh` its record, `close` it."""

    def __init__(self, client: Base, record: Context) -> None:
        self._client = client
        self._blocking: _Blocking = client  # type: ignore[assignment]
        self.record = record
        self.id = record.context_id
        self.language = record.language

    def run(self, code: str, **options: Any) -> Execution:
        """Run `code` in the context and return its record (`result`, `error`); `options` are
        those of `Client.run_code` (`background`, `wait_timeout`, `timeout`, `on_stdout`, ...)."""
        plan = methods.run_code(self._client, self.language, code, context_id=self.id, **options)
        return self._blocking._run(plan)

    def refresh(self) -> Context:
        """The context's record now (`status`, `executions`, `reason`)."""
        self.record = self._blocking._run(get_plan(self._client, self.id))
        return self.record

    def close(self) -> None:
        """Kill the context's interpreter and forget it."""
        self._blocking._run(delete_plan(self._client, self.id))

    def __enter__(self) -> CodeContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncCodeContext:
    """A code context through an `AsyncClient`: the same methods, awaited."""

    def __init__(self, client: Base, record: Context) -> None:
        self._client = client
        self._awaiting: _Awaiting = client  # type: ignore[assignment]
        self.record = record
        self.id = record.context_id
        self.language = record.language

    async def run(self, code: str, **options: Any) -> Execution:
        """Run `code` in the context and return its record; as `CodeContext.run`."""
        plan = methods.run_code(self._client, self.language, code, context_id=self.id, **options)
        return await self._awaiting._run(plan)

    async def refresh(self) -> Context:
        """The context's record now."""
        self.record = await self._awaiting._run(get_plan(self._client, self.id))
        return self.record

    async def close(self) -> None:
        """Kill the context's interpreter and forget it."""
        await self._awaiting._run(delete_plan(self._client, self.id))

    async def __aenter__(self) -> AsyncCodeContext:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
