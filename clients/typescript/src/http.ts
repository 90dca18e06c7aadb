/**
 * How the client sends a request: the daemon's URL and token, deadlines linked to the caller's
 * `AbortSignal`, resends after a broken connection, and errors turned into `WorkbenchError`s.
 */

import { Unavailable, WorkbenchError, errorFromBody } from "./errors.js";

/** Pauses before each resend of a request whose connection broke (then it fails). */
export const RESEND_DELAYS_MS = [0, 100, 500] as const;

export interface Send {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  json?: unknown;
  /** Raw bytes to send instead (`application/octet-stream`). */
  bytes?: Uint8Array;
  headers?: Record<string, string>;
  /** The statuses that are an answer (any other is an error). */
  ok: readonly number[];
  /** How long the daemon has to answer (the long-poll's own time included). */
  timeoutMs: number;
  /** Only the headers must come within `timeoutMs` (a download's body may take longer). */
  headersOnly?: boolean;
  /**
   * False for a request that must not be sent twice (input, a signal): a connection that breaks
   * before its answer is not resent, and the call fails with `Unavailable` saying that the
   * daemon may have taken it.
   */
  resend?: boolean;
  /**
   * A delete: a `404` to a resend means that the try whose answer was lost deleted it, and the
   * call is done (its `read` gets that answer), as the Python client has it.
   */
  deletes?: boolean;
  signal?: AbortSignal | undefined;
}

/** A controller aborted by the caller's signal or by a timer, whichever comes first. */
export class Deadline {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onAbort: () => void;

  constructor(
    private readonly user: AbortSignal | undefined,
    timeoutMs: number | undefined,
  ) {
    this.onAbort = () => this.controller.abort(user?.reason);
    if (user?.aborted) this.controller.abort(user.reason);
    else user?.addEventListener("abort", this.onAbort, { once: true });
    if (timeoutMs !== undefined) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new Unavailable(`the daemon did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stop the timer; the caller's signal still aborts. */
  clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  dispose(): void {
    this.clearTimer();
    this.user?.removeEventListener("abort", this.onAbort);
  }
}

/** Reads an answer whose body says nothing (to its end, so that the connection is reused). */
export const nothing = async (response: Response): Promise<void> => {
  await response.arrayBuffer();
};

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const done = () => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** What a failed `fetch` says, for a message: its cause's code and message where it has one. */
export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
    if (cause && typeof cause === "object") {
      const code = typeof cause.code === "string" ? `${cause.code} ` : "";
      const message = typeof cause.message === "string" ? cause.message : "";
      if (code || message) return `${code}${message}`.trim();
    }
    return error.message || error.name;
  }
  return String(error);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Check a value that goes into a header (a token, an `Idempotency-Key`): printable ASCII, at
 * most `max` characters. A `TypeError` naming `what` otherwise, without quoting the value.
 */
export function headerValue(what: string, value: string, max = Number.POSITIVE_INFINITY): void {
  if (typeof value !== "string" || value.length === 0 || value.length > max || !PRINTABLE_ASCII.test(value)) {
    const size = Number.isFinite(max) ? `1 to ${max}` : "one or more";
    throw new TypeError(`${what} cannot be sent: a header value is ${size} printable ASCII characters`);
  }
}

/** What fetch says of a connection that failed (browsers give no cause; undici does). */
const NETWORK = /fetch|network|load failed|terminated|socket|connect/i;

/**
 * True for a request that was never sent because it could not be made (a header `fetch` or
 * `node:http` refuses): a mistake to report, not a broken connection to resend.
 */
export function notSent(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("ERR_INVALID")) return true; // node:http's
  return error.cause === undefined && !NETWORK.test(error.message);
}

export class Http {
  readonly headers: Record<string, string>;

  constructor(
    readonly url: string,
    token: string | undefined,
    readonly fetch: typeof globalThis.fetch,
  ) {
    this.headers = token ? { Authorization: `Bearer ${token}` } : {};
  }

  target(path: string, query?: Send["query"]): string {
    let url = this.url + path;
    if (query) {
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) {
        if (value !== undefined && value !== null) params.set(key, String(value));
      }
      const text = params.toString();
      if (text) url += `?${text}`;
    }
    return url;
  }

  /** The error for a daemon that cannot be reached. */
  unreachable(error: unknown): Unavailable {
    return new Unavailable(`cannot reach the daemon at ${this.url}: ${describe(error)}`, { cause: error });
  }

  /**
   * Send `request` and read its answer with `read` (inside the same deadline unless
   * `headersOnly`). A connection that breaks before an answer is resent, up to three times:
   * a call is safe to resend (starts carry an idempotency key) unless it says otherwise
   * (`resend: false`: input and signals). A request that could not be made at all (`notSent`)
   * is not.
   */
  async send<T>(request: Send, read: (response: Response) => Promise<T>): Promise<T> {
    const url = this.target(request.path, request.query);
    const headers: Record<string, string> = { ...this.headers, ...request.headers };
    let body: string | Uint8Array<ArrayBuffer> | undefined;
    if (request.json !== undefined) {
      body = JSON.stringify(request.json);
      headers["Content-Type"] = "application/json";
    } else if (request.bytes !== undefined) {
      body = request.bytes as Uint8Array<ArrayBuffer>;
      headers["Content-Type"] = "application/octet-stream";
    }
    for (let attempt = 0; ; attempt++) {
      const deadline = new Deadline(request.signal, request.timeoutMs);
      try {
        const init: RequestInit = { method: request.method, headers, signal: deadline.signal };
        if (body !== undefined) init.body = body;
        const response = await this.fetch(url, init);
        if (request.headersOnly) deadline.clearTimer();
        const deleted = request.deletes === true && attempt > 0 && response.status === 404;
        if (!request.ok.includes(response.status) && !deleted) {
          throw errorFromBody(response.status, await response.text());
        }
        return await read(response);
      } catch (error) {
        if (request.signal?.aborted) throw request.signal.reason;
        if (deadline.timedOut) {
          throw new Unavailable(
            `the daemon at ${this.url} did not answer ${request.method} ${request.path} within ${request.timeoutMs} ms`,
            { cause: error },
          );
        }
        if (error instanceof WorkbenchError || error instanceof SyntaxError || notSent(error)) throw error;
        if (request.resend === false) {
          throw new Unavailable(
            `the connection to the daemon at ${this.url} broke before it answered ${request.method} ` +
              `${request.path} (${describe(error)}); it may have taken the request, which is not sent again`,
            { cause: error },
          );
        }
        const pause = RESEND_DELAYS_MS[attempt];
        if (pause === undefined) throw this.unreachable(error);
        await sleep(pause, request.signal);
      } finally {
        deadline.dispose();
      }
    }
  }
}
