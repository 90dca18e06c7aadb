"""Workbench: durable, contained, streamable executions of bash commands and code.

The public surface of the package: the clients, the wire models and the errors.

    from workbench import Client, NotFound

Names are imported on first use, so that `workbench` on the command line starts without loading
the client's dependencies (httpx, pydantic) or the daemon's.
"""

from __future__ import annotations

import importlib

# Not `from typing import TYPE_CHECKING`: importing typing costs the command line's start time.
TYPE_CHECKING = False

__version__ = "0.1.0"

_MODELS = "workbench.models"
_ERRORS = "workbench.errors"

#: Every public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "Client": "workbench.client",
    "AsyncClient": "workbench._client_async",
    "ExecutionStatus": "workbench.status",
    **dict.fromkeys(
        (
            "Artifact",
            "ArtifactList",
            "CancelResult",
            "DetachResult",
            "ErrorInfo",
            "Event",
            "EventPage",
            "Execution",
            "ExecutionList",
            "Exit",
            "ExitList",
            "Health",
            "Image",
            "ImageIsolation",
            "ImageList",
            "LiveEvent",
            "OutputInfo",
            "WaitResult",
        ),
        _MODELS,
    ),
    **dict.fromkeys(
        (
            "WorkbenchError",
            "BadRequest",
            "Conflict",
            "Forbidden",
            "IdempotencyKeyReused",
            "ImageUnavailable",
            "InvalidRequest",
            "NotFound",
            "PayloadTooLarge",
            "TooManyExecutions",
            "Unauthorized",
            "Unavailable",
            "UnknownImage",
            "UnsupportedLanguage",
        ),
        _ERRORS,
    ),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:
    from workbench._client_async import AsyncClient as AsyncClient
    from workbench.client import Client as Client
    from workbench.errors import BadRequest as BadRequest
    from workbench.errors import Conflict as Conflict
    from workbench.errors import Forbidden as Forbidden
    from workbench.errors import IdempotencyKeyReused as IdempotencyKeyReused
    from workbench.errors import ImageUnavailable as ImageUnavailable
    from workbench.errors import InvalidRequest as InvalidRequest
    from workbench.errors import NotFound as NotFound
    from workbench.errors import PayloadTooLarge as PayloadTooLarge
    from workbench.errors import TooManyExecutions as TooManyExecutions
    from workbench.errors import Unauthorized as Unauthorized
    from workbench.errors import Unavailable as Unavailable
    from workbench.errors import UnknownImage as UnknownImage
    from workbench.errors import UnsupportedLanguage as UnsupportedLanguage
    from workbench.errors import WorkbenchError as WorkbenchError
    from workbench.models import Artifact as Artifact
    from workbench.models import ArtifactList as ArtifactList
    from workbench.models import CancelResult as CancelResult
    from workbench.models import DetachResult as DetachResult
    from workbench.models import ErrorInfo as ErrorInfo
    from workbench.models import Event as Event
    from workbench.models import EventPage as EventPage
    from workbench.models import Execution as Execution
    from workbench.models import ExecutionList as ExecutionList
    from workbench.models import Exit as Exit
    from workbench.models import ExitList as ExitList
    from workbench.models import Health as Health
    from workbench.models import Image as Image
    from workbench.models import ImageIsolation as ImageIsolation
    from workbench.models import ImageList as ImageList
    from workbench.models import LiveEvent as LiveEvent
    from workbench.models import OutputInfo as OutputInfo
    from workbench.models import WaitResult as WaitResult
    from workbench.status import ExecutionStatus as ExecutionStatus
