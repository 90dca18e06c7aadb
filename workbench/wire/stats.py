"""The wire shapes of retention: what the store holds (`GET /v1/stats`) and a bulk delete's answer."""

from __future__ import annotations

from workbench.wire.models import WireModel


class Stats(WireModel):
    """`GET /v1/stats`: the caller's executions by status, and the sizes on disk."""

    executions: dict[str, int]
    """Every status, with how many of the caller's executions have it (`admin`: everyone's)."""
    store_bytes: int
    """The store's size on disk (for SQLite: the database file with its WAL)."""
    store_free_bytes: int
    """Of `store_bytes`, what deleted rows left free inside the store, not yet given back."""
    data_dir_bytes: int
    """What the data dir takes on disk, the store and every execution's files included."""
    retention_ms: int | None = None
    """`WORKBENCH_RETENTION` in milliseconds (None: everything is kept)."""


class DeleteResult(WireModel):
    """`DELETE /v1/executions?status=&before=`: how many executions were deleted."""

    deleted: int
