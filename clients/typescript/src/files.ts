/**
 * The files of a session's workspace (`wb.files("web")`): `read`, `write`, `list`, `delete`,
 * `move`, `upload`, `download` and `watch`, what the Python client's `files()` handle does, kept
 * here so that each request is described once.
 */

import { segment } from "./contexts.js";
import { Unavailable, WorkbenchError, errorFromBody } from "./errors.js";
import { Deadline, type Http, type Send, describe, headerValue, nothing, notSent } from "./http.js";
import { LONE_SURROGATE } from "./input.js";
import type { OpenStream, StreamResponse } from "./platform.js";
import { FrameReader } from "./sse.js";
import type {
  CallOptions,
  FileDeleteOptions,
  FileEntry,
  FileEvent,
  FileList,
  FileListOptions,
  FileMoveOptions,
  FileReadOptions,
  FileUploadOptions,
  FileWatchOptions,
  FileWriteOptions,
  UploadResult,
} from "./types.js";

/** What a handle needs of its client: its requests, and its event streams for `watch`. */
export interface FilesReach {
  readonly http: Http;
  readonly timeoutMs: number;
  readonly openStream: OpenStream;
  readonly streamIdleMs: number;
}

/** One name of a workspace path escaped as a URL segment. */
function escapeName(name: string): string {
  try {
    return encodeURIComponent(name);
  } catch {
    throw new TypeError(`the path ${JSON.stringify(name)} has a lone surrogate: it is not Unicode text`);
  }
}

/** `path`, checked to be a string (a path of the workspace, as given). */
function given(path: string): string {
  if (typeof path !== "string") {
    throw new TypeError("a workspace path is a string (`src/app.py`; `\"\"`: the workspace)");
  }
  return path;
}

function count(what: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
    throw new TypeError(`${what} is a byte offset: an integer, 0 or more`);
  }
}

const json = <T>(response: Response): Promise<T> => response.json() as Promise<T>;

/**
 * A session's workspace: paths are relative to it (`src/app.py`; `""` is the workspace itself)
 * and never lead out of it: a `..` in the path of `read`, `write`, `list` or `delete` is a
 * `TypeError` at once; the daemon refuses one elsewhere, and an absolute path or a symlink out,
 * with `InvalidRequest`. Nothing is sent until a method is called; another principal's session,
 * or one without a workspace, is `NotFound`.
 */
export class Files {
  private readonly base: string;

  constructor(
    private readonly reach: FilesReach,
    /** The session whose workspace this is. */
    readonly sessionId: string,
  ) {
    this.base = `/v1/sessions/${segment(sessionId)}/files`;
  }

  /**
   * The bytes of the file at `path`, exactly, from `start` up to `end` (exclusive; default: the
   * end); past the end, or `end` at or before `start`: empty. `NotFound` when it is not there; a
   * directory is a `WorkbenchError` with code `is_a_directory` (list it with `list()`).
   */
  async read(path: string, options: FileReadOptions = {}): Promise<Uint8Array> {
    const { start = 0, end, signal } = options;
    count("start", start);
    count("end", end);
    const target = this.path(path);
    if (end !== undefined && end <= start) return new Uint8Array(0);
    const headers: Record<string, string> = {};
    if (start > 0 || end !== undefined) headers.Range = `bytes=${start}-${end === undefined ? "" : end - 1}`;
    const request = { method: "GET", path: target, headers, ok: [200, 206, 416], headersOnly: true, signal } as const;
    return this.send(request, async (response) => {
      if (response.status === 416) {
        await response.arrayBuffer();
        return new Uint8Array(0); // from its end or beyond: nothing to read
      }
      if ((response.headers.get("content-type") ?? "").startsWith("application/json")) {
        await response.arrayBuffer();
        throw new WorkbenchError(`${JSON.stringify(path)} is a directory: list it with list()`, {
          code: "is_a_directory",
          status: response.status,
        });
      }
      return new Uint8Array(await response.arrayBuffer());
    });
  }

  /**
   * Write `data` (bytes as they are, text as UTF-8) to the file at `path`, atomically (a reader
   * sees the old file or the new one), its parents made: its entry. `ifMatch`: only if the file
   * is still that version (an `etag`); `createOnly`: only if nothing is there; else
   * `PreconditionFailed`. Only a plain write is sent again after a broken connection (a
   * conditional one would fail its condition against its own first try).
   */
  async write(path: string, data: string | Uint8Array, options: FileWriteOptions = {}): Promise<FileEntry> {
    const { ifMatch, createOnly = false, signal } = options;
    const target = this.path(path, "write");
    let bytes: Uint8Array;
    if (typeof data === "string") {
      const lone = LONE_SURROGATE.exec(data);
      if (lone !== null) {
        throw new TypeError(
          `the text has a lone surrogate at ${lone.index}: it is not Unicode; write a Uint8Array for bytes`,
        );
      }
      bytes = new TextEncoder().encode(data);
    } else if (data instanceof Uint8Array) {
      bytes = data;
    } else {
      throw new TypeError("a file's data is a string (written as UTF-8) or a Uint8Array");
    }
    const headers: Record<string, string> = {};
    if (ifMatch !== undefined) {
      headerValue("If-Match", ifMatch);
      headers["If-Match"] = ifMatch;
    }
    if (createOnly) headers["If-None-Match"] = "*";
    const resend = ifMatch === undefined && !createOnly;
    return this.send({ method: "PUT", path: target, bytes, headers, ok: [200, 201], resend, signal }, json<FileEntry>);
  }

  /** `path` and what is under it, `depth` levels down (default 1; 0: the path alone); a file lists as itself. */
  async list(path = "", options: FileListOptions = {}): Promise<FileList> {
    const { depth = 1, signal } = options;
    const query = { list: "", depth };
    return this.send({ method: "GET", path: this.path(path), query, ok: [200], signal }, json<FileList>);
  }

  /**
   * Remove a file, a symlink (never what it points to) or a directory with all in it. `ifMatch`
   * as for `write`. Not sent again after a broken connection (`Unavailable`: it may be done).
   */
  async delete(path: string, options: FileDeleteOptions = {}): Promise<void> {
    const { ifMatch, signal } = options;
    const headers: Record<string, string> = {};
    if (ifMatch !== undefined) {
      headerValue("If-Match", ifMatch);
      headers["If-Match"] = ifMatch;
    }
    const target = this.path(path, "delete");
    await this.send({ method: "DELETE", path: target, headers, ok: [204], resend: false, signal }, nothing);
  }

  /**
   * Move `source` to `destination` in the workspace (its parents made): the entry where it is
   * now. Something at `destination` is `Conflict` unless `overwrite`. Not sent again after a
   * broken connection.
   */
  async move(source: string, destination: string, options: FileMoveOptions = {}): Promise<FileEntry> {
    const { overwrite = false, signal } = options;
    const body = { from: given(source), to: given(destination), overwrite };
    const path = `${this.base}:move`;
    return this.send({ method: "POST", path, json: body, ok: [200], resend: false, signal }, json<FileEntry>);
  }

  /**
   * Unpack an archive (the bytes of a tar, plain or compressed, or of a zip) under `path`
   * (default: the workspace): what it held. It is checked whole first; a refused one changes nothing.
   */
  async upload(archive: Uint8Array, options: FileUploadOptions = {}): Promise<UploadResult> {
    const { path = "", signal } = options;
    if (!(archive instanceof Uint8Array)) {
      throw new TypeError("an upload is the bytes of a tar or zip archive (a Uint8Array)");
    }
    const query = { path: given(path) };
    const request = { method: "POST", path: `${this.base}:upload`, query, bytes: archive, ok: [200], signal } as const;
    return this.send(request, json<UploadResult>);
  }

  /** The bytes of a tar (POSIX pax) of the directory (or the one file) at `path` (default: the workspace). */
  async download(path = "", options: CallOptions = {}): Promise<Uint8Array> {
    const query = { path: given(path) };
    const request = { method: "GET", path: `${this.base}:download`, query, ok: [200], headersOnly: true } as const;
    return this.send({ ...request, signal: options.signal }, async (response) => {
      return new Uint8Array(await response.arrayBuffer());
    });
  }

  /**
   * The changes under the directory `path` as they happen (`created`, `modified`, `deleted`, and
   * `overflow` when some were missed: list again), for `timeoutMs` (default: until the loop stops).
   * It ends when the daemon ends it (the time passed, the directory deleted, the daemon stopping).
   * Not replayed: a watch that breaks, or is silent for the client's `streamIdleMs`, is `Unavailable`.
   */
  async *watch(path = "", options: FileWatchOptions = {}): AsyncGenerator<FileEvent, void, undefined> {
    const { timeoutMs, signal } = options;
    if (signal?.aborted) throw signal.reason;
    const ends = timeoutMs === undefined ? undefined : Math.max(1, Math.round(timeoutMs));
    const query = { path: given(path), timeoutMs: ends };
    const url = this.reach.http.target(`${this.base}:watch`, query);
    const connection = new Deadline(signal, this.reach.timeoutMs);
    let stream: StreamResponse | undefined;
    let idle: ReturnType<typeof setInterval> | undefined;
    let ended = false;
    try {
      try {
        const headers = { ...this.reach.http.headers, Accept: "text/event-stream" };
        stream = await this.reach.openStream(url, headers, connection.signal);
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (notSent(error)) throw error;
        throw this.reach.http.unreachable(connection.timedOut ? `no answer within ${this.reach.timeoutMs} ms` : error);
      }
      connection.clearTimer();
      if (stream.status !== 200) throw errorFromBody(stream.status, await stream.text());
      let heard = Date.now();
      let handedOut = false;
      const idleMs = this.reach.streamIdleMs;
      idle = setInterval(() => {
        if (!handedOut && Date.now() - heard > idleMs) {
          connection.controller.abort(new Error(`the watch was silent for ${idleMs} ms`));
        }
      }, Math.min(5_000, idleMs));
      (idle as { unref?: () => void }).unref?.();
      const frames = new FrameReader();
      try {
        for await (const piece of stream.pieces) {
          heard = Date.now();
          for (const frame of frames.feed(piece)) {
            if (frame.id !== null || !frame.data) continue;
            const change = JSON.parse(frame.data) as FileEvent;
            handedOut = true;
            yield change;
            handedOut = false;
            heard = Date.now();
          }
        }
        ended = true;
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof SyntaxError) throw error;
        throw new Unavailable(
          `the watch of ${JSON.stringify(path)} broke (${describe(error)}); ` +
            "changes are not replayed: watch again, and list",
          { cause: error },
        );
      }
    } finally {
      if (idle !== undefined) clearInterval(idle);
      stream?.close(ended);
      if (!ended) connection.controller.abort();
      connection.dispose();
    }
  }

  /**
   * The URL path of `path`, each name escaped. A `..` is a `TypeError`: escaped or not, a URL
   * resolves it (`%2E%2E` too), so that it would reach another route, not the daemon's refusal.
   * An absolute path is a `TypeError` too, as the daemon refuses one, and so is a write to a path
   * ending in `/` (a directory's). `.` and empty names are dropped, as the daemon drops them. The
   * workspace itself cannot be written or deleted (a `TypeError` too).
   */
  private path(path: string, change?: "write" | "delete"): string {
    if (given(path).startsWith("/")) {
      throw new TypeError(`the path ${JSON.stringify(path)} is absolute: paths are relative to the workspace`);
    }
    if (change === "write" && path.endsWith("/") && path.replace(/[/.]/g, "") !== "") {
      throw new TypeError(`the path ${JSON.stringify(path)} ends with '/', which names a directory: name a file`);
    }
    const names = given(path).split("/").filter((name) => name !== "" && name !== ".");
    if (names.includes("..")) {
      throw new TypeError(`the path ${JSON.stringify(path)} has a '..' component: paths stay inside the workspace`);
    }
    if (names.length === 0) {
      if (change !== undefined) {
        const what = change === "write" ? "written" : "deleted: deleteSession() removes it";
        throw new TypeError(`which file? the workspace itself cannot be ${what}`);
      }
      return this.base;
    }
    return `${this.base}/${names.map(escapeName).join("/")}`;
  }

  private send<T>(request: Omit<Send, "timeoutMs">, read: (response: Response) => Promise<T>): Promise<T> {
    return this.reach.http.send({ ...request, timeoutMs: this.reach.timeoutMs }, read);
  }
}
