"""The ground the wire models stand on: the base classes (camelCase on the wire, unknown request
fields refused) and the names of kinds, event types and streams. Imports nothing of `workbench`
but itself; `models` re-exports every name."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

ExecutionKind = Literal["workbench_bash", "workbench_code", "batch"]
EXECUTION_KINDS: tuple[str, ...] = ("workbench_bash", "workbench_code", "batch")
#: The kinds that run a process tree (a batch runs executions of these kinds).
ProcessKind = Literal["workbench_bash", "workbench_code"]
PROCESS_KINDS: tuple[str, ...] = ("workbench_bash", "workbench_code")
EventType = Literal[
    "status",
    "output",
    "output_truncated",
    "progress",
    "artifact",
    "signal",
    "item",
    "ready",
    "input",
    "resize",
]
EVENT_TYPES: tuple[str, ...] = (
    "status",
    "output",
    "output_truncated",
    "progress",
    "artifact",
    "signal",
    "item",
    "ready",
    "input",
    "resize",
)
StreamName = Literal["stdout", "stderr"]

PreviewFormat = Literal["raw", "plain"]
OnWaitTimeout = Literal["return", "detach", "cancel"]


class WireModel(BaseModel):
    """camelCase aliases on the wire; attributes by their Python names too."""

    # Responses carry every field, defaults included: the schema says they are always there.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        use_attribute_docstrings=True,
        json_schema_serialization_defaults_required=True,
    )

    def wire(self) -> dict[str, Any]:
        """The JSON-able dict of this model as it goes on the wire."""
        return self.model_dump(mode="json", by_alias=True)


class RequestModel(WireModel):
    """A request body: unknown fields are an error, not silently ignored; types are strict (JSON
    `1` is not `true`, `1000.0` not an integer, `"5"` not a number)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=False,
        frozen=True,
        extra="forbid",
        strict=True,
        use_attribute_docstrings=True,
    )
