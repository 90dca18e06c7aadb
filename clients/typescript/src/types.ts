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
}

export interface ListPageOptions extends CallOptions {
  status?: ExecutionStatus | undefined;
  kind?: ExecutionKind | undefined;
  sessionId?: string | undefined;
  limit?: number | undefined;
  /** `nextCursor` of the previous page. */
  cursor?: string | null | undefined;
}

export interface WaitOptions extends CallOptions {
  /** Give up waiting after this long and return the record as it is (default: wait to the end). */
  timeoutMs?: number | undefined;
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
