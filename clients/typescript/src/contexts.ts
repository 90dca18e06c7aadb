/**
 * Code contexts (`wb.createContext("python")`, `ctx.run(code)`, `ctx.close()`) and sessions
 * (`wb.sessions()`, `wb.deleteSession(id)`): what the client's `Workbench` methods of those names
 * do, kept here so that each request is described once.
 */

import { type Http, nothing } from "./http.js";
import type { CallOptions, CodeStartOptions, Context, ContextOptions, Execution, Session } from "./types.js";

/** What a handle needs of its client: its requests, and `runCode` for `run`. */
export interface Reach {
  readonly http: Http;
  readonly timeoutMs: number;
  runCode(language: string, code: string, options: CodeStartOptions): Promise<Execution>;
}

/** The options of `ctx.run`: those of `runCode`, the context's id aside. */
export type ContextRunOptions = Omit<CodeStartOptions, "contextId">;

/**
 * `id` escaped as one path segment. An empty id, `.` and `..` (escaped or not, URLs resolve them
 * away: `/v1/sessions/.` is `/v1/sessions/`) are a `TypeError`: no session or context has one.
 */
export function segment(id: string): string {
  if (typeof id !== "string" || id === "" || id === "." || id === "..") {
    throw new TypeError(`${JSON.stringify(id)} is no id: one is a non-empty string other than "." and ".."`);
  }
  return encodeURIComponent(id);
}

/** A code context: `run` code in it, `refresh` its record, `close` it. */
export class CodeContext {
  /** The context's record as last read. */
  record: Context;

  constructor(
    private readonly reach: Reach,
    record: Context,
  ) {
    this.record = record;
  }

  /** Its id (`cx_...`). */
  get id(): string {
    return this.record.contextId;
  }

  /** `python` or `node`. */
  get language(): string {
    return this.record.language;
  }

  /**
   * Run `code` in the context and return its record (`result["text/plain"]`, or `error` with
   * `code` `exception` and its `traceback`); the options are those of `runCode`. A cancel of it
   * raises `KeyboardInterrupt` in the cell (an interrupt in node) and the context lives on.
   */
  run(code: string, options: ContextRunOptions = {}): Promise<Execution> {
    return this.reach.runCode(this.language, code, { ...options, contextId: this.id });
  }

  /** The context's record now (`status`, `executions`, `reason`). */
  async refresh(options: CallOptions = {}): Promise<Context> {
    this.record = await read<Context>(this.reach, contextPath(this.id), options);
    return this.record;
  }

  /** Kill the context's interpreter and forget it. */
  async close(options: CallOptions = {}): Promise<void> {
    await remove(this.reach, contextPath(this.id), options);
  }
}

/**
 * `POST /v1/contexts`: the handle once the interpreter listens (or is `dead`, with the `reason`
 * it could not start). Never sent twice: the daemon takes no idempotency key here, and a second
 * try could start a second interpreter; after a broken connection, `contexts()` says.
 */
export async function createContext(reach: Reach, language: string, options: ContextOptions): Promise<CodeContext> {
  const { image, sessionId, env, idleTimeoutMs, signal } = options;
  const body: Record<string, unknown> = { language };
  if (image !== undefined) body.image = image;
  if (sessionId !== undefined) body.sessionId = sessionId;
  if (env !== undefined) body.env = env;
  if (idleTimeoutMs !== undefined) body.idleTimeoutMs = idleTimeoutMs;
  const record = await reach.http.send(
    {
      method: "POST",
      path: "/v1/contexts",
      json: body,
      ok: [201],
      timeoutMs: reach.timeoutMs,
      resend: false,
      signal,
    },
    (response) => response.json() as Promise<Context>,
  );
  return new CodeContext(reach, record);
}

/** The principal's contexts, oldest first, dead ones included. */
export async function listContexts(reach: Reach, options: CallOptions): Promise<CodeContext[]> {
  const list = await read<{ contexts: Context[] }>(reach, "/v1/contexts", options);
  return list.contexts.map((record) => new CodeContext(reach, record));
}

/** One context by its id; `NotFound` for an id that names none (or another principal's). */
export async function getContext(reach: Reach, id: string, options: CallOptions): Promise<CodeContext> {
  return new CodeContext(reach, await read<Context>(reach, contextPath(id), options));
}

/** The principal's sessions, by id. */
export async function listSessions(reach: Reach, options: CallOptions): Promise<Session[]> {
  return (await read<{ sessions: Session[] }>(reach, "/v1/sessions", options)).sessions;
}

/** `DELETE /v1/sessions/{id}`, or every session of the principal when `id` is null. */
export async function deleteSessions(reach: Reach, id: string | null, options: CallOptions): Promise<void> {
  await remove(reach, id === null ? "/v1/sessions" : `/v1/sessions/${segment(id)}`, options);
}

function contextPath(id: string): string {
  return `/v1/contexts/${segment(id)}`;
}

function read<T>(reach: Reach, path: string, options: CallOptions): Promise<T> {
  return reach.http.send(
    { method: "GET", path, ok: [200], timeoutMs: reach.timeoutMs, signal: options.signal },
    (response) => response.json() as Promise<T>,
  );
}

/** `DELETE path`; a `404` to a resend is done (the try whose answer was lost deleted it). */
export async function remove(reach: Reach, path: string, options: CallOptions): Promise<void> {
  await reach.http.send(
    { method: "DELETE", path, ok: [200, 204], deletes: true, timeoutMs: reach.timeoutMs, signal: options.signal },
    nothing,
  );
}
