/**
 * The wire types, by name: aliases of the schemas generated from the daemon's `/openapi.json`
 * (`generated/openapi.ts`), plus what the document does not describe (live SSE frames) and the
 * options of each call. Records are the daemon's JSON as it is: camelCase, times as RFC 3339
 * strings, durations in milliseconds.
 */

import type { components } from "./generated/openapi.js";

type Schemas = components["schemas"];

/** An execution record (`GET /v1/executions/{id}`). */
export type Execution = Schemas["Execution"];
/** Where an execution is in its life. */
export type ExecutionStatus = Execution["status"];
/** `workbench_bash` or `workbench_code`. */
export type ExecutionKind = Execution["executionKind"];
/** One journal event (it has a `sequence`). */
export type Event = Schemas["Event"];
/** The type of a journal event. */
export type EventType = Event["eventType"];
/** `stdout` or `stderr`. */
export type StreamName = NonNullable<Event["stream"]>;
export type EventPage = Schemas["EventPage"];
export type ExecutionList = Schemas["ExecutionList"];
export type Artifact = Schemas["Artifact"];
export type CancelResult = Schemas["CancelResult"];
export type DetachResult = Schemas["DetachResult"];
export type WaitResult = Schemas["WaitResult"];
/** One delivery of the exits feed: the outcome of a detached execution. */
export type Exit = Schemas["Exit"];
export type Image = Schemas["Image"];
/** A terminal's size. */
export type TtySize = Schemas["TtySize"];
/** `raw` or `plain` (ANSI escapes removed, redrawn lines in their last state). */
export type PreviewFormat = Schemas["PreviewFormat"];
/** What a foreground start does when its wait passes: `return`, `detach` or `cancel`. */
export type OnWaitTimeout = Schemas["OnWaitTimeout"];
export type SignalResult = Schemas["SignalResult"];
/** A signal `signal()` sends. */
export type SignalName = "HUP" | "INT" | "QUIT" | "TERM" | "USR1" | "USR2" | "WINCH" | "CONT" | "STOP" | "TSTP";
export type Health = Schemas["Health"];
/** A code context's record (`GET /v1/contexts/{id}`). */
export type Context = Schemas["Context"];
/** `starting`, `ready`, `busy` or `dead`. */
export type ContextStatus = Context["status"];
/** A session with a workspace (`GET /v1/sessions`). */
export type Session = Schemas["Session"];
/**
 * One item of a batch start: a start body with its `kind` (`workbench_bash` with `command`, or
 * `workbench_code` with `language` and `code`); a field given as `undefined` is left out.
 */
export type BatchItem = { [K in keyof BatchItemRequest]?: BatchItemRequest[K] | undefined } & {
  kind: BatchItemRequest["kind"];
};
type BatchItemRequest = Schemas["BatchItemRequest"];
/** An item of a batch as the batch's record (`items`) and its `item` events show it. */
export type ItemStatus = Schemas["ItemStatus"];
/** What `wait()` waits for: `end`, or `ready` (a service ready, or any execution ended). */
export type WaitUntil = Schemas["WaitUntil"];
/** `GET /v1/stats`: the executions by status, and the sizes on disk. */
export type Stats = Schemas["Stats"];
/** `prune`'s answer: how many executions were deleted. */
export type DeleteResult = Schemas["DeleteResult"];
/** One entry of a workspace: a file, a directory, a symlink (with its `target`) or `other`. */
export type FileEntry = Schemas["FileEntry"];
/** A listing of a workspace path (`files.list()`). */
export type FileList = Schemas["FileList"];
/** One change under a watched path (`files.watch()`). */
export type FileEvent = Schemas["FileEvent"];
/** What `files.upload()` unpacked. */
export type UploadResult = Schemas["UploadResult"];

/**
 * What the stream sends besides journal events, once the output budget is spent: display output
 * that is not journaled (`output`), or word that some of it was missed (`gap`). Never replayed.
 */
export interface LiveEvent {
  sequence: null;
  eventType: "output" | "gap";
  timestamp?: string | null;
  stream?: StreamName | null;
  outputDelta?: string | null;
  /** For a `gap`: how many display bytes were missed, when the daemon says. */
  missedBytes?: number | null;
}

/** An execution as the calls take it: its id, or a record returned earlier. */
export type ExecutionRef = string | { readonly executionId: string };

/** The id of an execution reference. */
export function executionId(ref: ExecutionRef): string {
  const id = typeof ref === "string" ? ref : ref.executionId;
  if (typeof id !== "string" || id.length === 0) {
    throw new TypeError("an execution is its id (a string) or a record with `executionId`");
  }
  return id;
}

/** The statuses after which nothing changes. */
export const TERMINAL_STATUSES: ReadonlySet<ExecutionStatus> = new Set<ExecutionStatus>([
  "completed",
  "failed",
  "cancelled",
  "timed_out",
  "partial_failed",
]);

/** True when an execution (or a status) is terminal: its outcome is final. */
export function isTerminal(what: ExecutionStatus | { readonly status: ExecutionStatus }): boolean {
  return TERMINAL_STATUSES.has(typeof what === "string" ? what : what.status);
}

/** The options of `new Workbench()`. */
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

/** Every call takes an `AbortSignal`; aborting a call never changes an execution. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

/** The options of `runBash` and `runCode` (the start body of the API, and the request's header). */
export interface StartOptions extends CallOptions {
  /** Return as soon as the execution is accepted (`queued` or `running`). */
  background?: boolean | undefined;
  /**
   * How long to wait for the end in the foreground; the record may then not be terminal yet
   * (the execution goes on). Default: as long as it runs.
   */
  waitTimeoutMs?: number | undefined;
  /** The deadline, counted from acceptance (queueing included). */
  timeoutMs?: number | undefined;
  /** No output for this long ends it `timed_out` (`error.code` `idle_timeout`). */
  idleTimeoutMs?: number | undefined;
  /** The working directory (absolute); default: the session's workspace. */
  cwd?: string | undefined;
  /** Variables merged over the image's defaults. */
  env?: Record<string, string> | undefined;
  /** Text fed to the process, then EOF (default: EOF at once). */
  stdin?: string | undefined;
  /** Any JSON, stored with the execution and returned unchanged. */
  metadata?: unknown;
  /** The image to run in (default `host`). */
  image?: string | undefined;
  sessionId?: string | undefined;
  /** Hand the outcome to the exits feed. */
  detached?: boolean | undefined;
  /**
   * The same key never runs a command twice. Without one the client makes a fresh key per
   * call, so that its own resend after a broken connection cannot run it twice either.
   */
  idempotencyKey?: string | undefined;
  /** Variables passed like `env` whose values are never returned, logged or stored (the record lists the names). */
  secretEnv?: Record<string, string> | undefined;
  /** The most bytes of each stream in the record's `preview` (0 to 1048576; default 16384). */
  previewBytes?: number | undefined;
  previewFormat?: PreviewFormat | undefined;
  /** Run it on this node only (its `WORKBENCH_NODE_ID`). */
  node?: string | undefined;
  /**
   * A foreground start whose `waitTimeoutMs` passes: `return` the record (the default; the run
   * goes on), `detach` it or `cancel` it. Other than `return`, it needs a foreground start with a
   * `waitTimeoutMs` of at most `MAX_WAIT_MS` (else a `TypeError`).
   */
  onWaitTimeout?: OnWaitTimeout | undefined;
  /** Keep stdin open for `sendInput()` (instead of `stdin` text). */
  openStdin?: boolean | undefined;
  /** Run on a pseudo-terminal (input is open as with `openStdin`). */
  tty?: boolean | undefined;
  /** With `tty`: its size (default 24 rows, 80 columns). */
  ttySize?: TtySize | undefined;
}

/** The options of `runBash`: a start's, and those of bash alone. */
export interface BashStartOptions extends StartOptions {
  /** A service, meant to stay up: no default deadline; it lives while its tree does. */
  service?: boolean | undefined;
  /** With `service`: when it is ready, once a process of its tree listens on `port`, or a line matches `logPattern`. */
  readiness?: { port: number } | { logPattern: string } | undefined;
  /** With `readiness`: not ready by then, it is killed (`timed_out`, `ready_timeout`); default 60000. */
  readyTimeoutMs?: number | undefined;
  /** Start where the session's last `persistShell` execution left off (cwd and exported variables). */
  persistShell?: boolean | undefined;
}

/** The options of `runCode`: a start's, and the code context to run in. */
export interface CodeStartOptions extends StartOptions {
  /** Run in this code context (`cx_...`): its language, image, session, cwd and environment apply. */
  contextId?: string | undefined;
}

/** The options of `rerun`: each field given replaces the original's (those of a start, as documented there). */
export interface RerunOptions
  extends Pick<
    StartOptions,
    | "signal"
    | "background"
    | "waitTimeoutMs"
    | "timeoutMs"
    | "idleTimeoutMs"
    | "cwd"
    | "env"
    | "stdin"
    | "metadata"
    | "image"
    | "sessionId"
    | "detached"
    | "idempotencyKey"
  > {
  /** A bash execution's new command. */
  command?: string | undefined;
  /** A code execution's new code (same language). */
  code?: string | undefined;
  /** The values of the original's `secretEnvNames`: all of them, every time (they are never kept). */
  secretEnv?: Record<string, string> | undefined;
}

export interface InputOptions extends CallOptions {
  /** Close stdin after the data (on a terminal: send Ctrl-D). */
  eof?: boolean | undefined;
  /** False: keep the data out of the journal (a password). Default true. */
  record?: boolean | undefined;
  /**
   * How long a piece the execution has no room for yet (`InputBacklog`) is sent again: default
   * 60000; null: as long as it takes; 0: not at all.
   */
  timeoutMs?: number | null | undefined;
}

export interface ListOptions extends CallOptions {
  status?: ExecutionStatus | undefined;
  kind?: ExecutionKind | undefined;
  sessionId?: string | undefined;
  /** The most executions to go through, over all pages (default: all of them). */
  limit?: number | undefined;
  /** Executions per request (1 to 1000; default 50). */
  pageSize?: number | undefined;
  /** Only the items of this batch (its id or record). */
  batchId?: ExecutionRef | undefined;
}

export interface ListPageOptions extends CallOptions {
  status?: ExecutionStatus | undefined;
  kind?: ExecutionKind | undefined;
  sessionId?: string | undefined;
  limit?: number | undefined;
  /** `nextCursor` of the previous page. */
  cursor?: string | null | undefined;
  /** Only the items of this batch (its id or record). */
  batchId?: ExecutionRef | undefined;
}

export interface WaitOptions extends CallOptions {
  /** Give up waiting after this long and return the record as it is (default: wait to the end). */
  timeoutMs?: number | undefined;
  /** `ready`: until a service is ready (`record.ready`) or has ended; any other execution: its end. */
  until?: WaitUntil | undefined;
}

export interface CancelOptions extends CallOptions {
  reason?: string | undefined;
  /** Send SIGTERM first and give the tree this long before the SIGKILL. */
  graceMs?: number | undefined;
}

export interface EventsOptions extends CallOptions {
  /** Start after this sequence (0: from the first event). */
  after?: number | undefined;
  /** Follow live to the terminal event (default); false: replay what the journal holds now. */
  follow?: boolean | undefined;
  /** Yield display output past the budget as `LiveEvent`s too (default true). */
  live?: boolean | undefined;
}

export interface EventsPageOptions extends CallOptions {
  after?: number | undefined;
  limit?: number | undefined;
}

export interface ArtifactOptions extends CallOptions {
  /** Bytes from `start` up to `end` (exclusive; default: to the end). */
  range?: { start?: number | undefined; end?: number | undefined } | undefined;
}

/** The options of `createContext` (the fields of `POST /v1/contexts` besides `language`). */
export interface ContextOptions extends CallOptions {
  /** The image it runs in (default `host`). */
  image?: string | undefined;
  /** Its working directory is this session's workspace (default `default`). */
  sessionId?: string | undefined;
  /** Variables over the image's, for the interpreter's whole life. */
  env?: Record<string, string> | undefined;
  /** Kill it after this long with nothing running or queued in it (default: never). */
  idleTimeoutMs?: number | undefined;
}

export interface ExitsOptions extends CallOptions {
  limit?: number | undefined;
  /** Long-poll this long for an exit when there is none (default 30000). */
  waitTimeoutMs?: number | undefined;
  /** Hide each exit handed out for this long before handing it out again (default: the daemon's). */
  leaseMs?: number | undefined;
}

/** The options of `runBatch` (the fields of `POST /v1/executions/batch` besides `items`). */
export interface BatchOptions extends CallOptions {
  /** At most this many items run at once (default: as many as the daemon runs). */
  concurrency?: number | undefined;
  /** The first item that ends without completing cancels the rest; the batch ends `failed`. */
  failFast?: boolean | undefined;
  /** Return as soon as the batch is accepted. */
  background?: boolean | undefined;
  /** How long to wait for the end in the foreground (default: as long as it runs). */
  waitTimeoutMs?: number | undefined;
  /** The batch's deadline from acceptance: no item runs past it. */
  timeoutMs?: number | undefined;
  /** Any JSON, kept with the batch's record. */
  metadata?: unknown;
  /** The batch's own session (for listings); each item has its own. */
  sessionId?: string | undefined;
  /** Hand the batch's outcome to the exits feed. */
  detached?: boolean | undefined;
  /** As a start's: the same key never starts the batch twice (the client makes one when omitted). */
  idempotencyKey?: string | undefined;
}

/** The options of `prune`: at least one of `status` and `before`. */
export interface PruneOptions extends CallOptions {
  /** Ended statuses: one, or several. */
  status?: ExecutionStatus | readonly ExecutionStatus[] | undefined;
  /**
   * Ended before then: a `Date`, a duration back from now as the daemon reads it (`"7d"`, `"12h"`,
   * `"500ms"`) or an RFC 3339 time with its offset, or a number of milliseconds back from now.
   */
  before?: Date | string | number | undefined;
}

export interface FileReadOptions extends CallOptions {
  /** From this byte (default 0). */
  start?: number | undefined;
  /** Up to this byte, exclusive (default: the end). */
  end?: number | undefined;
}

export interface FileWriteOptions extends CallOptions {
  /** Only if the file is still this version (its `etag`), else `PreconditionFailed`. */
  ifMatch?: string | undefined;
  /** Only if nothing is at the path yet, else `PreconditionFailed`. */
  createOnly?: boolean | undefined;
}

export interface FileListOptions extends CallOptions {
  /** Levels under the path (0 to 64; 0: the path alone; default 1). */
  depth?: number | undefined;
}

export interface FileDeleteOptions extends CallOptions {
  /** Only if the file is still this version (its `etag`), else `PreconditionFailed`. */
  ifMatch?: string | undefined;
}

export interface FileMoveOptions extends CallOptions {
  /** Replace what is at the destination (a file, or an empty directory); else `Conflict`. */
  overwrite?: boolean | undefined;
}

export interface FileUploadOptions extends CallOptions {
  /** Where to unpack it (default: the workspace itself). */
  path?: string | undefined;
}

export interface FileWatchOptions extends CallOptions {
  /** End the watch after this long (default: when the loop stops). */
  timeoutMs?: number | undefined;
}
