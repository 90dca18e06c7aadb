/** The request of a start (`runBash`, `runCode`, `rerun`), built from its options. */

import { headerValue } from "./http.js";
import { MAX_WAIT_MS } from "./limits.js";
import type { RerunOptions, StartOptions } from "./types.js";

export interface StartRequest {
  body: Record<string, unknown>;
  /** The `Idempotency-Key`: the caller's, else a fresh one. */
  key: string;
  background: boolean;
  /** The daemon acts when its own wait passes (`onWaitTimeout` other than `return`). */
  acts: boolean;
  /** The caller's whole wait, if given. */
  waitTimeoutMs: number | undefined;
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
 * The body of a start: `what` (the command, the code, or nothing for a rerun), `background`,
 * the long-poll a foreground start asks for, and every option given. Throws `TypeError` for a
 * key that cannot be sent, or an `onWaitTimeout` that would act before the caller's wait ends.
 */
export function startRequest(what: object, options: StartOptions | RerunOptions): StartRequest {
  const { signal, idempotencyKey, waitTimeoutMs, background = false, ...fields } = options;
  if (idempotencyKey !== undefined) headerValue("Idempotency-Key", idempotencyKey, 255);
  const onWaitTimeout = "onWaitTimeout" in fields ? fields.onWaitTimeout : undefined;
  // The daemon acts when its own wait passes: that must be the caller's whole wait.
  const acts = onWaitTimeout !== undefined && onWaitTimeout !== "return";
  if (acts && (background || waitTimeoutMs === undefined || waitTimeoutMs > MAX_WAIT_MS)) {
    throw new TypeError(
      `onWaitTimeout ${JSON.stringify(onWaitTimeout)} needs a foreground start with a waitTimeoutMs of at most ${MAX_WAIT_MS}`,
    );
  }
  const body: Record<string, unknown> = { ...what, background };
  if (!background) body.waitTimeoutMs = Math.round(Math.max(0, Math.min(waitTimeoutMs ?? MAX_WAIT_MS, MAX_WAIT_MS)));
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) body[key] = value;
  return { body, key: idempotencyKey ?? fresh(), background, acts, waitTimeoutMs, signal };
}
