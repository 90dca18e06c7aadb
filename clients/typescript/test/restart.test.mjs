// events() across daemon restarts: it reconnects from the last sequence by itself, so the journal
// comes whole, without a gap or a duplicate, while the execution runs on.

import assert from "node:assert/strict";
import { after, describe, test } from "node:test";

import { isTerminal } from "../dist/index.js";
import { Scratch } from "./daemon.mjs";

const scratch = new Scratch("restart");
after(() => scratch.cleanup());

const LINES = 50;
// A line every 0.1 s: the run outlives a stop and a start of the daemon.
const COUNTER = `for i in $(seq 1 ${LINES}); do echo $i; sleep 0.1; done`;

/** Follow `run` to its end in the background; `seen` fills as events come. */
function follow(wb, run) {
  const seen = [];
  const done = (async () => {
    for await (const event of wb.events(run)) seen.push(event);
    return seen;
  })();
  return { seen, done };
}

async function until(check, withinMs = 15_000) {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

function assertWhole(events) {
  const journal = events.filter((e) => e.sequence !== null);
  assert.deepEqual(
    journal.map((e) => e.sequence),
    journal.map((_, i) => i + 1),
    "no gap and no duplicate",
  );
  const last = journal.at(-1);
  assert.equal(last.eventType, "status");
  assert.ok(isTerminal(last.status));
  assert.equal(last.status, "completed");
  const printed = journal
    .filter((e) => e.eventType === "output")
    .map((e) => e.outputDelta)
    .join("");
  assert.deepEqual(
    printed.trim().split("\n").map(Number),
    Array.from({ length: LINES }, (_, i) => i + 1),
  );
}

describe("events() across a restart", { timeout: 60_000 }, () => {
  test("a graceful stop in keep mode and a new start: no gap, no duplicate", async () => {
    const daemon = await scratch.daemon({ WORKBENCH_SHUTDOWN_MODE: "keep" }).start();
    const wb = daemon.client();
    const run = await wb.runBash(COUNTER, { background: true });
    const { seen, done } = follow(wb, run);
    // The same through `fetch` (what a browser, or a `fetch` given as an option, reads with).
    const throughFetch = follow(daemon.client({ fetch: (...args) => fetch(...args) }), run);
    await until(() => seen.filter((e) => e.eventType === "output").length >= 3);
    await daemon.stop();
    const before = seen.length;
    assert.ok(!seen.some((e) => e.eventType === "status" && isTerminal(e.status)), "stopped mid-run");
    // The next start ends every tree at its own stop (kill mode), so nothing outlives the test.
    daemon.env.WORKBENCH_SHUTDOWN_MODE = "kill";
    await daemon.start();
    const events = await done;
    assert.ok(events.length > before, "events came after the restart");
    assertWhole(events);
    assertWhole(await throughFetch.done);
    assert.equal((await wb.get(run)).status, "completed");
  });

  test("a daemon killed with SIGKILL and started again: the run is adopted, the stream resumes", async () => {
    const daemon = await scratch.daemon().start();
    const wb = daemon.client();
    const run = await wb.runBash(COUNTER, { background: true });
    const { seen, done } = follow(wb, run);
    await until(() => seen.filter((e) => e.eventType === "output").length >= 3);
    await daemon.kill9();
    assert.ok(!seen.some((e) => e.eventType === "status" && isTerminal(e.status)), "killed mid-run");
    await daemon.start();
    assertWhole(await done);
  });
});
