// Compiled (never run) under `exactOptionalPropertyTypes` by types.test.mjs: a user's options
// taken from the environment, each possibly undefined.

import { type StartOptions, Workbench } from "../../dist/index.js";

const wb = new Workbench({ url: process.env.WORKBENCH_URL, token: process.env.WORKBENCH_TOKEN, timeoutMs: undefined });
const options: StartOptions = {
  cwd: process.env.HOME,
  image: process.env.WORKBENCH_IMAGE,
  sessionId: process.env.WORKBENCH_SESSION,
  idempotencyKey: process.env.KEY,
  waitTimeoutMs: undefined,
  signal: undefined,
  secretEnv: undefined,
  tty: undefined,
  ttySize: undefined,
  onWaitTimeout: undefined,
};
export const started = wb.runBash("true", options);
export const listed = wb.list({ status: undefined, sessionId: process.env.WORKBENCH_SESSION, limit: undefined });
export const exits = wb.exits({ waitTimeoutMs: undefined, leaseMs: undefined });
export const events = wb.events("ex_1", { after: undefined, signal: undefined });
export const cancelled = wb.cancel("ex_1", { reason: process.env.REASON, graceMs: undefined });
export const range = wb.artifact("ex_1", "stdout", { range: { start: undefined, end: undefined } });
export const service = wb.runBash("serve", { service: true, readiness: { port: 8000 }, readyTimeoutMs: undefined });
export const rerun = wb.rerun("ex_1", { env: undefined, background: undefined });
export const input = wb.sendInput("ex_1", "y\n", { eof: undefined, record: undefined });
export const context = wb.createContext("python", {
  image: process.env.WORKBENCH_IMAGE,
  sessionId: process.env.WORKBENCH_SESSION,
  env: undefined,
  idleTimeoutMs: undefined,
});
export const cell = context.then((ctx) => ctx.run("1 + 1", { timeoutMs: undefined, background: undefined }));
export const batch = wb.runBatch([{ kind: "workbench_bash", command: "true", cwd: process.env.HOME }], {
  concurrency: undefined,
  failFast: undefined,
  sessionId: process.env.WORKBENCH_SESSION,
  idempotencyKey: process.env.KEY,
});
export const items = wb.list({ batchId: process.env.BATCH, status: undefined });
export const ready = wb.wait("ex_1", { until: undefined, timeoutMs: undefined });
const files = wb.files(process.env.WORKBENCH_SESSION);
export const read = files.read("a.txt", { start: undefined, end: undefined });
export const written = files.write("a.txt", new Uint8Array([0xff]), { ifMatch: process.env.ETAG, createOnly: undefined });
export const listing = files.list(undefined, { depth: undefined });
export const moved = files.move("a", "b", { overwrite: undefined });
export const uploaded = files.upload(new Uint8Array(0), { path: process.env.DIR });
export const watched = files.watch(process.env.DIR, { timeoutMs: undefined });
export const pruned = wb.prune({ status: undefined, before: process.env.BEFORE });
export const stats = wb.stats({ signal: undefined });
