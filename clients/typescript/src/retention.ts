/**
 * `wb.prune({ status, before })`, the bulk delete of ended executions (`DELETE /v1/executions`),
 * as the Python client's `prune`; `wb.stats()` is one read of `GET /v1/stats`.
 */

import type { Http } from "./http.js";
import type { DeleteResult, PruneOptions } from "./types.js";

/** What `prune` needs of its client: its requests. */
export interface RetentionReach {
  readonly http: Http;
  readonly timeoutMs: number;
}

/** `before` as the route takes it: an RFC 3339 time, or a duration back from now. */
function beforeText(before: Date | string | number): string {
  if (before instanceof Date) {
    if (Number.isNaN(before.getTime())) throw new TypeError("prune: before is an invalid Date");
    return before.toISOString();
  }
  if (typeof before === "string" && before !== "") return before; // `7d`, or a time: the daemon reads it
  if (typeof before === "number" && Number.isFinite(before) && before >= 0) return `${Math.round(before)}ms`;
  throw new TypeError(
    "prune: before is a Date, a duration or a time (`7d`, `2026-01-31T12:00:00Z`), " +
      "or milliseconds back from now (0 or more)",
  );
}

/**
 * Delete, in one request, the ended executions that `status` (one ended status or several) and
 * `before` select, with their events, files and acked exits: how many. At least one of the two
 * (a `TypeError` before anything is sent otherwise); a live or unknown status, or a `before` the
 * daemon cannot read, is `BadRequest` and deletes nothing. Live executions are never touched.
 * Sent again after a broken connection: what is gone stays gone (the count is then the resend's).
 */
export async function prune(reach: RetentionReach, options: PruneOptions): Promise<number> {
  const { status, before, signal } = options;
  const query: Record<string, string> = {};
  if (status !== undefined) {
    const statuses: readonly unknown[] = Array.isArray(status) ? status : [status];
    if (statuses.length === 0 || statuses.some((one) => typeof one !== "string" || one === "" || one.includes(","))) {
      throw new TypeError("prune: status is an ended status (`completed`), or a non-empty array of them");
    }
    query.status = statuses.join(",");
  }
  if (before !== undefined) query.before = beforeText(before);
  if (status === undefined && before === undefined) {
    throw new TypeError("prune: give status, before, or both (a bare prune would empty the store)");
  }
  const result = await reach.http.send(
    { method: "DELETE", path: "/v1/executions", query, ok: [200], timeoutMs: reach.timeoutMs, signal },
    (response) => response.json() as Promise<DeleteResult>,
  );
  return result.deleted;
}
