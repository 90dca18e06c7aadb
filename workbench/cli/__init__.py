"""The `workbench` command line. It talks to a daemon over HTTP only; `serve` starts `api`."""

from __future__ import annotations

from workbench.cli.main import main

__all__ = ["main"]
