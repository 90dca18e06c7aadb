"""The reference in `docs/` says what the code does: no route, error, field, option or method
missing, and none that does not exist.

`docs/api.md` names each route in a heading, ``### `METHOD /path` ``, where `[{kind}/]` stands for
the optional kind segment of per-execution routes, and each error code in a table row,
``| STATUS | `code` | ... |``. `docs/cli.md` has a ``### `workbench COMMAND` `` section per
command, `docs/python.md` a ``### `method(...)` `` heading per client method.
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import re
from pathlib import Path

import pytest

from tests.api.test_openapi import document
from tests.conftest import DaemonHandle

DOCS = Path(__file__).resolve().parents[2] / "docs"
ROUTE = re.compile(r"^### `(GET|POST|PUT|PATCH|DELETE) (/\S*)`$", re.MULTILINE)
ERROR_ROW = re.compile(r"^\| (\d{3}) \| `([a-z_]+)` \|", re.MULTILINE)
HEADING = re.compile(r"^#{2,3} ", re.MULTILINE)
#: Variables that are not the daemon's: read by the clients, or set inside executions.
CLIENT_VARIABLES = {"WORKBENCH_URL", "WORKBENCH_EXECUTION_ID", "WORKBENCH_PROGRESS"}
#: Sections that take what another describes (a code start takes a bash start's fields, `code` the
#: options of `run`), and say so.
SHARES = {"/v1/executions/workbench_code": "/v1/executions/workbench_bash", "code": "run"}


def text(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def documented_routes(markdown: str) -> set[tuple[str, str]]:
    routes = set()
    for method, path in ROUTE.findall(markdown):
        for variant in (path.replace("[{kind}/]", "{kind}/"), path.replace("[{kind}/]", "")):
            routes.add((method.lower(), variant))
    return routes


def sections(markdown: str) -> dict[str, str]:
    """Each `##`/`###` heading's line → the text up to the next heading."""
    starts = [m.start() for m in HEADING.finditer(markdown)] + [len(markdown)]
    out = {}
    for start, end in itertools.pairwise(starts):
        heading, _, body = markdown[start:end].partition("\n")
        out[heading] = body
    return out


def section_of(markdown: str, method: str, path: str) -> str:
    """The section of a route, and of the route whose fields it shares."""
    for heading, body in sections(markdown).items():
        match = ROUTE.match(heading)
        if match and match.group(1).lower() == method and (method, path) in documented_routes(heading):
            return body + (section_of(markdown, method, SHARES[path]) if path in SHARES else "")
    raise AssertionError(f"no section for {method} {path}")


async def test_every_route_is_documented_and_no_other(wb: DaemonHandle) -> None:
    doc = await document(wb)
    served = {(method, path) for path, item in doc["paths"].items() for method in item}
    described = documented_routes(text("api.md"))
    assert served - described == set(), "routes missing from docs/api.md"
    assert described - served == set(), "docs/api.md describes routes that do not exist"


async def test_every_error_code_is_documented_with_its_status(wb: DaemonHandle) -> None:
    doc = await document(wb)
    codes = {(r["x-http-status"], code) for code, r in doc["components"]["responses"].items()}
    assert {code for _, code in codes} == set(doc["components"]["schemas"]["ErrorCode"]["enum"])
    table = {(int(status), code) for status, code in ERROR_ROW.findall(text("api.md"))}
    assert codes - table == set(), "error codes missing from docs/api.md (or with another status)"
    assert table - codes == set(), "docs/api.md lists error codes that do not exist"


async def test_fields_parameters_and_enums_are_documented(wb: DaemonHandle) -> None:
    """Every field of the record and of events, every body field and query parameter (in its
    route's section, with its integer bounds), and every value of every enum."""
    doc = await document(wb)
    api = text("api.md")
    schemas = doc["components"]["schemas"]
    for name in ("Execution", "Event", "Exit", "Image", "OutputInfo", "Artifact", "ErrorInfo", "Preview"):
        for field in schemas[name]["properties"]:
            assert f"`{field}`" in api or f'"{field}"' in api, (name, field)
    for name in (
        "ExecutionKind",
        "ExecutionStatus",
        "EventType",
        "StreamName",
        "Containment",
        "PreviewFormat",
    ):
        for value in schemas[name]["enum"]:
            assert f"`{value}`" in api, (name, value)
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            section = section_of(api, method, path)
            for param in operation.get("parameters", []):
                if param["in"] != "path":
                    # `name`, or a header as it is sent (`Range: bytes=0-9`)
                    assert re.search(rf"`{re.escape(param['name'])}[`:]", section), (path, param["name"])
                    if param["schema"].get("type") == "integer" and param["schema"]["maximum"] < 2**63 - 1:
                        assert f"{param['schema']['maximum']}" in section, (path, param["name"])
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body is None:
                continue
            model = schemas[body["schema"]["$ref"].rsplit("/", 1)[1]]
            for field, schema in model["properties"].items():
                assert f"`{field}`" in section or f'"{field}"' in section, (path, field)
                bounds = next((b for b in schema.get("anyOf", [schema]) if b.get("type") == "integer"), None)
                if bounds is not None and "maximum" in bounds:
                    assert str(bounds["maximum"]) in section, (path, field, bounds["maximum"])


def test_every_daemon_setting_is_documented_and_no_other() -> None:
    from workbench.core.settings import Settings
    from workbench.wire.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        Settings.load(environ={"WORKBENCH_NO_SUCH_SETTING": "1"})
    known = set(re.findall(r"WORKBENCH_[A-Z_]+", caught.value.message.partition("known settings:")[2]))
    assert "WORKBENCH_DATA_DIR" in known
    api = text("api.md")
    configuration = api[api.index("## Configuration") :]
    mentioned = set(re.findall(r"`(WORKBENCH_[A-Z_]+)`", configuration))
    assert known - mentioned == set(), "settings missing from the configuration of docs/api.md"
    # The section also names the variables the daemon leaves alone (its clients', its executions').
    assert mentioned - known == CLIENT_VARIABLES, "docs/api.md configures variables the daemon does not know"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from workbench.cli.main import build_parser

    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_every_command_and_option_is_documented() -> None:
    cli = text("cli.md")
    by_heading = {
        m.group(1): body
        for heading, body in sections(cli).items()
        if (m := re.fullmatch(r"### `workbench (\S+)`", heading))
    }
    commands = _subcommands()
    assert set(by_heading) == set(commands)
    common = {"--url", "--token", "-h", "--help"}
    for name, parser in commands.items():
        for action in parser._actions:
            for option in action.option_strings:
                if option in common:
                    assert f"`{option} " in cli or f"`{option}`" in cli, option
                    continue
                where = by_heading[name] + by_heading.get(SHARES.get(name, ""), "")
                assert re.search(rf"`{re.escape(option)}[ `]", where), (name, option)


def _public(cls: type) -> set[str]:
    return {n for n, v in vars(cls).items() if not n.startswith("_") and callable(v)}


def test_every_client_method_is_documented_and_no_other() -> None:
    from workbench import AsyncClient, Client

    python = text("python.md")
    headings = set(re.findall(r"^### `([a-z_]+)\(", python, re.MULTILINE))
    methods = _public(Client) - {"close"}
    assert methods == _public(AsyncClient) - {"aclose"}, "the twins have the same methods"
    assert methods - headings == set(), "client methods missing from docs/python.md"
    assert headings - methods == set(), "docs/python.md describes methods that do not exist"
    assert "`close()`" in python and "aclose()" in python
    for name, method in inspect.getmembers(Client, inspect.isfunction):
        if name in methods:
            heading = re.search(rf"^### `{name}\((.*)\)`$", python, re.MULTILINE)
            assert heading is not None, name
            for param in list(inspect.signature(method).parameters)[1:]:
                assert param in heading.group(1), (name, param)


def test_every_public_name_of_the_package_is_documented() -> None:
    import workbench

    python = text("python.md")
    for name in workbench.__all__:
        assert f"`{name}`" in python or f"`{name}(" in python, name


def test_the_docs_speak_of_the_project_only() -> None:
    for page in ("api.md", "cli.md", "python.md"):
        content = text(page)
        for foreign in ("/work/", "/tmp/", "localhost:"):
            assert foreign not in content, (page, foreign)
