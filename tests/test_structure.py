"""The code stays readable in pieces: every module of the programs people run (`sandbox`,
`workbench`, `api`), of the tests and benchmarks, of the TypeScript client and of the dashboard
under 500 lines, and every function of the programs under 80 (benchmark rows and test scenarios,
which read top to bottom, may be longer)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ("sandbox", "workbench", "api")
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# The TypeScript client's sources and the dashboard's scripts, as (folder, pattern).
SCRIPTS = (("clients/typescript/src", "*.ts"), ("api/ui", "*.js"))
# Generated from the daemon's /openapi.json (scripts/generate.mjs), never edited by hand: exempt.
GENERATED = ("clients/typescript/src/generated/openapi.ts",)


def _modules(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _scripts() -> list[Path]:
    found = (p for folder, pattern in SCRIPTS for p in (ROOT / folder).rglob(pattern))
    return sorted(p for p in found if p.relative_to(ROOT).as_posix() not in GENERATED)


def test_every_module_is_under_500_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _modules(*PROGRAMS, "tests", "bench")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules (lines): {long}"


def test_every_script_of_the_client_and_the_dashboard_is_under_500_lines() -> None:
    scripts = _scripts()
    assert ROOT / "clients/typescript/src/client.ts" in scripts
    assert ROOT / "api/ui/app.js" in scripts
    long = {
        p.relative_to(ROOT).as_posix(): n
        for p in scripts
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_MODULE_LINES
    }
    assert long == {}, f"split these scripts (lines): {long}"


def test_every_function_of_the_programs_is_at_most_80_lines() -> None:
    long: dict[str, int] = {}
    for path in _modules(*PROGRAMS):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = size
    assert long == {}, f"split these functions (lines): {long}"
