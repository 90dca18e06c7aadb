"""The Python SDK: `Client` (sync) and `AsyncClient`, twins built from one description of each call.

Names are imported on first use: the command line imports `workbench.client.config` and
`workbench.client.sse` without loading httpx or pydantic.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False

_EXPORTS = {"Client": "workbench.client.sync", "AsyncClient": "workbench.client.aio"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench.client' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:
    from workbench.client.aio import AsyncClient as AsyncClient
    from workbench.client.sync import Client as Client
