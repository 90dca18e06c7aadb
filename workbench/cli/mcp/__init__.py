"""`workbench mcp`: an MCP server over stdio that gives an agent Workbench's tools.

This module only registers the command (standard library only: the command line starts without
loading the client or the `mcp` SDK); `workbench.cli.mcp.server` serves, through the Python
client, and needs the optional dependency `mcp` (`pip install 'workbench[mcp]'`).
"""

from __future__ import annotations

import argparse
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DESCRIPTION = """Serve the Model Context Protocol over stdin and stdout, for an agent: tools to run
commands and code on a running Workbench daemon (bash, code), follow runs that outlive a wait
(execution: get, wait, cancel, logs), type into ones started with openStdin (input), list them
(list), collect the outcomes of detached ones (exits), start services that stay up (bash with
service), and read, write and list the files of a session's workspace (read_file, write_file,
list_files). It talks to the daemon found by --url /
$WORKBENCH_URL with the token of --token / $WORKBENCH_TOKEN, else the data dir's token file;
start the daemon first (`workbench serve`).
Needs the optional dependency: pip install 'workbench[mcp]'."""


def config_snippet(executable: str) -> str:
    """The JSON an agent's MCP configuration takes to start this server (with `executable`)."""
    # Written out rather than made with `json`: the command line imports nothing it does not use.
    quoted = executable.replace("\\", "\\\\").replace('"', '\\"')
    return (
        "{\n"
        '  "mcpServers": {\n'
        '    "workbench": {\n'
        f'      "command": "{quoted}",\n'
        '      "args": ["-m", "workbench", "mcp"],\n'
        '      "env": {"WORKBENCH_URL": "http://127.0.0.1:8787"}\n'
        "    }\n"
        "  }\n"
        "}"
    )


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """Register `workbench mcp` in the command line's subparsers."""
    parser = sub.add_parser(
        "mcp",
        help="serve MCP tools over stdio, for an agent",
        description=DESCRIPTION,
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="an agent's MCP configuration (e.g. .mcp.json or the client's settings):\n\n"
        + config_snippet(sys.executable)
        + "\n\nWORKBENCH_TOKEN may go in env too; without it the token file of the data dir is read.",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Serve until the agent closes stdin."""
    try:
        from workbench.cli.mcp.server import main
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        print(
            "workbench: unavailable: `workbench mcp` needs the optional dependency mcp: "
            "pip install 'workbench[mcp]'",
            file=sys.stderr,
        )
        return 1
    try:
        return main(getattr(args, "url", None), getattr(args, "token", None))
    except ValueError as exc:  # a bad --url
        print(f"workbench: usage: {exc}", file=sys.stderr)
        return 2
