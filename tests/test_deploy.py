"""The deployment files under `deploy/`: every YAML file parses, and every `WORKBENCH_*` variable
they (and their README) name is one the daemon or its clients know. No cluster is started."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from workbench.core.settings import _CLIENT_ONLY, _ENV

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
VARIABLE = re.compile(r"\bWORKBENCH_[A-Z0-9_]+\b")


def deploy_files(*suffixes: str) -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.is_file() and p.suffix in suffixes)


def test_the_deploy_files_are_there() -> None:
    names = {p.relative_to(DEPLOY).as_posix() for p in deploy_files(".yaml", ".md")}
    assert {
        "compose.yaml",
        "kubernetes/README.md",
        "kubernetes/daemonset.yaml",
        "kubernetes/service.yaml",
        "kubernetes/secret.yaml",
    } <= names


def test_every_yaml_file_parses() -> None:
    yaml = pytest.importorskip("yaml")  # PyYAML, when installed (the dev extra brings it)
    kinds: set[object] = set()
    for path in deploy_files(".yaml", ".yml"):
        documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
        assert documents, f"{path} holds no YAML document"
        kinds.update(d.get("kind") for d in documents if isinstance(d, dict))
    assert {"DaemonSet", "Service", "Secret"} <= kinds


def test_every_variable_they_name_is_known() -> None:
    known = set(_ENV) | set(_CLIENT_ONLY)
    for path in deploy_files(".yaml", ".yml", ".md"):
        named = set(VARIABLE.findall(path.read_text(encoding="utf-8")))
        assert named - known == set(), f"{path.relative_to(DEPLOY)} names variables nothing reads"
    daemonset = (DEPLOY / "kubernetes" / "daemonset.yaml").read_text(encoding="utf-8")
    for needed in ("WORKBENCH_NODE_ID", "WORKBENCH_NODE_URL", "WORKBENCH_TLS_CERT", "WORKBENCH_TLS_KEY"):
        assert needed in daemonset
