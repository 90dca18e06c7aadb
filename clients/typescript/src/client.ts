/**
 * `Workbench`: a client of one daemon, its calls named as the Python client's in camelCase.
 *
 * Results are the daemon's JSON records as they are (see `types.ts`); failures are the classes
 * of `errors.ts`. Every call takes an `AbortSignal`: aborting one abandons the request, never
 * the execution (a wait or a stream that is aborted leaves it running).
 */

import { discover, openStream } from "#platform";

import * as contexts from "./contexts.js";
import { CodeContext, type ContextRunOptions } from "./contexts.js";
import { Files, type FilesReach } from "./files.js";
import { followEvents } from "./follow.js";
import { Http, headerValue, nothing } from "./http.js";
import { INPUT_TIMEOUT_MS, sendInputPieces } from "./input.js";
import {
  BACKOFF_FIRST_MS,
  BACKOFF_MAX_MS,
  DEFAULT_URL,
  MAX_WAIT_MS,
  MAX_WAIT_TIMEOUT_MS,
  SLACK_MS,
  STREAM_IDLE_MS,
} from "./limits.js";
import { ExecutionListing } from "./listing.js";
import { ackExit, pollExits } from "./exits.js";
import { readArtifact, streamOutput } from "./output.js";
import { type OpenStream, fetchStream } from "./platform.js";
import { prune } from "./retention.js";
import { type StartingOptions, batchItems, startRequest } from "./start.js";
import {
  type Artifact,
  type ArtifactOptions,
  type BashStartOptions,
  type BatchItem,
  type BatchOptions,
  type CallOptions,
  type CancelOptions,
  type CancelResult,
  type CodeStartOptions,
  type ContextOptions,
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
  type PruneOptions,
  type Session,
  type SignalName,
  type SignalResult,
  type Stats,
  type TtySize,
  type StreamName,
  type WaitOptions,
  type WaitResult,
  type WorkbenchOptions,
  executionId,
  isTerminal,
} from "./types.js";

// Kept in modules of their own (shared with the follow, the listing needs the client's type).
export { BACKOFF_FIRST_MS, BACKOFF_MAX_MS, DEFAULT_URL, MAX_WAIT_MS, MAX_WAIT_TIMEOUT_MS, SLACK_MS, STREAM_IDLE_MS };
export { CodeContext, type ContextRunOptions, ExecutionListing, Files };

function path(ref: ExecutionRef, tail = ""): string {
  return `/v1/executions/${encodeURIComponent(executionId(ref))}${tail}`;
}

const json = <T>(response: Response): Promise<T> => response.json() as Promise<T>;

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
  private readonly reach: contexts.Reach & FilesReach;

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
    this.reach = {
      http: this.http,
      timeoutMs: this.timeoutMs,
      openStream: this.openStream,
      streamIdleMs: this.streamIdleMs,
      runCode: (...args) => this.runCode(...args),
    };
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

  /**
   * Start a batch of executions, accepted all or none, and return the batch's record (`items`
   * lists them, each an execution of its own). Each item is a start body with its `kind`
   * (`{ kind: "workbench_bash", command }`, `{ kind: "workbench_code", language, code }`) and
   * start fields (`cwd`, `env`, `timeoutMs`, ...). Waits as `runBash`; the same `idempotencyKey`
   * never starts it twice. `list({ batchId })` lists its items.
   */
  async runBatch(items: readonly BatchItem[], options: BatchOptions = {}): Promise<Execution> {
    return this.start("/v1/executions/batch", batchItems(items), options);
  }

  /** `runBatch`, by another name. */
  startBatch(items: readonly BatchItem[], options: BatchOptions = {}): Promise<Execution> {
    return this.runBatch(items, options);
  }

  private async start(target: string, what: object, options: StartingOptions): Promise<Execution> {
    const began = Date.now();
    const { body, key, background, acts, waitTimeoutMs, until, signal } = startRequest(what, options);
    const execution = await this.http.send(
      {
        method: "POST",
        path: target,
        json: body,
        headers: { "Idempotency-Key": key },
        ok: [200, 201, 202],
        timeoutMs: body.background ? this.timeoutMs : (body.waitTimeoutMs as number) + SLACK_MS,
        signal,
      },
      json<Execution>,
    );
    if (background || acts || isTerminal(execution) || (until === "ready" && execution.ready)) return execution;
    if (waitTimeoutMs === undefined) return this.wait(execution, { until, signal });
    const left = waitTimeoutMs - (Date.now() - began);
    return left <= 0 ? execution : this.wait(execution, { timeoutMs: left, until, signal });
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
  async listPage(options: ListPageOptions = {}): Promise<ExecutionList> {
    const { status, kind, sessionId, limit = 50, cursor, batchId, signal } = options;
    const batch = batchId === undefined ? undefined : executionId(batchId);
    return this.read("/v1/executions", { signal }, { status, kind, sessionId, limit, cursor, batchId: batch });
  }

  /**
   * Wait for the end, at most `timeoutMs` (default: as long as it runs); the record then.
   * `until: "ready"`: until a service is ready (`record.ready`) or has ended (another execution:
   * its end). A wait that times out returns the record as it is (check `isTerminal`) and changes
   * nothing; so does an aborted one, which rejects with the signal's reason.
   */
  async wait(ref: ExecutionRef, options: WaitOptions = {}): Promise<Execution> {
    const { timeoutMs, until, signal } = options;
    const deadline = timeoutMs === undefined ? null : Date.now() + Math.max(0, timeoutMs);
    for (;;) {
      const left = deadline === null ? MAX_WAIT_MS : Math.max(0, Math.min(deadline - Date.now(), MAX_WAIT_MS));
      const result = await this.http.send(
        {
          method: "POST",
          path: path(ref, "/wait"),
          json: until === undefined ? { waitTimeoutMs: Math.round(left) } : { waitTimeoutMs: Math.round(left), until },
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
    const client = {
      http: this.http,
      openStream: this.openStream,
      timeoutMs: this.timeoutMs,
      reconnectForMs: this.reconnectForMs,
      streamIdleMs: this.streamIdleMs,
    };
    yield* followEvents(client, url, after, live, signal);
  }

  /**
   * The whole output of one stream as bytes, byte for byte what the process wrote: the
   * journal's text, then, past the output budget (or from the first byte that was not UTF-8),
   * the rest from the stream's artifact. For an execution still running: what the journal
   * holds so far (artifacts are kept at the end).
   */
  async output(ref: ExecutionRef, stream: StreamName = "stdout", options: CallOptions = {}): Promise<Uint8Array> {
    return streamOutput(this, ref, stream, options);
  }

  /** The artifacts kept for an execution (its whole stdout/stderr when they had to be kept). */
  async artifacts(ref: ExecutionRef, options: CallOptions = {}): Promise<Artifact[]> {
    return (await this.read<{ artifacts: Artifact[] }>(path(ref, "/artifacts"), options)).artifacts;
  }

  /** The bytes of artifact `name`, or of `range` of it (`end` exclusive). Past the end: empty. */
  artifact(ref: ExecutionRef, name: string, options: ArtifactOptions = {}): Promise<Uint8Array> {
    return readArtifact(this.http, path(ref, `/artifacts/${encodeURIComponent(name)}`), this.timeoutMs, options);
  }

  /** The images executions can run in. */
  async images(options: CallOptions = {}): Promise<Image[]> {
    return (await this.read<{ images: Image[] }>("/v1/images", options)).images;
  }

  /** Your executions by status (`admin`: everyone's), the store's size and the data dir's. */
  stats(options: CallOptions = {}): Promise<Stats> {
    return this.read("/v1/stats", options);
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
  exits(options: ExitsOptions = {}): Promise<Exit[]> {
    return pollExits(this.http, options);
  }

  // -- changing ----------------------------------------------------------------------------

  /**
   * Write to the open stdin of a running execution started with `openStdin` or `tty`: text (as
   * UTF-8) or bytes, of any size: they go in pieces of at most 1048576 bytes (text cut between
   * characters). `eof` closes stdin after it (on a terminal: sends Ctrl-D); `record: false` keeps
   * it out of the journal. A piece refused because the execution has not read what was sent before
   * (`InputBacklog`: nothing of it was taken) is sent again, after a pause doubling from 10 ms to
   * 250 ms, for up to `timeoutMs` (default 60000; null: as long as it takes; 0: not at all), so a
   * slow reader gets every byte once, in order. A piece is never sent again after a broken
   * connection (`Unavailable`). `Conflict` when its stdin is not open, is closed, or it does not
   * run. An error once part of `data` was taken, or on giving up on the backlog, says in its
   * message, and in `details.takenBytes`, how many bytes of `data` (of its UTF-8, for text) were
   * taken: send only the rest again. Text with a lone surrogate: a `TypeError`, nothing sent.
   */
  async sendInput(ref: ExecutionRef, data: string | Uint8Array, options: InputOptions = {}): Promise<void> {
    const { eof, record, timeoutMs, signal } = options;
    await sendInputPieces(this.http, data, {
      path: path(ref, "/input"),
      eof: eof ?? false,
      record: record ?? true,
      backlogMs: timeoutMs === undefined ? INPUT_TIMEOUT_MS : timeoutMs,
      callTimeoutMs: this.timeoutMs,
      signal,
    });
  }

  /**
   * Send `name` (`INT`, `TERM`, ...) to every process of a running tree (on a terminal: to its
   * foreground process group), without ending the execution. `Conflict` when it does not run.
   * Never sent again after a broken connection (`Unavailable`: the daemon may have sent it).
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
        resend: false, // a signal sent twice is not the signal sent once
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
  ack(delivery: Exit | string, options: CallOptions = {}): Promise<void> {
    return ackExit(this.http, this.timeoutMs, delivery, options);
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
    await contexts.remove(this.reach, path(ref), options);
  }

  // -- code contexts and sessions -----------------------------------------------------------

  /**
   * Start a code context, a long-lived interpreter (`python`, or `node` where the image has it)
   * whose names persist from one `ctx.run(code)` to the next; the handle once it is ready (or
   * `dead`: see `ctx.record.reason`). Never sent twice (`Unavailable` after a broken connection).
   */
  createContext(language = "python", options: ContextOptions = {}): Promise<CodeContext> {
    return contexts.createContext(this.reach, language, options);
  }

  /** The code contexts, oldest first, as handles (dead ones included). */
  contexts(options: CallOptions = {}): Promise<CodeContext[]> {
    return contexts.listContexts(this.reach, options);
  }

  /** The handle of code context `id`; `NotFound` for one that is not the caller's. */
  context(id: string, options: CallOptions = {}): Promise<CodeContext> {
    return contexts.getContext(this.reach, id, options);
  }

  /** The sessions with a workspace, by id (`liveExecutions` and `liveContexts` hold a delete). */
  sessions(options: CallOptions = {}): Promise<Session[]> {
    return contexts.listSessions(this.reach, options);
  }

  /** Remove a session's workspace and shell state; `Conflict` while it is in use. */
  deleteSession(sessionId: string, options: CallOptions = {}): Promise<void> {
    return contexts.deleteSessions(this.reach, sessionId, options);
  }

  /** Remove every session; `Conflict` (naming them) while some are in use. */
  deleteSessions(options: CallOptions = {}): Promise<void> {
    return contexts.deleteSessions(this.reach, null, options);
  }

  /** The workspace of session `sessionId` (default `default`): `read`, `write`, `list`, ... */
  files(sessionId = "default"): Files {
    return new Files(this.reach, sessionId);
  }

  /**
   * Delete the ended executions that `status` and `before` select (at least one of them), with
   * their events, files and acked exits, in one request: how many. Live ones are never touched.
   */
  prune(options: PruneOptions): Promise<number> {
    return prune(this.reach, options);
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

