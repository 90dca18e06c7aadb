"""Who is asking: a principal's name, its scopes, and the quotas of its token."""

from __future__ import annotations

from dataclasses import dataclass

ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    """Who is asking: a name and its scopes. `admin` sees every execution.

    `max_concurrent` and `max_queued` (from the tokens file; None: only the daemon's limits)
    bound how many of the principal's executions run at once and how many may wait for a slot,
    so that one principal cannot take every slot of the daemon; `max_contexts` how many of its
    code contexts may live at once.
    """

    name: str
    scopes: frozenset[str]
    max_concurrent: int | None = None
    max_queued: int | None = None
    max_contexts: int | None = None

    @property
    def sees_all(self) -> bool:
        return self.name == ADMIN

    @property
    def key(self) -> str:
        """The principal's key of the concurrency slots (`live.Slots`)."""
        return principal_key(self.name)


def principal_key(name: str) -> str:
    return f"principal:{name}"
