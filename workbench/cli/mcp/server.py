"""The MCP server of `workbench mcp`: the tools of `tools.py` over stdio, with the official `mcp`
SDK's low-level server, on trio (the SDK runs on anyio), talking to the daemon through
`AsyncClient`.

A tool call never crashes the server: arguments that do not fit the tool, a refusal of the
daemon (or a daemon that cannot be reached) and a bug alike become a tool error (`isError`)
whose text and `structuredContent` carry an error code and message, those of the API where the
daemon refused; the server goes on serving the next call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, cast

import anyio
import pydantic
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

import workbench
from workbench.cli.mcp import files, handlers, stdio
from workbench.cli.mcp.handlers import Answer
from workbench.cli.mcp.tools import TOOLS, Arguments, input_schema
from workbench.client.aio import AsyncClient
from workbench.wire.errors import WorkbenchError

log = logging.getLogger("workbench.mcp")

Handler = Callable[[AsyncClient, Any], Awaitable[Answer]]
HANDLERS: dict[str, Handler] = {
    "bash": handlers.bash,
    "code": handlers.code,
    "execution": handlers.execution,
    "list": handlers.listing,
    "exits": handlers.exits,
    "read_file": files.read_file,
    "write_file": files.write_file,
    "list_files": files.list_files,
}

INSTRUCTIONS = (
    "Workbench runs commands and code durably: each run has an executionId, keeps running when a "
    "call stops waiting for it, and its whole output is kept. Run commands with bash (or code); "
    "a run that outlives waitSeconds goes on in the background: follow it with the execution "
    "tool instead of starting it again."
)


def tool_list() -> list[types.Tool]:
    """The tools as MCP describes them."""
    return [
        types.Tool(name=name, description=description, input_schema=input_schema(model))
        for name, (model, description) in TOOLS.items()
    ]


def tool_error(code: str, message: str, details: Any = None) -> types.CallToolResult:
    """A tool error with an error code and message, as text and as `structuredContent`."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        error["details"] = details
    return types.CallToolResult(
        content=[types.TextContent(text=f"{code}: {message}")],
        structured_content={"error": error},
        is_error=True,
    )


def _invalid(exc: pydantic.ValidationError) -> types.CallToolResult:
    details = [
        {"field": ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
        for err in exc.errors(include_url=False, include_input=False)
    ]
    summary = "; ".join(f"{d['field']}: {d['message']}" if d["field"] else d["message"] for d in details)
    return tool_error("invalid_request", f"invalid arguments: {summary}", details)


async def call_tool(client: AsyncClient, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
    """Run one tool call; every failure is a tool error, never an exception."""
    entry = TOOLS.get(name)
    if entry is None:
        return tool_error("not_found", f"no tool {name!r}; the tools are {', '.join(TOOLS)}")
    model: type[Arguments] = entry[0]
    try:
        args = model.model_validate(arguments or {})
        answer = await HANDLERS[name](client, args)
    except pydantic.ValidationError as exc:
        return _invalid(exc)
    except WorkbenchError as exc:
        return tool_error(exc.code, exc.message, exc.details)
    except ValueError as exc:
        return tool_error("invalid_request", str(exc))
    except Exception as exc:
        log.exception("tool %s failed", name)
        return tool_error("internal", f"the tool failed: {type(exc).__name__}: {exc}")
    return types.CallToolResult(content=[types.TextContent(text=answer.text)], structured_content=answer.data)


def build(client: AsyncClient) -> Server[Any]:
    """The MCP server whose tools act through `client`."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def on_call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_tool(client, params.name, params.arguments)

    return Server(
        "workbench",
        version=workbench.__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=on_call,
    )


async def serve(url: str | None, token: str | None) -> None:
    """Serve MCP on stdin and stdout until the client closes them."""
    async with AsyncClient(url, token) as client:
        server = build(client)
        with stdio.claimed() as (lines, writer):
            # Duck-typed as the anyio files the SDK would make (it iterates lines, writes, flushes).
            streams = stdio_server(cast("Any", lines), cast("Any", writer))
            async with streams as (read, write):
                await server.run(read, write, server.create_initialization_options())


def main(url: str | None, token: str | None) -> int:
    """`workbench mcp`: serve until stdin closes; the exit status."""
    logging.basicConfig(level=logging.WARNING, format="workbench mcp: %(levelname)s: %(message)s")
    anyio.run(serve, url, token, backend="trio")
    return 0
