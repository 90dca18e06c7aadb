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

_MODELS = "workbench.wire.models"
_ERRORS = "workbench.wire.errors"

#: Every public name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "Client": "workbench.client.sync",
    "AsyncClient": "workbench.client.aio",
    "ExecutionStatus": "workbench.wire.status",
    "StatusName": "workbench.wire.status",
    **dict.fromkeys(
        (
            "Artifact",
            "ArtifactList",
            "Capabilities",
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
            "ItemStatus",
            "LiveEvent",
            "OutputInfo",
            "Preview",
            "Progress",
            "Usage",
            "WaitResult",
            "ExecutionKind",
            "StreamName",
            "PreviewFormat",
            "OnWaitTimeout",
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
            "InputBacklog",
            "InvalidRequest",
            "NodeUnavailable",
            "NotFound",
            "PayloadTooLarge",
            "StorageFull",
            "PreconditionFailed",
            "QuotaExceeded",
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
    from workbench.client.aio import AsyncClient as AsyncClient
    from workbench.client.sync import Client as Client
    from workbench.wire.errors import BadRequest as BadRequest
    from workbench.wire.errors import Conflict as Conflict
    from workbench.wire.errors import Forbidden as Forbidden
    from workbench.wire.errors import IdempotencyKeyReused as IdempotencyKeyReused
    from workbench.wire.errors import ImageUnavailable as ImageUnavailable
    from workbench.wire.errors import InputBacklog as InputBacklog
    from workbench.wire.errors import InvalidRequest as InvalidRequest
    from workbench.wire.errors import NodeUnavailable as NodeUnavailable
    from workbench.wire.errors import NotFound as NotFound
    from workbench.wire.errors import PayloadTooLarge as PayloadTooLarge
    from workbench.wire.errors import PreconditionFailed as PreconditionFailed
    from workbench.wire.errors import QuotaExceeded as QuotaExceeded
    from workbench.wire.errors import StorageFull as StorageFull
    from workbench.wire.errors import TooManyExecutions as TooManyExecutions
    from workbench.wire.errors import Unauthorized as Unauthorized
    from workbench.wire.errors import Unavailable as Unavailable
    from workbench.wire.errors import UnknownImage as UnknownImage
    from workbench.wire.errors import UnsupportedLanguage as UnsupportedLanguage
    from workbench.wire.errors import WorkbenchError as WorkbenchError
    from workbench.wire.models import Artifact as Artifact
    from workbench.wire.models import ArtifactList as ArtifactList
    from workbench.wire.models import CancelResult as CancelResult
    from workbench.wire.models import Capabilities as Capabilities
    from workbench.wire.models import DetachResult as DetachResult
    from workbench.wire.models import ErrorInfo as ErrorInfo
    from workbench.wire.models import Event as Event
    from workbench.wire.models import EventPage as EventPage
    from workbench.wire.models import Execution as Execution
    from workbench.wire.models import ExecutionKind as ExecutionKind
    from workbench.wire.models import ExecutionList as ExecutionList
    from workbench.wire.models import Exit as Exit
    from workbench.wire.models import ExitList as ExitList
    from workbench.wire.models import Health as Health
    from workbench.wire.models import Image as Image
    from workbench.wire.models import ImageIsolation as ImageIsolation
    from workbench.wire.models import ImageList as ImageList
    from workbench.wire.models import ItemStatus as ItemStatus
    from workbench.wire.models import LiveEvent as LiveEvent
    from workbench.wire.models import OnWaitTimeout as OnWaitTimeout
    from workbench.wire.models import OutputInfo as OutputInfo
    from workbench.wire.models import Preview as Preview
    from workbench.wire.models import PreviewFormat as PreviewFormat
    from workbench.wire.models import Progress as Progress
    from workbench.wire.models import StreamName as StreamName
    from workbench.wire.models import Usage as Usage
    from workbench.wire.models import WaitResult as WaitResult
    from workbench.wire.status import ExecutionStatus as ExecutionStatus
    from workbench.wire.status import StatusName as StatusName
