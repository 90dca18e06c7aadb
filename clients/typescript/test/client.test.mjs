// The calls of the client against a real daemon: foreground and background runs, waits, events,
// output, artifacts, listing, cancel, detach and the exits feed, idempotency, aborts.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import { IdempotencyKeyReused, isTerminal } from "../dist/index.js";
import { Scratch, eventually, settledLeftovers, writeFile } from "./daemon.mjs";

const scratch = new Scratch("client");
let daemon;
let wb;

before(async () => ({ daemon, wb } = await scratch.started()));
after(() => scratch.cleanup());

const text = (bytes) => new TextDecoder().decode(bytes);
const sha = (bytes) => createHash("sha256").update(bytes).digest("hex");

async function collect(iterable) {
  const out = [];
  for await (const item of iterable) out.push(item);
  return out;
}

function assertJournal(events) {
  const sequences = events.filter((e) => e.sequence !== null).map((e) => e.sequence);
  assert.deepEqual(
    sequences,
    sequences.map((_, i) => i + 1),
    "sequences are 1, 2, 3, ...: no gap, no duplicate",
  );
  const last = events.at(-1);
  assert.equal(last.eventType, "status");
  assert.ok(isTerminal(last.status), "the terminal status event comes last");
}

describe("running", { timeout: 60_000 }, () => {
  test("in the foreground: the terminal record, its exit code and its output", async () => {
    const run = await wb.runBash("echo hello; echo oops >&2; exit 3");
    assert.equal(run.status, "failed");
    assert.equal(run.exitCode, 3);
    assert.equal(text(await wb.output(run, "stdout")), "hello\n");
    assert.equal(text(await wb.output(run.executionId, "stderr")), "oops\n");
    const code = await wb.runCode("python", "print(1 + 1)");
    assert.equal(code.status, "completed");
    assert.equal(code.executionKind, "workbench_code");
    assert.equal(text(await wb.output(code)), "2\n");
  });

  test("in the background: the record at once, then wait and the events to the end", async () => {
    const began = Date.now();
    const run = await wb.runBash("sleep 0.5; echo one; echo two", { background: true, metadata: { n: 1 } });
    assert.ok(Date.now() - began < 400, "a background start does not wait for the command");
    assert.ok(["queued", "running"].includes(run.status));
    const events = await collect(wb.events(run));
    assertJournal(events);
    const output = events.filter((e) => e.eventType === "output").map((e) => e.outputDelta).join("");
    assert.equal(output, "one\ntwo\n");
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.deepEqual(done.metadata, { n: 1 });
    const replay = await collect(wb.events(run, { after: 2 }));
    assert.deepEqual(replay, events.slice(2), "events after a sequence replay exactly the rest");
    const page = await collect(wb.events(run, { follow: false }));
    assert.deepEqual(page, events);
  });

  test("a foreground start with waitTimeoutMs returns the record as it is; the run goes on", async () => {
    const run = await wb.runBash("sleep 1; echo late", { waitTimeoutMs: 100 });
    assert.ok(!isTerminal(run), `still ${run.status}`);
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.equal(text(await wb.output(done)), "late\n");
  });

  test("a wait that times out returns the running record and does not kill it", async () => {
    const run = await wb.runBash("sleep 1.5; echo survived", { background: true });
    const began = Date.now();
    const waited = await wb.wait(run, { timeoutMs: 300 });
    const took = Date.now() - began;
    assert.equal(waited.status, "running");
    assert.ok(took >= 250 && took < 1_400, `the wait took ${took} ms`);
    assert.equal((await wb.get(run)).status, "running");
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.equal(text(await wb.output(run)), "survived\n");
  });

  test("aborting wait() or events() never cancels the execution", async () => {
    const run = await wb.runBash("sleep 1; echo finished", { background: true });
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 150);
    await assert.rejects(wb.wait(run, { signal: waiting.signal }), { name: "AbortError" });
    const following = new AbortController();
    const seen = [];
    await assert.rejects(async () => {
      for await (const event of wb.events(run, { signal: following.signal })) {
        seen.push(event);
        if (event.status === "running") following.abort();
      }
    }, { name: "AbortError" });
    assert.ok(seen.length >= 1);
    const broke = [];
    for await (const event of wb.events(run)) {
      broke.push(event);
      break; // leaving the loop closes the stream
    }
    assert.equal((await wb.get(run)).status, "running");
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.equal(done.cancelReason, null);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(wb.get(run, { signal: aborted.signal }), { name: "AbortError" });
  });
});

describe("output", { timeout: 60_000 }, () => {
  test("6 MB of UTF-8 text come back byte-exact: the journal, then the artifact past the budget", async () => {
    const line = "ünïcödé ✓ 😀 0123456789 abcdefghijklmnopqrstuvwxyz\n";
    const data = Buffer.from(line.repeat(Math.ceil((6 * 1024 * 1024) / Buffer.byteLength(line))));
    const file = writeFile(scratch.path("text.bin"), data);
    const run = await wb.runBash(`cat ${file}; cat ${file} >&2`);
    assert.equal(run.status, "completed");
    assert.equal(run.output.truncated, true, "6 MB is past the 5 MiB event budget");
    const stdout = await wb.output(run, "stdout");
    assert.equal(stdout.length, data.length);
    assert.equal(sha(stdout), sha(data));
    const stderr = await wb.output(run, "stderr");
    assert.equal(sha(stderr), sha(data));
    const names = (await wb.artifacts(run)).map((a) => a.name).sort();
    assert.deepEqual(names, ["stderr", "stdout"]);
  });

  test("6 MB of bytes that are not UTF-8 come back byte-exact, and artifact ranges", async () => {
    const data = randomBytes(6 * 1024 * 1024);
    const file = writeFile(scratch.path("random.bin"), data);
    const run = await wb.runBash(`cat ${file}`);
    assert.equal(run.status, "completed");
    const stdout = await wb.output(run);
    assert.equal(stdout.length, data.length);
    assert.equal(sha(stdout), sha(data));
    const [artifact] = (await wb.artifacts(run)).filter((a) => a.name === "stdout");
    assert.equal(artifact.sizeBytes, data.length);
    assert.equal(artifact.sha256, sha(data));
    const whole = await wb.artifact(run, "stdout");
    assert.equal(sha(whole), sha(data));
    const middle = await wb.artifact(run, "stdout", { range: { start: 1000, end: 1010 } });
    assert.deepEqual(Buffer.from(middle), data.subarray(1000, 1010));
    const tail = await wb.artifact(run, "stdout", { range: { start: data.length - 5 } });
    assert.deepEqual(Buffer.from(tail), data.subarray(data.length - 5));
    assert.equal((await wb.artifact(run, "stdout", { range: { start: data.length } })).length, 0);
  });

  test("past the budget, a live follower gets the display output as LiveEvents", async () => {
    // A little over the 5 MiB budget, then a line once a follower has caught up.
    const big = writeFile(scratch.path("big.txt"), `${"x".repeat(1023)}\n`.repeat(5 * 1024 + 100));
    const run = await wb.runBash(`cat ${big}; sleep 0.5; echo after-the-budget`, { background: true });
    const events = await collect(wb.events(run));
    assertJournal(events);
    assert.ok(events.some((e) => e.eventType === "output_truncated"));
    const live = events.filter((e) => e.sequence === null);
    assert.ok(live.length > 0, "display output past the budget came");
    assert.ok(live.every((e) => e.eventType === "output" || e.eventType === "gap"));
    const shown = live.map((e) => e.outputDelta ?? "").join("");
    assert.match(shown, /after-the-budget\n$/);
    const journalOnly = await collect(wb.events(run, { live: false }));
    assert.ok(journalOnly.every((e) => e.sequence !== null), "live: false gives the journal alone");
    const whole = await wb.output(run);
    assert.equal(text(whole.subarray(whole.length - 17)), "after-the-budget\n");
  });

  test("invalid UTF-8 within the budget: output() takes the rest from the artifact", async () => {
    const run = await wb.runBash("printf 'abc\\377def\\n'");
    assert.deepEqual(Buffer.from(await wb.output(run)), Buffer.from([0x61, 0x62, 0x63, 0xff, 0x64, 0x65, 0x66, 0x0a]));
  });
});

describe("cancel", { timeout: 60_000 }, () => {
  test("cancel kills the whole tree, escapees that ignore SIGTERM included", async () => {
    const marker = `wbts-tree-${process.pid}-${Date.now()}`;
    const command =
      `setsid bash -c 'trap "" TERM; exec -a ${marker}-a sleep 300' & ` +
      `(trap "" TERM; exec -a ${marker}-b sleep 300) & ` +
      `echo started; wait`;
    const run = await wb.runBash(command, { background: true });
    await eventually(async () => text(await wb.output(run)) === "started\n", 10_000, "the tree started");
    // The sleeps, and the shells whose command lines quote the marker.
    await eventually(() => settledLeftovers(marker, 0).then((p) => p.length >= 2), 5_000, "both sleeps run");
    const result = await wb.cancel(run, { reason: "test" });
    assert.equal(result.cancelled, true);
    const done = await wb.wait(run);
    assert.equal(done.status, "cancelled");
    assert.equal(done.cancelReason, "test");
    assert.deepEqual(await settledLeftovers(marker), [], "no process of the tree is alive");
    const again = await wb.cancel(run);
    assert.equal(again.cancelled, false, "a cancel of an ended execution reports its outcome");
    assert.equal(again.execution.status, "cancelled");
  });

  test("graceMs sends SIGTERM first", async () => {
    const run = await wb.runBash("trap 'echo got TERM; exit 7' TERM; echo ready; sleep 30 & wait", {
      background: true,
    });
    await eventually(async () => text(await wb.output(run)) === "ready\n", 10_000, "the trap is set");
    await wb.cancel(run, { graceMs: 5_000 });
    const done = await wb.wait(run);
    assert.equal(done.status, "cancelled");
    assert.match(text(await wb.output(run)), /got TERM/);
  });
});

describe("idempotency", { timeout: 60_000 }, () => {
  test("the same key never runs a command twice; another body with it is IdempotencyKeyReused", async () => {
    const key = `key-${Date.now()}`;
    const marks = scratch.path(`ran-${key}`);
    const command = `echo once >> ${marks}`;
    const first = await wb.runBash(command, { idempotencyKey: key });
    const second = await wb.runBash(command, { idempotencyKey: key });
    assert.equal(second.executionId, first.executionId);
    assert.equal(readFileSync(marks, "utf8"), "once\n");
    await assert.rejects(wb.runBash(`${command}; true`, { idempotencyKey: key }), (error) => {
      assert.ok(error instanceof IdempotencyKeyReused);
      assert.equal(error.code, "idempotency_key_reused");
      return true;
    });
    const together = `key-together-${Date.now()}`;
    const runs = await Promise.all(
      Array.from({ length: 5 }, () => wb.runBash("sleep 0.2", { idempotencyKey: together, background: true })),
    );
    assert.equal(new Set(runs.map((r) => r.executionId)).size, 1, "concurrent firsts start exactly one");
    await wb.wait(runs[0]);
  });
});

describe("listing, detach and exits", { timeout: 60_000 }, () => {
  test("list() goes through the pages, newest first; pages() gives the pages", async () => {
    const sessionId = `list-${Date.now()}`;
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await wb.runBash(`echo ${i}`, { sessionId })).executionId);
    const listed = await collect(wb.list({ sessionId, pageSize: 2 }));
    assert.deepEqual(
      listed.map((e) => e.executionId),
      made.reverse(),
    );
    const pages = await collect(wb.list({ sessionId, pageSize: 2 }).pages());
    assert.deepEqual(
      pages.map((p) => p.executions.length),
      [2, 2, 1],
    );
    assert.equal((await wb.list({ sessionId, limit: 3, pageSize: 2 }).toArray()).length, 3);
    const page = await wb.listPage({ sessionId, limit: 4, status: "completed" });
    assert.equal(page.executions.length, 4);
  });

  test("a detached run's outcome comes through exits() until it is acked", async () => {
    const run = await wb.runBash("echo to the feed", { background: true, detached: true, metadata: { job: 7 } });
    const exit = await eventually(async () => {
      const exits = await wb.exits({ waitTimeoutMs: 5_000, leaseMs: 1_000 });
      return exits.find((e) => e.executionId === run.executionId);
    }, 20_000, "the exit came");
    assert.equal(exit.status, "completed");
    assert.equal(exit.exitCode, 0);
    assert.equal(exit.stdoutTail, "to the feed\n");
    assert.deepEqual(exit.metadata, { job: 7 });
    const again = await eventually(async () => {
      const exits = await wb.exits({ waitTimeoutMs: 2_000, leaseMs: 60_000 });
      return exits.find((e) => e.deliveryId === exit.deliveryId);
    }, 10_000, "the unacked exit came again after its lease");
    assert.equal(again.attempt, exit.attempt + 1);
    await wb.ack(again);
    await new Promise((r) => setTimeout(r, 300));
    const after = await wb.exits({ waitTimeoutMs: 0 });
    assert.equal(after.find((e) => e.deliveryId === exit.deliveryId), undefined, "an acked exit is never handed out");

    const running = await wb.runBash("sleep 0.3", { background: true });
    const detached = await wb.detach(running);
    assert.equal(detached.detached, true);
    const ended = await wb.runBash("true");
    const late = await wb.detach(ended);
    assert.equal(late.detached, false);
    assert.equal(late.execution.status, "completed");
    await wb.wait(running);
    const exits = await eventually(async () => {
      const got = await wb.exits({ waitTimeoutMs: 2_000 });
      return got.find((e) => e.executionId === running.executionId);
    }, 10_000, "the detached run's exit came");
    await wb.ackExit(exits.deliveryId);
  });

  test("images, health and delete", async () => {
    assert.deepEqual(await wb.health(), { status: "ok" });
    const images = await wb.images();
    assert.ok(images.some((i) => i.name === "host" && i.available));
    const run = await wb.runBash("true");
    await wb.delete(run);
    await assert.rejects(wb.get(run), { name: "NotFound" });
  });
});
