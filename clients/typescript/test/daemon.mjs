// Real daemons for the tests: `python -m workbench serve` as child processes on 127.0.0.1, each
// with its own data dir under one scratch directory per test file; stopped, and checked to have
// left no process behind, when the file's tests end.

import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Workbench } from "../dist/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));
export const PACKAGE = resolve(HERE, "..");
export const REPO = resolve(PACKAGE, "..", "..");
/** The interpreter that runs the daemon: the project's venv unless $WORKBENCH_PYTHON says. */
export const PYTHON = process.env.WORKBENCH_PYTHON || join(REPO, ".venv", "bin", "python");
export const TOKEN = "ts-client-test-token-0123456789";

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:(\d+))/;

/** Every daemon process started, so that a test process that dies still stops them. */
const running = new Set();
process.on("exit", () => {
  // A graceful stop: each daemon (in `kill` mode) then ends its executions and its supervisor.
  for (const proc of running) proc.kill("SIGTERM");
});

function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith("WORKBENCH_")) env[key] = value;
  }
  return env;
}

/** A scratch directory for one test file; `cleanup()` stops its daemons and checks for leftovers. */
export class Scratch {
  constructor(name) {
    this.root = mkdtempSync(join(tmpdir(), `wb-ts-${name}-`));
    this.daemons = [];
  }

  path(...parts) {
    return join(this.root, ...parts);
  }

  /** A daemon on its own data dir (or `dataDir`), not started yet. */
  daemon(env = {}, dataDir = undefined) {
    const daemon = new Daemon(dataDir ?? this.path(`data-${this.daemons.length}`), env, this.root);
    this.daemons.push(daemon);
    return daemon;
  }

  /** A daemon started on its own data dir, and a client of it: `{ daemon, wb }`. */
  async started(env = {}) {
    const daemon = await this.daemon(env).start();
    return { daemon, wb: daemon.client() };
  }

  /** Stop every daemon (a graceful stop in `kill` mode ends every tree), then look for leftovers. */
  async cleanup() {
    for (const daemon of this.daemons) await daemon.stop();
    const left = await settledLeftovers(this.root);
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    const described = left.map(describe).join(", ");
    if (left.length === 0) rmSync(this.root, { recursive: true, force: true });
    if (left.length > 0) throw new Error(`the tests left processes alive: ${described}`);
  }
}

export class Daemon {
  constructor(dataDir, env, root) {
    this.dataDir = dataDir;
    this.env = { ...env };
    this.root = root;
    this.port = 0;
    this.proc = null;
    this.url = null;
    this.log = `${dataDir}.log`;
  }

  /** Start (again, on the same port and data dir when it ran before) and wait until healthy. */
  async start() {
    const env = { ...cleanEnv(), WORKBENCH_TOKEN: TOKEN, WORKBENCH_DATA_DIR: this.dataDir, ...this.env };
    const from = existsSync(this.log) ? statSync(this.log).size : 0;
    const log = openSync(this.log, "a");
    const proc = spawn(PYTHON, ["-m", "workbench", "serve", "--bind", `127.0.0.1:${this.port}`], {
      cwd: REPO,
      env,
      stdio: ["ignore", log, log],
    });
    closeSync(log);
    running.add(proc);
    proc.once("exit", () => running.delete(proc));
    this.proc = proc;
    this.exited = new Promise((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const text = read(this.log).subarray(from).toString();
      const match = LISTENING.exec(text);
      if (match) {
        this.url = match[1];
        this.port = Number(match[2]);
        break;
      }
      if (proc.exitCode !== null || proc.signalCode !== null || Date.now() > deadline) {
        proc.kill("SIGKILL");
        throw new Error(`the daemon did not start:\n${text.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await this.healthy();
    return this;
  }

  async healthy(withinMs = 30_000) {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.url}/healthz`);
        if (response.ok) return;
      } catch {
        // not yet
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error("the daemon did not become healthy");
  }

  /** A client of this daemon. */
  client(options = {}) {
    return new Workbench({ url: this.url, token: TOKEN, ...options });
  }

  /** SIGTERM and wait for the exit (SIGKILL after 30 s). In `keep` mode executions live on. */
  async stop() {
    const proc = this.proc;
    if (proc === null || proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    await this.exited;
    clearTimeout(timer);
  }

  /** SIGKILL the daemon alone: its supervisor and executions live on. */
  async kill9() {
    this.proc.kill("SIGKILL");
    await this.exited;
  }
}

function read(path) {
  try {
    return readFileSync(path);
  } catch {
    return Buffer.alloc(0);
  }
}

function zombie(pid) {
  const stat = read(`/proc/${pid}/stat`).toString();
  const end = stat.lastIndexOf(")");
  return end < 0 || ["Z", "X", ""].includes(stat.slice(end + 2, end + 3));
}

/** Live processes whose command line or environment mentions `marker` (Linux /proc). */
export function processesMentioning(marker) {
  if (!existsSync("/proc/self")) return [];
  const needle = Buffer.from(marker);
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    const mentions = read(`/proc/${pid}/cmdline`).includes(needle) || read(`/proc/${pid}/environ`).includes(needle);
    if (mentions && !zombie(pid)) found.push(pid);
  }
  return found;
}

/** `processesMentioning`, after letting exiting processes finish for up to `settleMs`. */
export async function settledLeftovers(marker, settleMs = 3_000) {
  const deadline = Date.now() + settleMs;
  for (;;) {
    const found = processesMentioning(marker);
    if (found.length === 0 || Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function describe(pid) {
  const cmd = read(`/proc/${pid}/cmdline`).toString().replaceAll("\0", " ").trim();
  return `${pid} (${cmd.slice(0, 120)})`;
}

/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export function unusedPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Write a file and return its path. */
export function writeFile(path, data) {
  writeFileSync(path, data);
  return path;
}

/** Poll `check` until it is truthy (or throw after `withinMs`). */
export async function eventually(check, withinMs = 10_000, what = "the condition") {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() >= deadline) throw new Error(`${what} did not hold within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
