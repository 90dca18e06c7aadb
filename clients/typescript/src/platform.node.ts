/**
 * The platform on Node. Where the daemon is, found as the command line and the Python client
 * find it:
 *
 * - URL: `$WORKBENCH_URL` (else the client's default, `http://127.0.0.1:8787`).
 * - Token: `$WORKBENCH_TOKEN`, else the file `token` in the data dir (`$WORKBENCH_DATA_DIR`,
 *   else `~/.local/share/workbench`), which `workbench serve` writes on first start. Empty or
 *   missing: no token (the daemon then answers `unauthorized`).
 *
 * And the event stream, read through `node:http`: Node's `fetch` hands a body over through web
 * streams, which made `events()` several times slower than the Python client on a long replay;
 * `node:http` reads it as fast as the daemon writes.
 */

/// <reference types="node" />
import { readFileSync } from "node:fs";
import { type IncomingMessage, request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { homedir } from "node:os";
import { join } from "node:path";

import type { Discovered, OpenStream } from "./platform.js";

/** `~` and `~/...` expanded as the shell (and Python's `os.path.expanduser`) would. */
function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/** The data dir the daemon uses by default. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.WORKBENCH_DATA_DIR;
  if (configured) return expandHome(configured, home(env));
  return join(home(env), ".local", "share", "workbench");
}

export function discover(env: NodeJS.ProcessEnv = process.env): Discovered {
  const found: Discovered = {};
  if (env.WORKBENCH_URL) found.url = env.WORKBENCH_URL;
  if (env.WORKBENCH_TOKEN) {
    found.token = env.WORKBENCH_TOKEN;
    found.tokenSource = "WORKBENCH_TOKEN";
    return found;
  }
  const path = join(dataDir(env), "token");
  let token = "";
  try {
    token = readFileSync(path, "utf8").trim();
  } catch {
    token = "";
  }
  if (token) {
    found.token = token;
    found.tokenSource = path;
  }
  return found;
}

/** How long a finished stream is read for its end before its connection is dropped. */
const KEEP_WAITING_MS = 1_000;
/** Past this many characters read ahead, reading pauses until the caller takes them. */
const READ_AHEAD = 4 * 1024 * 1024;

/**
 * The body as text, read as fast as it arrives (the socket is drained while the caller works on
 * what came before, up to `READ_AHEAD`), and handed over joined: one piece per turn.
 */
function pieces(response: IncomingMessage): AsyncIterable<string> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<string> {
      const queue: string[] = [];
      let queued = 0;
      let ended = false;
      let failure: unknown = null;
      let wake: (() => void) | null = null;
      const poke = () => {
        const resolve = wake;
        wake = null;
        resolve?.();
      };
      response.on("data", (piece: string) => {
        queue.push(piece);
        queued += piece.length;
        if (queued > READ_AHEAD) response.pause();
        poke();
      });
      response.on("end", () => {
        ended = true;
        poke();
      });
      response.on("error", (error) => {
        failure ??= error;
        poke();
      });
      response.on("close", () => {
        if (!ended) failure ??= new Error("the connection closed before the end of the stream");
        poke();
      });
      return {
        async next(): Promise<IteratorResult<string>> {
          for (;;) {
            if (queue.length > 0) {
              const value = queue.length === 1 ? (queue[0] as string) : queue.join("");
              queue.length = 0;
              queued = 0;
              if (response.isPaused()) response.resume();
              return { value, done: false };
            }
            if (failure !== null) throw failure;
            if (ended) return { value: undefined, done: true };
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          }
        },
        async return(): Promise<IteratorResult<string>> {
          // The caller's `close()` says whether the connection is kept or dropped.
          return { value: undefined, done: true };
        },
      };
    },
  };
}

/** `GET url` through `node:http(s)` (the global agents, which keep connections alive). */
export const openStream: OpenStream | null = (url, headers, signal) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const request = send(target, { method: "GET", headers, signal }, (response: IncomingMessage) => {
      response.setEncoding("utf8");
      resolve({
        status: response.statusCode ?? 0,
        pieces: pieces(response),
        async text() {
          let body = "";
          for await (const piece of response as AsyncIterable<string>) body += piece;
          return body;
        },
        close: (finished) => {
          if (!finished) {
            response.destroy();
            return;
          }
          // The daemon ends the body right after the last event: read that end, and the
          // connection goes back to the pool (a new one costs the daemon more than the replay).
          if (response.complete) return;
          response.removeAllListeners("data");
          response.resume();
          const timer = setTimeout(() => response.destroy(), KEEP_WAITING_MS);
          timer.unref?.();
          response.once("end", () => clearTimeout(timer));
          response.once("close", () => clearTimeout(timer));
        },
      });
    });
    request.on("error", reject);
    request.end();
  });
