"""The one error hierarchy of Workbench. The API maps each `code` to an HTTP status in one table.

    WorkbenchError                      (code "internal")
    ├── ConfigError                     a setting or an image file is wrong; the daemon does not start
    ├── BadRequest                      bad_request: malformed JSON, bad query parameters
    ├── Unauthorized                    unauthorized: missing or wrong token
    ├── Forbidden                       forbidden: the token lacks the scope
    ├── NotFound                        not_found: unknown execution, artifact, route (or another's)
    ├── Conflict                        conflict: e.g. deleting an execution that is not terminal
    ├── PreconditionFailed              precondition_failed: an `If-Match` that no longer holds
    ├── PayloadTooLarge                 payload_too_large: body over the limit
    ├── InvalidRequest                  invalid_request: fails validation; `details` lists the fields
    │   ├── IdempotencyKeyReused        the same key with a different body
    │   ├── UnknownImage                no image by that name
    │   ├── ImageUnavailable            the image exists but cannot run on this machine
    │   └── UnsupportedLanguage         the image has no such language
    ├── TooManyExecutions               too_many_executions: the queue is full
    ├── QuotaExceeded                   quota_exceeded: a write past a session's workspace quota
    └── Unavailable                     unavailable: shutting down, or the store failed
        ├── StorageFull                 storage_full: the disk holding the data dir is full
        └── NodeUnavailable             node_unavailable: the node holding an artifact cannot be reached

The client SDK raises the same classes, rebuilt from the JSON error of a response.
"""

from __future__ import annotations

from typing import Any, ClassVar


class WorkbenchError(Exception):
    """Something went wrong inside Workbench."""

    code: ClassVar[str] = "internal"

    def __init__(self, message: str | None = None, *, details: Any = None) -> None:
        self.message = message or (self.__doc__ or self.code).strip().splitlines()[0]
        self.details = details
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        """The `{"error": {...}}` body of `API.md`."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            body["details"] = self.details
        return {"error": body}


class ConfigError(WorkbenchError):
    """The configuration is invalid."""

    code = "config_error"


class BadRequest(WorkbenchError):
    """The request is malformed."""

    code = "bad_request"


class Unauthorized(WorkbenchError):
    """A valid bearer token is required."""

    code = "unauthorized"


class Forbidden(WorkbenchError):
    """The token lacks the scope for this route."""

    code = "forbidden"


class NotFound(WorkbenchError):
    """Not found."""

    code = "not_found"


class Conflict(WorkbenchError):
    """The request conflicts with the current state."""

    code = "conflict"


class PreconditionFailed(WorkbenchError):
    """The file changed since the version the request names (`If-Match`, `If-None-Match`)."""

    code = "precondition_failed"


class PayloadTooLarge(WorkbenchError):
    """The request body is too large."""

    code = "payload_too_large"


class InvalidRequest(WorkbenchError):
    """The request failed validation."""

    code = "invalid_request"


class IdempotencyKeyReused(InvalidRequest):
    """This Idempotency-Key was used with a different request body."""

    code = "idempotency_key_reused"


class UnknownImage(InvalidRequest):
    """No image by that name."""

    code = "unknown_image"


class ImageUnavailable(InvalidRequest):
    """The image cannot run on this machine."""

    code = "image_unavailable"


class UnsupportedLanguage(InvalidRequest):
    """The image does not support that language."""

    code = "unsupported_language"


class TooManyExecutions(WorkbenchError):
    """The execution queue is full; try again later."""

    code = "too_many_executions"


class QuotaExceeded(WorkbenchError):
    """The write would take the session's workspace past its byte quota."""

    code = "quota_exceeded"


class InputBacklog(WorkbenchError):
    """The execution has not read the input sent before; nothing of this input was taken."""

    code = "input_backlog"


class Unavailable(WorkbenchError):
    """The daemon cannot take this request now."""

    code = "unavailable"


class StorageFull(Unavailable):
    """The disk holding the data dir is full: nothing can be written until space is freed."""

    code = "storage_full"


class NodeUnavailable(Unavailable):
    """The node that holds what was asked for (an artifact) cannot be reached now."""

    code = "node_unavailable"


#: Every error class by its wire code, for the client SDK.
BY_CODE: dict[str, type[WorkbenchError]] = {
    cls.code: cls
    for cls in (
        WorkbenchError,
        ConfigError,
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        Conflict,
        PreconditionFailed,
        PayloadTooLarge,
        InvalidRequest,
        IdempotencyKeyReused,
        UnknownImage,
        ImageUnavailable,
        UnsupportedLanguage,
        TooManyExecutions,
        QuotaExceeded,
        InputBacklog,
        Unavailable,
        StorageFull,
        NodeUnavailable,
    )
}
