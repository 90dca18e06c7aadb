/**
 * `Workbench`: a client of one daemon, its calls named as the Python client's in camelCase (most
 * of them; the README lists those it lacks).
 *
 * Results are the daemon's JSON records as they are (see `types.ts`); failures are the classes
 * of `errors.ts`. Every call takes an `AbortSignal`: aborting one abandons the request, never
 * the execution (a wait or a stream that is aborted leaves it running).
 */

import { discover, openStream } from "#platform";

import { Unavailable, WorkbenchError, errorFromBody } from "./errors.js";
import { Deadline, Http, headerValue, notSent, sleep } from "./http.js";
import { type OpenStream, fetchStream } from "./platform.js";
import { type Frame, FrameReader } from "./sse.js";
import {
  type Artifact,
  type ArtifactOptions,
  type BashStartOptions,
  type CallOptions,
  type CancelOptions,
  type CancelResult,
  type CodeStartOptions,
  type DetachResult,
  type Event,
  type EventPage,
  type EventsOptions,
  type EventsPageOptions,
  type Execution,
  type ExecutionList,
  type ExecutionRef,
  type Exit,
  type ExitsOptions,
  type Health,
  type Image,
  type InputOptions,
  type ListOptions,
  type ListPageOptions,
  type LiveEvent,
  type RerunOptions,
  type SignalName,
  type SignalResult,
  type StartOptions,
  type TtySize,
  type StreamName,
  type WaitOptions,
  type WaitResult,
  isTerminal,
} from "./types.js";

export const DEFAULT_URL = "http://127.0.0.1:8787";
/**
 * The longest single long-poll (the API allows 600000). Node's `fetch` gives up on an answer
 * whose headers take over 300 s, so waits longer than this are made of several long-polls.
 */
export const MAX_WAIT_MS = 240_000;
/** The longest wait the API takes (`waitTimeoutMs`, 0 to 600000). */
export const MAX_WAIT_TIMEOUT_MS = 600_000;
/** Extra time a request gets beyond the long-poll it asks the daemon for. */
export const SLACK_MS = 30_000;
/** A stream that sends nothing for this long is dead (the daemon sends a keepalive every 15 s). */
export const STREAM_IDLE_MS = 45_000;
export const BACKOFF_FIRST_MS = 50;
export const BACKOFF_MAX_MS = 2_000;

export interface WorkbenchOptions {
  /** The daemon (default `$WORKBENCH_URL` on Node, else `http://127.0.0.1:8787`). */
  url?: string | undefined;
  /**
   * The bearer token. When omitted, on Node: `$WORKBENCH_TOKEN`, else `<data dir>/token` (the
   * data dir is `$WORKBENCH_DATA_DIR`, else `~/.local/share/workbench`). `null`: send none.
   */
  token?: string | null | undefined;
  /** How long the daemon has to answer an ordinary request (long-polls get their own). */
  timeoutMs?: number | undefined;
  /** How long `events()` keeps reconnecting to a daemon that went away (default 60000). */
  reconnectForMs?: number | undefined;
  /**
   * How long an event stream may stay silent before it counts as dropped (default 45000; the
   * daemon sends a keepalive every 15000).
   */
  streamIdleMs?: number | undefined;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch | undefined;
}

/** The id of an execution reference. */
export function executionId(ref: ExecutionRef): string {
  const id = typeof ref === "string" ? ref : ref.executionId;
  if (typeof id !== "string" || id.length === 0) {
    throw new TypeError("an execution is its id (a string) or a record with `executionId`");
  }
  return id;
}

function path(ref: ExecutionRef, tail = ""): string {
  return `/v1/executions/${encodeURIComponent(executionId(ref))}${tail}`;
}

function fresh(): string {
  const random = globalThis.crypto?.randomUUID?.();
  if (random) return `wbc-${random.replaceAll("-", "")}`;
  let key = "wbc-";
  for (let i = 0; i < 32; i++) key += Math.floor(Math.random() * 16).toString(16);
  return key;
}

const json = <T>(response: Response): Promise<T> => response.json() as Promise<T>;
const nothing = async (response: Response): Promise<void> => {
  await response.arrayBuffer();
};

function isLast(event: Event | LiveEvent): boolean {
  return event.sequence !== null && event.eventType === "status" && isTerminal(event.status);
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The state of one `events()` follow: where to resume, what to drop, when to give up. */
class Follow {
  truncated = false;
  /** A stream was opened once: a daemon that cannot be reached after that went away. */
  everConnected = false;
  failingSince: number | null = null;
  delay = BACKOFF_FIRST_MS;

  constructor(
    public last: number,
    private readonly live: boolean,
    private readonly reconnectForMs: number,
    private readonly http: Http,
  ) {}

  /**
   * Called when a stream opens: it ends a failure, so the give-up clock and the backoff start
   * afresh at the next drop. After a reconnect past the budget, a gap (display was missed).
   */
  connected(): LiveEvent | null {
    const reconnected = this.failingSince !== null;
    this.everConnected = true;
    this.failingSince = null;
    this.delay = BACKOFF_FIRST_MS;
    if (this.truncated && this.live && reconnected) return { sequence: null, eventType: "gap" };
    return null;
  }

  /** The event of `frame` to hand out, or null (a duplicate, or live output not wanted). */
  take(frame: Frame): Event | LiveEvent | null {
    if (frame.id !== null) {
      const event = JSON.parse(frame.data) as Event;
      if (event.sequence <= this.last) return null;
      this.last = event.sequence;
      this.failingSince = null;
      this.delay = BACKOFF_FIRST_MS;
      if (event.eventType === "output_truncated") this.truncated = true;
      return event;
    }
    if (!this.live) return null;
    if (frame.event === "gap") {
      const data = frame.data ? (JSON.parse(frame.data) as { missedBytes?: number }) : {};
      return { sequence: null, eventType: "gap", missedBytes: data.missedBytes ?? null };
    }
    if (frame.event === "output") {
      const data = JSON.parse(frame.data) as Pick<LiveEvent, "timestamp" | "stream" | "outputDelta">;
      return {
        sequence: null,
        eventType: "output",
        timestamp: data.timestamp ?? null,
        stream: data.stream ?? null,
        outputDelta: data.outputDelta ?? null,
      };
    }
    return null;
  }

  /**
   * The stream ended before the terminal event: the pause before reconnecting, or throw. A
   * daemon that cannot be reached before any stream was opened is not waited for (as `get()`).
   */
  broke(error: unknown): number {
    if (!this.everConnected && !(error instanceof WorkbenchError)) throw this.http.unreachable(error);
    const now = Date.now();
    if (this.failingSince === null) this.failingSince = now;
    if (now - this.failingSince > this.reconnectForMs) {
      throw this.http.unreachable(error ?? new Error("the event stream ended early"));
    }
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, BACKOFF_MAX_MS);
    return delay;
  }
}

/** `list()`: the executions over every page (newest first); `pages()` for the pages themselves. */
export class ExecutionListing implements AsyncIterable<Execution> {
  constructor(
    private readonly client: Workbench,
    private readonly options: ListOptions,
  ) {}

  /** The pages of the listing, one request each. */
  async *pages(): AsyncGenerator<ExecutionList, void, undefined> {
    const { limit, pageSize = 50, status, kind, sessionId, signal } = this.options;
    let left = limit ?? Number.POSITIVE_INFINITY;
    let cursor: string | null = null;
    while (left > 0) {
      const page: ExecutionList = await this.client.listPage({
        status,
        kind,
        sessionId,
        signal,
        cursor,
        limit: Math.min(pageSize, 1000, left),
      });
      if (page.executions.length > left) page.executions = page.executions.slice(0, left);
      left -= page.executions.length;
      yield page;
      cursor = page.nextCursor ?? null;
      if (cursor === null || page.executions.length === 0) return;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Execution, void, undefined> {
    for await (const page of this.pages()) yield* page.executions;
  }

  /** Every execution of the listing in one array. */
  async toArray(): Promise<Execution[]> {
    const out: Execution[] = [];
    for await (const execution of this) out.push(execution);
    return out;
  }
}

export class Workbench {
  /** The daemon's URL. */
  readonly url: string;
  /** Where the token came from (`option`, `WORKBENCH_TOKEN`, a file's path), or null: none. */
  readonly tokenSource: string | null;
  private readonly http: Http;
  private readonly timeoutMs: number;
  private readonly reconnectForMs: number;
  private readonly streamIdleMs: number;
  private readonly openStream: OpenStream;

  constructor(options: WorkbenchOptions = {}) {
    const found = options.url === undefined || options.token === undefined ? discover() : {};
    const url = (options.url ?? found.url ?? DEFAULT_URL).replace(/\/+$/, "");
    if (url.startsWith("unix://")) {
      throw new TypeError(`bad daemon URL ${JSON.stringify(url)}: this client speaks HTTP (http://HOST:PORT)`);
    }
    if (!/^https?:\/\//.test(url)) {
      throw new TypeError(`bad daemon URL ${JSON.stringify(url)}: expected http://HOST:PORT`);
    }
    let token: string | undefined;
    if (options.token === undefined) {
      token = found.token;
      this.tokenSource = found.tokenSource ?? null;
    } else {
      token = options.token ?? undefined;
      this.tokenSource = token ? "option" : null;
    }
    if (token) headerValue(this.tokenSource === "option" ? "the token" : `the token from ${this.tokenSource}`, token);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== "function") throw new TypeError("no fetch: pass one as `fetch`");
    this.url = url;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.reconnectForMs = options.reconnectForMs ?? 60_000;
    this.streamIdleMs = options.streamIdleMs ?? STREAM_IDLE_MS;
    this.http = new Http(url, token, (input, init) => fetchImpl(input, init));
    // A `fetch` given as an option carries every request, streams too.
    this.openStream = options.fetch === undefined && openStream !== null ? openStream : fetchStream(this.http.fetch);
  }

  // -- starting ----------------------------------------------------------------------------

  /**
   * Start `command` (run by bash) and return its record.
   *
   * With `background` the record comes back at once (`queued` or `running`). Otherwise this
   * waits for the end: for `waitTimeoutMs` if given (the record may then not be terminal yet),
   * else as long as it runs. The same `idempotencyKey` never runs a command twice. Every field
   * of the API's start body is an option (`tty`, `secretEnv`, `service`, ...).
   */
  runBash(command: string, options: BashStartOptions = {}): Promise<Execution> {
    return this.start("/v1/executions/workbench_bash", { command }, options);
  }

  /** Run `code` in `language` (`python`, `bash`, `sh`, ... as the image has them); as `runBash`. */
  runCode(language: string, code: string, options: CodeStartOptions = {}): Promise<Execution> {
    return this.start("/v1/executions/workbench_code", { language, code }, options);
  }

  /**
   * Start a new execution with the spec of `ref` (its command or code, cwd, image, session, env,
   * stdin, metadata, timeouts, detached); each option given replaces the original's. Waits as
   * a start does; the new record's `rerunOf` names the original.
   */
  rerun(ref: ExecutionRef, options: RerunOptions = {}): Promise<Execution> {
    return this.start(path(ref, "/rerun"), {}, options);
  }

  private async start(target: string, what: object, options: StartOptions | RerunOptions): Promise<Execution> {
    const began = Date.now();
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
    const execution = await this.http.send(
      {
        method: "POST",
        path: target,
        json: body,
        headers: { "Idempotency-Key": idempotencyKey ?? fresh() },
        ok: [200, 201, 202],
        timeoutMs: background ? this.timeoutMs : (body.waitTimeoutMs as number) + SLACK_MS,
        signal,
      },
      json<Execution>,
    );
    if (background || acts || isTerminal(execution)) return execution;
    if (waitTimeoutMs === undefined) return this.wait(execution, { signal });
    const left = waitTimeoutMs - (Date.now() - began);
    return left <= 0 ? execution : this.wait(execution, { timeoutMs: left, signal });
  }

  // -- reading -----------------------------------------------------------------------------

  /** The current record. Throws `NotFound` for an unknown id (or another principal's). */
  get(ref: ExecutionRef, options: CallOptions = {}): Promise<Execution> {
    return this.read(path(ref), options);
  }

  /**
   * The executions, newest first, following the pages as it goes: `for await (const e of
   * wb.list())`. `limit` bounds how many in all; `.pages()` iterates the pages instead.
   */
  list(options: ListOptions = {}): ExecutionListing {
    return new ExecutionListing(this, options);
  }

  /** One page of the listing; pass its `nextCursor` back as `cursor` for the next. */
  listPage(options: ListPageOptions = {}): Promise<ExecutionList> {
    const { status, kind, sessionId, limit = 50, cursor, signal } = options;
    return this.read("/v1/executions", { signal }, { status, kind, sessionId, limit, cursor });
  }

  /**
   * Wait for the end, at most `timeoutMs` (default: as long as it runs); the record then.
   * A wait that times out returns the record as it is (check `isTerminal`) and changes nothing;
   * so does an aborted one, which rejects with the signal's reason.
   */
  async wait(ref: ExecutionRef, options: WaitOptions = {}): Promise<Execution> {
    const { timeoutMs, signal } = options;
    const deadline = timeoutMs === undefined ? null : Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      const left = deadline === null ? MAX_WAIT_MS : Math.max(0, Math.min(deadline - Date.now(), MAX_WAIT_MS));
      const result = await this.http.send(
        {
          method: "POST",
          path: path(ref, "/wait"),
          json: { waitTimeoutMs: Math.round(left) },
          ok: [200],
          timeoutMs: left + SLACK_MS,
          signal,
        },
        json<WaitResult>,
      );
      if (!result.waitTimedOut || (deadline !== null && Date.now() >= deadline)) return result.execution;
    }
  }

  /** One page of journal events after sequence `after`. */
  eventsPage(ref: ExecutionRef, options: EventsPageOptions = {}): Promise<EventPage> {
    const { after = 0, limit = 1000, signal } = options;
    return this.read(path(ref, "/events"), { signal }, { after, limit });
  }

  /**
   * The events after sequence `after`: the journal's replayed, then (with `follow`) live ones,
   * ending after the terminal status event.
   *
   * When the connection drops or the daemon restarts, it reconnects from the last sequence
   * seen (backing off from 50 ms to 2 s, for up to `reconnectForMs`), so journal events come
   * gapless and without duplicates. With `live`, display output past the output budget comes
   * too, as `LiveEvent`s (`sequence` null); a `gap` one says some display output was missed.
   * Breaking out of the loop or aborting closes the stream; the execution goes on.
   */
  async *events(ref: ExecutionRef, options: EventsOptions = {}): AsyncGenerator<Event | LiveEvent, void, undefined> {
    const { follow = true, live = true, signal } = options;
    let after = options.after ?? 0;
    if (signal?.aborted) throw signal.reason;
    if (!follow) {
      for (;;) {
        const page = await this.eventsPage(ref, { after, signal });
        yield* page.events;
        if (page.terminal || page.nextAfter === after) return;
        after = page.nextAfter;
      }
    }
    const url = this.http.target(path(ref, "/events/stream"));
    const state = new Follow(after, live, this.reconnectForMs, this.http);
    for (;;) {
      let error: unknown;
      const connection = new Deadline(signal, this.timeoutMs);
      let idle: ReturnType<typeof setInterval> | undefined;
      let stream: Awaited<ReturnType<OpenStream>> | undefined;
      let finished = false;
      try {
        const headers = { ...this.http.headers, Accept: "text/event-stream", "Last-Event-ID": String(state.last) };
        stream = await this.openStream(url, headers, connection.signal);
        connection.clearTimer();
        // 204: reconnected after the terminal event, so nothing more will come.
        if (stream.status === 204) return;
        if (stream.status !== 200) throw errorFromBody(stream.status, await stream.text());
        const gap = state.connected();
        if (gap !== null) yield gap;
        const frames = new FrameReader();
        // Silence is time spent waiting for the stream: while the caller has an event, the
        // stream is not read (and need not be), so that time does not count.
        let heard = Date.now();
        let handedOut = false;
        idle = setInterval(
          () => {
            if (!handedOut && Date.now() - heard > this.streamIdleMs) {
              connection.controller.abort(new Error(`the event stream was silent for ${this.streamIdleMs} ms`));
            }
          },
          Math.min(5_000, this.streamIdleMs),
        );
        // The open connection keeps a Node process alive; this check need not.
        (idle as { unref?: () => void }).unref?.();
        for await (const piece of stream.pieces) {
          heard = Date.now();
          for (const frame of frames.feed(piece)) {
            const event = state.take(frame);
            if (event === null) continue;
            if (isLast(event)) finished = true;
            handedOut = true;
            yield event;
            handedOut = false;
            heard = Date.now();
            if (finished) return;
          }
        }
        error = new Error("the event stream ended before the terminal event");
      } catch (caught) {
        if (signal?.aborted) throw signal.reason;
        // A daemon that is stopping or restarting is waited for; every other answer is final.
        if (caught instanceof WorkbenchError && !(caught instanceof Unavailable)) throw caught;
        if (caught instanceof SyntaxError || notSent(caught)) throw caught;
        error = caught;
      } finally {
        if (idle !== undefined) clearInterval(idle);
        stream?.close(finished);
        if (!finished) connection.controller.abort();
        connection.dispose();
      }
      await sleep(state.broke(error), signal);
    }
  }

  /**
   * The whole output of one stream as bytes, byte for byte what the process wrote: the
   * journal's text, then, past the output budget (or from the first byte that was not UTF-8),
   * the rest from the stream's artifact. For an execution still running: what the journal
   * holds so far (artifacts are kept at the end).
   */
  async output(ref: ExecutionRef, stream: StreamName = "stdout", options: CallOptions = {}): Promise<Uint8Array> {
    const { signal } = options;
    const record = await this.get(ref, { signal });
    const terminal = isTerminal(record);
    const artifact = terminal ? (record.artifacts ?? []).find((a) => a.name === stream) : undefined;
    const encoder = new TextEncoder();
    const parts: Uint8Array[] = [];
    let size = 0;
    let exact = true;
    const held: string[] = [];
    const written = record.output[stream === "stdout" ? "stdoutBytes" : "stderrBytes"] ?? 0;
    if (written > 0) {
      let after = 0;
      for (;;) {
        const page = await this.eventsPage(record, { after, limit: 10_000, signal });
        for (const event of page.events) {
          if (event.eventType !== "output" || event.stream !== stream || !event.outputDelta) continue;
          let text = event.outputDelta;
          if (exact) {
            // U+FFFD may stand for bytes that were not UTF-8: from there on only the artifact is exact.
            const cut = text.indexOf("\ufffd");
            const good = encoder.encode(cut < 0 ? text : text.slice(0, cut));
            parts.push(good);
            size += good.length;
            if (cut < 0) continue;
            exact = false;
            text = text.slice(cut);
          }
          held.push(text);
        }
        if (page.terminal || page.nextAfter === after) break;
        after = page.nextAfter;
      }
    }
    if (artifact !== undefined) {
      if (size < artifact.sizeBytes) {
        const rest = await this.artifact(record, stream, { range: { start: size }, signal });
        parts.push(rest);
        size += rest.length;
      }
    } else {
      // No artifact: the stream was valid UTF-8 within the budget, so the journal's text is exact.
      for (const text of held) {
        const bytes = encoder.encode(text);
        parts.push(bytes);
        size += bytes.length;
      }
    }
    return concat(parts, size);
  }

  /** The artifacts kept for an execution (its whole stdout/stderr when they had to be kept). */
  async artifacts(ref: ExecutionRef, options: CallOptions = {}): Promise<Artifact[]> {
    return (await this.read<{ artifacts: Artifact[] }>(path(ref, "/artifacts"), options)).artifacts;
  }

  /** The bytes of artifact `name`, or of `range` of it (`end` exclusive). Past the end: empty. */
  artifact(ref: ExecutionRef, name: string, options: ArtifactOptions = {}): Promise<Uint8Array> {
    const { range, signal } = options;
    const headers: Record<string, string> = {};
    const start = range?.start ?? 0;
    const end = range?.end;
    if (end !== undefined && end <= start) return Promise.resolve(new Uint8Array(0));
    if (start > 0 || end !== undefined) headers.Range = `bytes=${start}-${end === undefined ? "" : end - 1}`;
    return this.http.send(
      {
        method: "GET",
        path: path(ref, `/artifacts/${encodeURIComponent(name)}`),
        headers,
        ok: [200, 206, 416],
        timeoutMs: this.timeoutMs,
        headersOnly: true,
        signal,
      },
      async (response) => {
        if (response.status === 416) {
          await response.arrayBuffer();
          return new Uint8Array(0); // asked from the end (or beyond): nothing more to read
        }
        return new Uint8Array(await response.arrayBuffer());
      },
    );
  }

  /** The images executions can run in. */
  async images(options: CallOptions = {}): Promise<Image[]> {
    return (await this.read<{ images: Image[] }>("/v1/images", options)).images;
  }

  /** `GET /healthz`: answers once the daemon accepts work. */
  health(options: CallOptions = {}): Promise<Health> {
    return this.read("/healthz", options);
  }

  /**
   * Undelivered exits of detached executions, long-polling up to `waitTimeoutMs` (at most
   * 600000) for one; a wait over `MAX_WAIT_MS` is made of several long-polls. Each exit handed
   * out is hidden for `leaseMs`, then handed out again until it is acked.
   */
  async exits(options: ExitsOptions = {}): Promise<Exit[]> {
    const { limit = 100, leaseMs, signal } = options;
    const deadline = Date.now() + Math.max(0, Math.min(options.waitTimeoutMs ?? 30_000, MAX_WAIT_TIMEOUT_MS));
    for (;;) {
      const waitMs = Math.round(Math.max(0, Math.min(deadline - Date.now(), MAX_WAIT_MS)));
      const page = await this.http.send(
        {
          method: "GET",
          path: "/v1/exits",
          query: { limit, waitTimeoutMs: waitMs, leaseMs },
          ok: [200],
          timeoutMs: waitMs + SLACK_MS,
          signal,
        },
        json<{ exits: Exit[] }>,
      );
      if (page.exits.length > 0 || Date.now() >= deadline) return page.exits;
    }
  }

  // -- changing ----------------------------------------------------------------------------

  /**
   * Write to the open stdin of a running execution started with `openStdin` or `tty`: text (as
   * UTF-8) or bytes, at most 1048576. `eof` closes stdin after it; `record: false` keeps it out
   * of the journal. `Conflict` when its stdin is not open or it does not run.
   */
  async sendInput(ref: ExecutionRef, data: string | Uint8Array, options: InputOptions = {}): Promise<void> {
    const { eof, record, signal } = options;
    const request =
      typeof data === "string"
        ? { json: { data, eof: eof ?? false, record: record ?? true } }
        : { bytes: data, query: { eof: eof ? "true" : undefined, record: record === false ? "false" : undefined } };
    await this.http.send(
      { method: "POST", path: path(ref, "/input"), ...request, ok: [200, 204], timeoutMs: this.timeoutMs, signal },
      nothing,
    );
  }

  /**
   * Send `name` (`INT`, `TERM`, ...) to every process of a running tree (on a terminal: to its
   * foreground process group), without ending the execution. `Conflict` when it does not run.
   */
  signal(ref: ExecutionRef, name: SignalName, options: CallOptions = {}): Promise<SignalResult> {
    return this.http.send(
      {
        method: "POST",
        path: path(ref, "/signal"),
        json: { signal: name },
        ok: [200, 202],
        timeoutMs: this.timeoutMs,
        signal: options.signal,
      },
      json<SignalResult>,
    );
  }

  /** Set the size of a running `tty` execution's terminal. `Conflict` without a terminal. */
  async resize(ref: ExecutionRef, size: TtySize, options: CallOptions = {}): Promise<void> {
    await this.http.send(
      {
        method: "POST",
        path: path(ref, "/resize"),
        json: { rows: size.rows, cols: size.cols },
        ok: [200, 204],
        timeoutMs: this.timeoutMs,
        signal: options.signal,
      },
      nothing,
    );
  }

  /** Mark an exit delivered: it is never handed out again. */
  async ack(delivery: Exit | string, options: CallOptions = {}): Promise<void> {
    const id = typeof delivery === "string" ? delivery : delivery.deliveryId;
    await this.http.send(
      {
        method: "POST",
        path: `/v1/exits/${encodeURIComponent(id)}/ack`,
        ok: [200, 204],
        timeoutMs: this.timeoutMs,
        signal: options.signal,
      },
      nothing,
    );
  }

  /** The Python client's name for `ack`. */
  ackExit(delivery: Exit | string, options: CallOptions = {}): Promise<void> {
    return this.ack(delivery, options);
  }

  /**
   * Cancel: kill the whole tree (SIGTERM and `graceMs` first, when given). `cancelled` is false
   * when it had already ended; its outcome then stands.
   */
  cancel(ref: ExecutionRef, options: CancelOptions = {}): Promise<CancelResult> {
    const { reason, graceMs, signal } = options;
    const body: Record<string, unknown> = {};
    if (reason !== undefined) body.reason = reason;
    if (graceMs) body.graceMs = Math.round(graceMs);
    return this.http.send(
      {
        method: "POST",
        path: path(ref, "/cancel"),
        json: body,
        ok: [200, 202],
        timeoutMs: (graceMs ?? 0) + SLACK_MS,
        signal,
      },
      json<CancelResult>,
    );
  }

  /** Hand the outcome to the exits feed (or get the record if it had already ended). */
  detach(ref: ExecutionRef, options: CallOptions = {}): Promise<DetachResult> {
    return this.http.send(
      { method: "POST", path: path(ref, "/detach"), ok: [200], timeoutMs: this.timeoutMs, signal: options.signal },
      json<DetachResult>,
    );
  }

  /** Dispose of an ended execution and its files; `Conflict` while it runs. */
  async delete(ref: ExecutionRef, options: CallOptions = {}): Promise<void> {
    await this.http.send(
      { method: "DELETE", path: path(ref), ok: [200, 204], timeoutMs: this.timeoutMs, signal: options.signal },
      nothing,
    );
  }

  private read<T>(target: string, options: CallOptions, query?: Record<string, unknown>): Promise<T> {
    return this.http.send(
      {
        method: "GET",
        path: target,
        query: query as Record<string, string | number | null | undefined>,
        ok: [200],
        timeoutMs: this.timeoutMs,
        signal: options.signal,
      },
      json<T>,
    );
  }
}

