"""The layering of DESIGN.md: api → workbench → sandbox, never back (checked on the imports)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THIRD_PARTY_SANDBOX = {"trio", "psutil"}
HTTP_STACK = {"quart", "quart_trio", "hypercorn", "werkzeug"}
#: The composition root: the CLI's `serve` starts the HTTP face.
ALLOWED_API_IMPORTS = {("workbench", "cli.py")}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_sandbox_imports_only_stdlib_trio_and_psutil() -> None:
    import sys

    stdlib = set(sys.stdlib_module_names)
    for path in modules("sandbox"):
        for name in imports(path):
            assert name in stdlib or name in THIRD_PARTY_SANDBOX or name == "sandbox", (
                f"{path}: imports {name}"
            )


def test_workbench_never_imports_api_or_the_http_server() -> None:
    for path in modules("workbench"):
        found = imports(path)
        if (path.parent.name, path.name) not in ALLOWED_API_IMPORTS:
            assert "api" not in found, f"{path}: imports api"
        assert not found & HTTP_STACK, f"{path}: imports {found & HTTP_STACK}"


def test_sandbox_never_imports_upward() -> None:
    for path in modules("sandbox"):
        assert not imports(path) & {"workbench", "api"}, f"{path} imports a higher layer"


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from api.app import create_app\nimport workbench.store\n")
    assert {"api", "workbench"} <= imports(bad)
