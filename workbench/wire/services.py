"""The wire shapes of services: the start fields of a bash execution meant to stay up, and its
readiness (see `docs/api.md`, "Services"). `models.StartBashRequest` takes them from here."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic.alias_generators import to_camel

#: The longest `readiness.logPattern` (a regular expression).
MAX_LOG_PATTERN = 1000
#: `readyTimeoutMs` when a service with a readiness check gives none.
DEFAULT_READY_TIMEOUT_MS = 60_000
#: The longest `readyTimeoutMs`: the longest deadline (`models.MAX_TIMEOUT_MS`, checked there).
MAX_READY_TIMEOUT_MS = 86_400_000

#: The configuration of request bodies (`models.RequestModel`'s): unknown fields are an error;
#: in a response (a record's `readiness`) every field is present.
_REQUEST = ConfigDict(
    alias_generator=to_camel,
    populate_by_name=False,
    frozen=True,
    extra="forbid",
    strict=True,
    use_attribute_docstrings=True,
    json_schema_serialization_defaults_required=True,
)


def _integer(value: Any) -> Any:
    # JSON true or "100" is not a number, whatever lax parsing would make of it.
    if isinstance(value, bool | str):
        raise ValueError(f"must be an integer, not a {'boolean' if isinstance(value, bool) else 'string'}")
    return value


class Readiness(BaseModel):
    """When a service is ready: something of its tree listens on `port`, or its output matches
    `logPattern`. Exactly one of the two."""

    model_config = _REQUEST

    port: int | None = Field(default=None, ge=1, le=65535)
    """A TCP port that a process of the service's tree listens on once it is ready."""
    log_pattern: str | None = Field(default=None, min_length=1, max_length=MAX_LOG_PATTERN)
    """A regular expression (Python syntax) searched in each line of its stdout and stderr."""

    @field_validator("port", mode="before")
    @classmethod
    def _integers(cls, value: Any) -> Any:
        return _integer(value)

    @field_validator("log_pattern")
    @classmethod
    def _pattern(cls, value: str | None) -> str | None:
        if value is not None:
            if "\x00" in value:
                raise ValueError("logPattern must not contain NUL bytes")
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"logPattern is not a regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _one_of(self) -> Readiness:
        if (self.port is None) == (self.log_pattern is None):
            raise ValueError("readiness takes exactly one of port and logPattern")
        return self


class ServiceFields(BaseModel):
    """The fields of a bash start that make it a service."""

    model_config = _REQUEST

    service: bool = False
    """Meant to stay up: no default deadline, and its background processes live on after the
    command's own process exits, until the tree is empty or it is cancelled."""
    readiness: Readiness | None = None
    """When the service is ready (`ready: true` and a `ready` event); needs `service`."""
    ready_timeout_ms: int | None = Field(default=None, ge=1, le=MAX_READY_TIMEOUT_MS)
    """How long it may take to be ready (default 60000): then it is killed and ends `timed_out`
    (`error.code` `ready_timeout`); needs `readiness`."""

    @field_validator("service", mode="before")
    @classmethod
    def _service_boolean(cls, value: Any) -> Any:
        if not isinstance(value, bool):
            raise ValueError("must be true or false")
        return value

    @field_validator("ready_timeout_ms", mode="before")
    @classmethod
    def _ready_integer(cls, value: Any) -> Any:
        return _integer(value)

    @field_validator("readiness")
    @classmethod
    def _needs_service(cls, value: Readiness | None, info: ValidationInfo) -> Readiness | None:
        if value is not None and not info.data.get("service"):
            raise ValueError("readiness needs service: true")
        return value

    @field_validator("ready_timeout_ms")
    @classmethod
    def _needs_readiness(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("readiness") is None:
            raise ValueError("readyTimeoutMs needs readiness")
        return value
