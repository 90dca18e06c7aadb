// Every field of a start reaches the daemon (each checked on the record or the output it makes),
// and the calls on a running execution: input, signals, a terminal's size, reruns.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Conflict, NotFound, isTerminal } from "../dist/index.js";
import { Scratch, eventually } from "./daemon.mjs";

const scratch = new Scratch("start");
let wb;

before(async () => {
  wb = (await scratch.daemon().start()).client();
});
after(() => scratch.cleanup());

const text = (bytes) => new TextDecoder().decode(bytes);

/** Input and signals need a running execution (a queued one is `409`). */
const running = (run) => eventually(async () => (await wb.get(run)).status === "running", 10_000, "running");

describe("the fields of a start", { timeout: 60_000 }, () => {
  test("secretEnv, previewBytes, previewFormat, node", async () => {
    const run = await wb.runBash("printf '\\033[1mbold\\033[0m %s' \"$TOKEN_X\"", {
      secretEnv: { TOKEN_X: "s3cret" },
      previewBytes: 6,
      previewFormat: "plain",
    });
    assert.equal(run.status, "completed");
    assert.deepEqual(run.secretEnvNames, ["TOKEN_X"]);
    assert.ok(!JSON.stringify(run).includes("s3cret"), "the value is never returned");
    assert.equal(text(await wb.output(run)), "\x1b[1mbold\x1b[0m s3cret");
    assert.ok(run.preview.stdout.length <= 6 && !run.preview.stdout.includes("\x1b"), JSON.stringify(run.preview));
    assert.ok(run.preview.stdoutElidedBytes > 0);
    const elsewhere = await wb.runBash("true", { node: "no-such-node" }).catch((e) => e);
    assert.equal(elsewhere.code, "invalid_request", elsewhere.message);
  });

  test("tty and ttySize; openStdin", async () => {
    const run = await wb.runBash("[ -t 1 ] && stty size", { tty: true, ttySize: { rows: 30, cols: 100 } });
    assert.equal(run.tty, true);
    assert.equal(text(await wb.output(run)).trim(), "30 100");
    const open = await wb.runBash("cat", { openStdin: true, background: true });
    assert.equal(open.openStdin, true);
    await wb.cancel(open);
  });

  test("onWaitTimeout cancels a foreground start whose wait passed; it needs such a wait", async () => {
    const run = await wb.runBash("sleep 30", { waitTimeoutMs: 200, onWaitTimeout: "cancel" });
    assert.equal(run.status, "cancelled");
    await assert.rejects(wb.runBash("true", { onWaitTimeout: "detach" }), TypeError);
    await assert.rejects(wb.runBash("true", { background: true, onWaitTimeout: "cancel" }), TypeError);
  });

  test("a service, ready by its log", async () => {
    const run = await wb.runBash("echo listening now; sleep 30", {
      background: true,
      service: true,
      readiness: { logPattern: "listening" },
      readyTimeoutMs: 10_000,
    });
    assert.equal(run.service, true);
    assert.deepEqual(run.readiness, { port: null, logPattern: "listening" });
    assert.equal(run.readyTimeoutMs, 10_000);
    await eventually(async () => (await wb.get(run)).ready, 10_000, "ready");
    await wb.cancel(run);
  });

  test("persistShell carries the session's shell state; contextId reaches the daemon", async () => {
    const sessionId = "persist";
    await wb.runBash("cd /tmp && export FROM_BEFORE=yes", { persistShell: true, sessionId });
    const next = await wb.runBash('pwd; echo "$FROM_BEFORE"', { persistShell: true, sessionId });
    assert.equal(next.persistShell, true);
    assert.equal(text(await wb.output(next)), "/tmp\nyes\n");
    await assert.rejects(wb.runCode("python", "1", { contextId: "cx_01M8RF4Q4G3XB8E7KY9425AAAA" }), NotFound);
  });
});

describe("calls on a running execution", { timeout: 60_000 }, () => {
  test("sendInput writes to its stdin, as text or bytes, and closes it", async () => {
    const run = await wb.runBash("cat", { openStdin: true, background: true });
    await running(run);
    await wb.sendInput(run, "one\n");
    await wb.sendInput(run, new TextEncoder().encode("two\n"), { eof: true });
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.equal(text(await wb.output(done)), "one\ntwo\n");
    await assert.rejects(wb.sendInput(done, "late"), Conflict);
  });

  test("sendInput with record: false keeps the text out of the journal", async () => {
    const run = await wb.runBash("read -r secret; echo got ${#secret}", { openStdin: true, background: true });
    await running(run);
    await wb.sendInput(run, "hunter2\n", { record: false });
    const done = await wb.wait(run);
    assert.equal(text(await wb.output(done)), "got 7\n");
    const inputs = (await wb.eventsPage(done)).events.filter((e) => e.eventType === "input");
    assert.equal(inputs.length, 1);
    assert.ok(!JSON.stringify(inputs).includes("hunter2"));
  });

  test("signal reaches the tree without ending the execution; resize sets a terminal's size", async () => {
    const run = await wb.runBash("trap 'echo got INT' INT; for i in $(seq 50); do sleep 0.1; done; echo end", {
      background: true,
    });
    await running(run);
    await new Promise((r) => setTimeout(r, 300)); // the trap is set
    const answer = await wb.signal(run, "INT");
    assert.equal(answer.execution.executionId, run.executionId);
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.match(text(await wb.output(done)), /got INT[\s\S]*end/);
    await assert.rejects(wb.signal(done, "INT"), Conflict);

    const tty = await wb.runBash("sleep 1; stty size", { tty: true, background: true });
    await running(tty);
    await wb.resize(tty, { rows: 40, cols: 120 });
    const sized = await wb.wait(tty);
    assert.deepEqual(sized.ttySize, { rows: 40, cols: 120 });
    assert.equal(text(await wb.output(sized)).trim(), "40 120");
  });

  test("rerun starts the same spec again, with fields replaced", async () => {
    const first = await wb.runBash('echo "$GREETING"', { env: { GREETING: "hello" }, metadata: { n: 1 } });
    const again = await wb.rerun(first);
    assert.notEqual(again.executionId, first.executionId);
    assert.equal(again.rerunOf, first.executionId);
    assert.ok(isTerminal(again));
    assert.equal(text(await wb.output(again)), "hello\n");
    const changed = await wb.rerun(first, { env: { GREETING: "bye" }, background: true, idempotencyKey: "rerun-1" });
    assert.ok(!isTerminal(changed) || changed.status === "completed");
    const replayed = await wb.rerun(first, { env: { GREETING: "bye" }, background: true, idempotencyKey: "rerun-1" });
    assert.equal(replayed.executionId, changed.executionId, "the same key starts it once");
    assert.equal(text(await wb.output(await wb.wait(changed))), "bye\n");
  });
});
