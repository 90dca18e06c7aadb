/** `Workbench.exits()` and `ack()`: the exits feed of detached executions, long-polled, and its acks. */

import { type Http, nothing } from "./http.js";
import { MAX_WAIT_MS, MAX_WAIT_TIMEOUT_MS, SLACK_MS } from "./limits.js";
import type { CallOptions, Exit, ExitsOptions } from "./types.js";

/** Undelivered exits, long-polling up to `waitTimeoutMs` in long-polls of at most `MAX_WAIT_MS`. */
export async function pollExits(http: Http, options: ExitsOptions): Promise<Exit[]> {
  const { limit = 100, leaseMs, signal } = options;
  const deadline = Date.now() + Math.max(0, Math.min(options.waitTimeoutMs ?? 30_000, MAX_WAIT_TIMEOUT_MS));
  for (;;) {
    const waitMs = Math.round(Math.max(0, Math.min(deadline - Date.now(), MAX_WAIT_MS)));
    const page = await http.send(
      {
        method: "GET",
        path: "/v1/exits",
        query: { limit, waitTimeoutMs: waitMs, leaseMs },
        ok: [200],
        timeoutMs: waitMs + SLACK_MS,
        signal,
      },
      (response) => response.json() as Promise<{ exits: Exit[] }>,
    );
    if (page.exits.length > 0 || Date.now() >= deadline) return page.exits;
  }
}

/** `POST /v1/exits/{deliveryId}/ack`: the exit is never handed out again. */
export async function ackExit(http: Http, timeoutMs: number, exit: Exit | string, options: CallOptions): Promise<void> {
  const path = `/v1/exits/${encodeURIComponent(typeof exit === "string" ? exit : exit.deliveryId)}/ack`;
  await http.send({ method: "POST", path, ok: [200, 204], timeoutMs, signal: options.signal }, nothing);
}
