/**
 * Input to an interactive execution, one piece per request: the rule of the Python client's
 * `send_input` and of the CLI's `send`.
 *
 * The daemon takes a piece (at most 1 MiB) whole or not at all: while the execution has not read
 * what was sent before (`input_backlog`: its supervisor keeps at most 1 MiB unread), none of the
 * piece was taken, and it is sent again, after a pause that doubles up to a quarter of a second,
 * until it is taken or the caller's bound passes. So a program that reads slowly gets every byte
 * once, in order; a sender that gives up says how many bytes were taken, so that a retry sends
 * the rest once. A piece is never sent again after a broken connection: the daemon may have
 * taken it.
 */

import { InputBacklog, WorkbenchError } from "./errors.js";
import { type Http, nothing, sleep } from "./http.js";

/** The most bytes one input request carries (the daemon's limit). */
export const MAX_INPUT_BYTES = 1 << 20;
/** How long a piece refused with `input_backlog` waits before it is sent again (doubling). */
export const INPUT_PAUSE_MS = 10;
export const INPUT_PAUSE_MAX_MS = 250;
/** How long a piece is sent again while the execution does not read, unless the caller says. */
export const INPUT_TIMEOUT_MS = 60_000;

export interface InputRequest {
  path: string;
  eof: boolean;
  record: boolean;
  /** How long a refused piece is sent again: null as long as it takes, 0 not at all. */
  backlogMs: number | null;
  /** How long the daemon has to answer each request. */
  callTimeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** A UTF-16 code unit of a surrogate pair without its other half. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * `data` as bytes (text as UTF-8) in pieces of at most `MAX_INPUT_BYTES`, text cut between whole
 * characters (so that each piece's journaled text is whole); one piece (perhaps empty) at least.
 * Text with a lone surrogate is not Unicode: a `TypeError` (it would go as U+FFFD otherwise).
 */
export function inputPieces(data: string | Uint8Array): Uint8Array[] {
  const text = typeof data === "string";
  if (typeof data === "string") {
    const lone = LONE_SURROGATE.exec(data);
    if (lone !== null) {
      const unit = (lone[0].codePointAt(0) as number).toString(16);
      throw new TypeError(
        `the input has a lone surrogate (\\u${unit} at ${lone.index}): it is not Unicode text; ` +
          "send bytes (a Uint8Array) for anything else",
      );
    }
  }
  const raw = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < raw.length || out.length === 0) {
    let end = Math.min(at + MAX_INPUT_BYTES, raw.length);
    while (text && end < raw.length && ((raw[end] as number) & 0xc0) === 0x80) end--; // inside a character
    out.push(raw.subarray(at, end));
    at = end;
  }
  return out;
}

/** What a sender that gave up says of its input (`taken` bytes of it were taken, then `code`). */
export function takenSaid(taken: number, code: string): string {
  if (taken === 0) return "none of the input was taken: send it again later";
  let said =
    `the first ${taken} bytes of the input were taken, the rest was not: send only the rest ` +
    `again (from byte ${taken + 1})`;
  if (code === "unavailable") said += "; the piece sent when the daemon went away may have been taken too";
  return said;
}

/** Send every piece of `data` in order (see the module's comment). */
export async function sendInputPieces(http: Http, data: string | Uint8Array, request: InputRequest): Promise<void> {
  const { path, eof, record, backlogMs, callTimeoutMs, signal } = request;
  if (backlogMs !== null && !(backlogMs >= 0)) {
    throw new TypeError(`timeoutMs must be at least 0 (or null), not ${String(backlogMs)}`);
  }
  const parts = inputPieces(data);
  let taken = 0;
  for (const [index, piece] of parts.entries()) {
    const last = index === parts.length - 1;
    const query = { eof: eof && last ? "true" : undefined, record: record ? undefined : "false" };
    let pause = INPUT_PAUSE_MS;
    let refusedAt: number | undefined;
    for (;;) {
      try {
        await http.send(
          { method: "POST", path, bytes: piece, query, ok: [200, 204], timeoutMs: callTimeoutMs, signal, resend: false },
          nothing,
        );
        break;
      } catch (error) {
        if (!(error instanceof WorkbenchError)) throw error; // an abort: the signal's reason
        if (!(error instanceof InputBacklog)) throw gaveUp(error, taken);
        const now = Date.now();
        refusedAt ??= now;
        let wait: number | undefined = pause;
        pause = Math.min(pause * 2, INPUT_PAUSE_MAX_MS);
        if (backlogMs !== null) {
          // The last try comes as the bound passes, not a pause after it.
          const left = refusedAt + backlogMs - now;
          wait = left <= 0 ? undefined : Math.min(wait, left);
        }
        if (wait === undefined) throw gaveUp(error, taken);
        await sleep(wait, signal);
      }
    }
    taken += piece.length;
  }
}

/** `error` (of the same class), saying that `taken` bytes of the input were taken before it. */
function gaveUp(error: WorkbenchError, taken: number): WorkbenchError {
  // The daemon's details (an object, or null: none) with the count; any other kept as it is.
  const given = error.details;
  const details =
    given === null || (typeof given === "object" && !Array.isArray(given))
      ? { ...(given as Record<string, unknown> | null), takenBytes: taken }
      : given;
  let message = error.message;
  if (taken > 0 || error.code === InputBacklog.code) message += `; ${takenSaid(taken, error.code)}`;
  const cls = error.constructor as typeof WorkbenchError;
  const options: { details: unknown; code: string; cause: unknown; status?: number } = {
    details,
    code: error.code,
    cause: error,
  };
  if (error.status !== undefined) options.status = error.status;
  return new cls(message, options);
}
