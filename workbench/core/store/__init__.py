"""The store: its interface (`base`), typed rows (`rows`), wake-ups (`watch`) and its engines.

SQLite (`sqlite`) is the embedded engine. `open_store` picks the engine for the settings.
"""

from __future__ import annotations

from workbench.core.store.base import Pending, Store
from workbench.core.store.rows import (
    ArtifactRow,
    EventRow,
    EventsRead,
    ExecutionRow,
    ExitLease,
    Found,
    ListFilter,
)
from workbench.core.store.watch import Watch, Watches

__all__ = [
    "ArtifactRow",
    "EventRow",
    "EventsRead",
    "ExecutionRow",
    "ExitLease",
    "Found",
    "ListFilter",
    "Pending",
    "Store",
    "Watch",
    "Watches",
]
