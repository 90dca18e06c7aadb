/** The request of a start (`runBash`, `runCode`, `rerun`, `runBatch`), built from its options. */

import { headerValue } from "./http.js";
import { MAX_WAIT_MS } from "./limits.js";
import type { BatchItem, BatchOptions, RerunOptions, StartOptions, WaitUntil } from "./types.js";

/** The options of a start: `runBash`'s and `runCode`'s, `rerun`'s or `runBatch`'s. */
export type StartingOptions = StartOptions | RerunOptions | BatchOptions;

export interface StartRequest {
  body: Record<string, unknown>;
  /** The `Idempotency-Key`: the caller's, else a fresh one. */
  key: string;
  background: boolean;
  /** The daemon acts when its own wait passes (`onWaitTimeout` other than `return`). */
  acts: boolean;
  /** The caller's whole wait, if given. */
  waitTimeoutMs: number | undefined;
  /** What the wait after the start waits for: `ready` for a foreground service. */
  until: WaitUntil;
  signal: AbortSignal | undefined;
}

function fresh(): string {
  const random = globalThis.crypto?.randomUUID?.();
  if (random) return `wbc-${random.replaceAll("-", "")}`;
  let key = "wbc-";
  for (let i = 0; i < 32; i++) key += Math.floor(Math.random() * 16).toString(16);
  return key;
}

/**
 * The body of a start: `what` (the command, the code, the items of a batch, or nothing for a
 * rerun), `background`, the long-poll a foreground start asks for, and every option given.
 * A foreground service is sent as a background start, then waited for until it is ready (as the
 * Python client does: the daemon's own wait would be for its end). Throws `TypeError` for a key
 * that cannot be sent, or an `onWaitTimeout` that would act before the caller's wait ends.
 */
export function startRequest(what: object, options: StartingOptions): StartRequest {
  const { signal, idempotencyKey, waitTimeoutMs, background = false, ...fields } = options;
  if (idempotencyKey !== undefined) headerValue("Idempotency-Key", idempotencyKey, 255);
  const onWaitTimeout = "onWaitTimeout" in fields ? fields.onWaitTimeout : undefined;
  const ready = "service" in fields && fields.service === true && !background;
  // The daemon acts when its own wait passes: that must be the caller's whole wait.
  const acts = onWaitTimeout !== undefined && onWaitTimeout !== "return";
  if (acts && ready) {
    throw new TypeError(
      `onWaitTimeout ${JSON.stringify(onWaitTimeout)} does not apply to a service: ` +
        "a foreground one returns once it is ready",
    );
  }
  if (acts && (background || waitTimeoutMs === undefined || waitTimeoutMs > MAX_WAIT_MS)) {
    throw new TypeError(
      `onWaitTimeout ${JSON.stringify(onWaitTimeout)} needs a foreground start with a waitTimeoutMs of at most ${MAX_WAIT_MS}`,
    );
  }
  const body: Record<string, unknown> = { ...what, background: background || ready };
  if (!background && !ready) {
    body.waitTimeoutMs = Math.round(Math.max(0, Math.min(waitTimeoutMs ?? MAX_WAIT_MS, MAX_WAIT_MS)));
  }
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
  const until = ready ? "ready" : "end";
  return { body, key: idempotencyKey ?? fresh(), background, acts, waitTimeoutMs, until, signal };
}

/** The `what` of a batch start: its items, start bodies each with its `kind`, as the API takes them. */
export function batchItems(items: readonly BatchItem[]): { items: BatchItem[] } {
  if (!Array.isArray(items)) throw new TypeError("a batch's items are an array of start bodies, each with its kind");
  items.forEach((item: unknown, index) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw new TypeError(`item ${index} of the batch is not a start body (an object with its kind)`);
    }
  });
  return { items: [...items] };
}
