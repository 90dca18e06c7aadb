"""The layering of DESIGN.md, checked on the imports (parsed with `ast`, never executed).

By folder: `wire` ← `client` ← `cli`; `wire` ← `core` ← `api`; `core` → `sandbox`; `sandbox`
knows none of them. The CLI's `serve` starts `api`: the one arrow back up, in one file. And no
module imports another that imports it back, directly or through others.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STDLIB = set(sys.stdlib_module_names)
HTTP_STACK = {"quart", "quart_trio", "hypercorn", "h11", "werkzeug", "quart_schema"}

#: Each layer (a folder) and the layers of this project it may import.
MAY_IMPORT: dict[str, set[str]] = {
    "sandbox": {"sandbox"},
    "workbench.wire": {"workbench.wire"},
    "workbench.client": {"workbench.wire", "workbench.client"},
    "workbench.cli": {"workbench.wire", "workbench.client", "workbench.cli"},
    "workbench.core": {"workbench.wire", "workbench.core", "sandbox"},
    "api": {"api", "workbench.core", "workbench.wire"},
}
#: Third-party packages each layer may import (beyond the standard library).
THIRD_PARTY: dict[str, set[str]] = {
    "sandbox": {"trio", "psutil"},
    "workbench.wire": {"pydantic"},
    "workbench.client": {"httpx", "pydantic", "trio", "anyio", "sniffio"},
    "workbench.cli": {"mcp", "anyio", "trio", "httpx", "pydantic"},
    "workbench.core": {"trio", "psutil", "pydantic", "httpx", "psycopg", "prometheus_client"},
    "api": {"trio", "pydantic", "psutil", "prometheus_client"} | HTTP_STACK,
}
#: The composition root: the CLI's `serve` starts the HTTP face.
ALLOWED_EXTRA = {("workbench/cli/main.py", "api")}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module a file imports (absolute names; relative imports resolved in `package`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        me = module_name(path)
        package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.add(module)
            # `from pkg import sub` imports the module pkg.sub when there is one.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def layer_of(module: str) -> str | None:
    """The layer (key of MAY_IMPORT) a module belongs to, longest match first."""
    for layer in sorted(MAY_IMPORT, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def sources() -> list[Path]:
    paths: list[Path] = []
    for package in ("sandbox", "workbench", "api"):
        paths.extend(sorted((ROOT / package).rglob("*.py")))
    return paths


PROJECT = {module_name(p) for p in sources()}


def project_imports(path: Path) -> set[str]:
    return {m for m in imported_modules(path) if m in PROJECT}


def test_every_module_is_in_a_layer() -> None:
    loose = [m for m in PROJECT if layer_of(m) is None and m not in {"workbench", "workbench.__main__"}]
    assert not loose, f"modules outside every layer: {loose}"


def test_layers_import_only_what_they_may() -> None:
    wrong: list[str] = []
    for path in sources():
        me = module_name(path)
        layer = layer_of(me)
        if layer is None:
            continue
        rel = str(path.relative_to(ROOT))
        for module in imported_modules(path):
            top = module.split(".")[0]
            if top in STDLIB or top == "__future__":
                continue
            if top in {"workbench", "api", "sandbox"}:
                target = layer_of(module)
                if target is None or (module not in PROJECT and module in {"workbench"}):
                    continue  # `from workbench import X` for the lazy names is checked below
                if target not in MAY_IMPORT[layer] and (rel, target.split(".")[0]) not in ALLOWED_EXTRA:
                    wrong.append(f"{rel}: imports {module} ({layer} → {target})")
            elif top not in THIRD_PARTY[layer]:
                wrong.append(f"{rel}: imports the third-party {top}")
    assert not wrong, "\n".join(wrong)


def test_only_the_root_package_uses_the_lazy_names() -> None:
    """`from workbench import X` goes through the package's lazy exports: only tests and users."""
    for path in sources():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "workbench" and node.level == 0:
                names = {a.name for a in node.names}
                assert names <= {"__version__"}, f"{path}: from workbench import {names}"


def test_no_import_circles() -> None:
    graph = {module_name(p): project_imports(p) - {module_name(p)} for p in sources()}
    # A package's __init__ importing its own submodules is how a package exposes them.
    for name, deps in graph.items():
        graph[name] = {d for d in deps if not (d.startswith(name + ".") and name in PROJECT)}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycles.append([*stack[stack.index(dep) :], dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import circles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_checker_sees_a_wrong_arrow(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from api.app import create_app\nimport workbench.core.store\nfrom . import x\n")
    found = imported_modules(bad, package="workbench.cli")
    assert {"api.app", "workbench.core.store", "workbench.cli.x"} <= found
    assert layer_of("workbench.cli.main") == "workbench.cli"
    assert layer_of("workbench.core.store.sqlite") == "workbench.core"
    assert "api" not in MAY_IMPORT["workbench.core"]
