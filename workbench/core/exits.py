"""The exits feed: at-least-once delivery of detached executions' outcomes, and the webhook.

An exit is saved in the transaction that records its execution's terminal status (see
`Executor.finish`). Consumers lease exits: a leased exit is hidden for `leaseMs`, then handed out
again with `attempt + 1`, until it is acked; leases and acks are rows of the store, so this holds
across restarts. Handing out is one guarded UPDATE in the store's single writer, so two consumers
never hold a lease on one exit at once. The webhook is a consumer too, but only while it posts:
after a failed delivery it gives its lease back and keeps its backoff in a column of its own
(`webhook_after`), which hides the exit from the webhook alone, so that readers of the feed see
it (and may lease it) meanwhile. Long-polls sleep on the journal's terminal wake-up (and,
when exits are leased out, until the earliest lease ends): never a timer poll.
"""

from __future__ import annotations

import json
import logging
from functools import partial
from typing import Any

import httpx
import trio

from workbench.core.records import now_ms
from workbench.core.service import Principal
from workbench.core.store import Store
from workbench.core.waiting import first_of
from workbench.wire.errors import NotFound, Unavailable

log = logging.getLogger("workbench.core.exits")

#: Webhook: how many exits are in flight at once, per POST timeout, the lease that covers one
#: attempt (longer than the timeout, so an exit is never sent twice at once), and the backoff
#: (which hides an exit from the webhook alone).
WEBHOOK_CONCURRENCY = 8
WEBHOOK_TIMEOUT_S = 10.0
WEBHOOK_LEASE_MS = 15_000
BACKOFF_FIRST_MS = 1_000
BACKOFF_MAX_MS = 300_000
#: How soon the webhook asks again for exits after the store refused to lease them.
_STORE_RETRY_S = 1.0


def exit_json(delivery_id: str, body: str, attempt: int) -> dict[str, Any]:
    """The wire shape of an exit (API.md, "Detached executions and the exits feed")."""
    data: dict[str, Any] = json.loads(body)
    return {"deliveryId": delivery_id, **data, "attempt": attempt}


class ExitsFeed:
    """Leasing, long-polling and acking exits."""

    def __init__(self, store: Store, stopping: trio.Event) -> None:
        self._store = store
        self._stopping = stopping

    async def lease(
        self, principal: Principal | None, limit: int, lease_ms: int, *, webhook: bool = False
    ) -> list[dict[str, Any]]:
        """Hand out up to `limit` exits that are neither acked nor leased (None: every principal);
        to the `webhook`, not those whose failed delivery it tries again later."""
        owner = None if principal is None or principal.sees_all else principal.name
        now = now_ms()
        rows = await self._store.lease_exits(owner, now, lease_ms, limit, webhook=webhook)
        return [exit_json(e.delivery_id, e.body, e.attempt) for e in rows]

    async def poll(
        self, principal: Principal | None, limit: int, wait_ms: int, lease_ms: int, *, webhook: bool = False
    ) -> list[dict[str, Any]]:
        """Wait up to `wait_ms` for exits to hand out; returns at once when there are some."""
        owner = None if principal is None or principal.sees_all else principal.name
        watch = self._store.watches.exits
        with trio.move_on_after(wait_ms / 1000):
            while not self._stopping.is_set():
                seen = watch.version
                exits = await self.lease(principal, limit, lease_ms, webhook=webhook)
                if exits:
                    return exits
                next_end = await self._store.next_exit_lease_end(owner, webhook=webhook)
                # Sleep until a new exit is saved, or until a leased-out one comes back.
                wake_at = (
                    trio.current_time() + max(0, next_end - now_ms()) / 1000 if next_end else float("inf")
                )
                with trio.move_on_at(wake_at):
                    await first_of(partial(watch.wait_changed, seen), self._stopping.wait)
        return []

    async def ack(self, principal: Principal, delivery_id: str) -> None:
        """Mark an exit delivered (acking twice is fine). NotFound for an unknown or another's."""
        owner = None if principal.sees_all else principal.name
        if not await self._store.ack_exit(delivery_id, owner, now_ms()):
            raise NotFound(f"no exit {delivery_id}")


class Webhook:
    """POSTs each exit as JSON to the operator's URL, acks it on a 2xx, retries with backoff.

    Runs in the daemon's nursery; a slow or failing receiver only delays its own deliveries.
    """

    def __init__(self, url: str, feed: ExitsFeed, store: Store) -> None:
        self.url = url
        self._feed = feed
        self._store = store
        self._slots = trio.Semaphore(WEBHOOK_CONCURRENCY)

    async def run(self) -> None:
        """Deliver until cancelled."""
        async with httpx.AsyncClient(timeout=WEBHOOK_TIMEOUT_S) as client, trio.open_nursery() as nursery:
            while True:
                await self._slots.acquire()
                self._slots.release()  # hand out exits only when a delivery slot is free
                try:
                    exits = await self._feed.poll(
                        None, self._slots.value, 30_000, WEBHOOK_LEASE_MS, webhook=True
                    )
                except Unavailable as exc:  # a lease is a write: a full disk refuses it for a while
                    log.warning("webhook: cannot hand out exits now: %s", exc)
                    await trio.sleep(_STORE_RETRY_S)
                    continue
                for item in exits:
                    await self._slots.acquire()
                    nursery.start_soon(self._deliver, client, item)

    async def _deliver(self, client: httpx.AsyncClient, item: dict[str, Any]) -> None:
        try:
            delivery_id, attempt = item["deliveryId"], item["attempt"]
            try:
                response = await client.post(self.url, json=item, headers={"Idempotency-Key": delivery_id})
                ok = 200 <= response.status_code < 300
                why = f"HTTP {response.status_code}"
            except httpx.HTTPError as exc:
                ok, why = False, f"{type(exc).__name__}: {exc}"
            try:  # either ends its lease: acked, or given back while the webhook waits to retry
                if ok:
                    await self._store.ack_exit(delivery_id, None, now_ms())
                    return
                retry_ms = _backoff_ms(attempt)
                log.warning(
                    "webhook: exit %s not delivered (%s); retrying in %d ms", delivery_id, why, retry_ms
                )
                await self._store.defer_exit_webhook(delivery_id, attempt, now_ms() + retry_ms)
            except Unavailable as exc:
                # Not recorded: its lease runs out and it is handed out again (at least once).
                log.warning("webhook: exit %s: could not record the delivery: %s", delivery_id, exc)
        finally:
            self._slots.release()


def _backoff_ms(attempt: int) -> int:
    """1 s, 2 s, 4 s, ... capped at 5 minutes."""
    return int(min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** max(0, attempt - 1)))
