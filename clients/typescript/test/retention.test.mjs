// Waiting until a service is ready, stats and prune through the client, against a real daemon;
// bad input refused with nothing changed.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { BadRequest, InvalidRequest, NotFound, isTerminal } from "../dist/index.js";
import { Scratch } from "./daemon.mjs";

const scratch = new Scratch("retention");
let wb;

before(async () => {
  wb = (await scratch.daemon().start()).client();
});
after(() => scratch.cleanup());

const ids = async () => (await wb.list().toArray()).map((e) => e.executionId).sort();

describe("waiting until a service is ready", { timeout: 60_000 }, () => {
  test("a foreground service start returns once it is ready, still running", async () => {
    const began = Date.now();
    const run = await wb.runBash("sleep 0.5; echo listening now; sleep 30", {
      service: true,
      readiness: { logPattern: "listening" },
    });
    try {
      assert.equal(run.status, "running");
      assert.equal(run.ready, true);
      assert.ok(run.readyAt);
      assert.ok(Date.now() - began < 20_000);
    } finally {
      await wb.cancel(run);
    }
  });

  test("a foreground service not ready within waitTimeoutMs comes back as it is", async () => {
    const run = await wb.runBash("sleep 30", { service: true, readiness: { logPattern: "never" }, waitTimeoutMs: 300 });
    try {
      assert.equal(run.status, "running");
      assert.equal(run.ready, false);
    } finally {
      await wb.cancel(run);
    }
  });

  test("wait({ until: 'ready' }): a service once ready, a timeout as it is, another execution at its end", async () => {
    const run = await wb.runBash("sleep 0.3; echo up; sleep 30", {
      background: true,
      service: true,
      readiness: { logPattern: "up" },
    });
    try {
      const ready = await wb.wait(run, { until: "ready" });
      assert.equal(ready.ready, true);
      assert.equal(ready.status, "running");
    } finally {
      await wb.cancel(run);
    }
    const slow = await wb.runBash("sleep 30", { background: true, service: true, readiness: { logPattern: "never" } });
    try {
      const notYet = await wb.wait(slow, { until: "ready", timeoutMs: 200 });
      assert.equal(notYet.ready, false);
      assert.ok(!isTerminal(notYet));
    } finally {
      await wb.cancel(slow);
    }
    const plain = await wb.runBash("sleep 0.2; echo done", { background: true });
    const ended = await wb.wait(plain, { until: "ready" });
    assert.equal(ended.status, "completed");
    assert.equal((await wb.wait(plain, { until: "end" })).status, "completed");
  });

  test("bad input: a clear error, nothing started; an unknown id is NotFound", async () => {
    const before = await ids();
    await assert.rejects(
      wb.runBash("sleep 30", { service: true, waitTimeoutMs: 100, onWaitTimeout: "cancel" }),
      /does not apply to a service/,
    );
    assert.deepEqual(await ids(), before, "nothing started");
    const plain = await wb.runBash("true");
    await assert.rejects(wb.wait(plain, { until: "never" }), InvalidRequest);
    await assert.rejects(wb.wait("ex_01JD5Q9X0V8Q2B3C4D5E6F7G8H", { until: "ready" }), NotFound);
  });
});

describe("stats and prune", { timeout: 60_000 }, () => {
  test("stats counts the executions by status and says the sizes", async () => {
    const before = await wb.stats();
    await wb.runBash("true");
    await wb.runBash("exit 1");
    const stats = await wb.stats();
    assert.equal(stats.executions.completed, before.executions.completed + 1);
    assert.equal(stats.executions.failed, before.executions.failed + 1);
    assert.ok(stats.storeBytes > 0 && stats.dataDirBytes > 0 && stats.storeFreeBytes >= 0);
    assert.equal(stats.retentionMs, null);
  });

  test("prune deletes the ended executions selected, never a live one", async () => {
    const done = await wb.runBash("true");
    const failed = await wb.runBash("exit 2");
    const live = await wb.runBash("sleep 30", { background: true });
    try {
      assert.equal(await wb.prune({ before: new Date("2000-01-01T00:00:00Z") }), 0);
      assert.equal(await wb.prune({ status: "failed", before: "1h" }), 0, "none ended over an hour ago");
      assert.ok((await wb.prune({ status: ["failed", "timed_out"] })) >= 1);
      await assert.rejects(wb.get(failed), NotFound);
      assert.equal((await wb.get(done)).status, "completed");
      assert.ok((await wb.prune({ before: 0 })) >= 1);
      await assert.rejects(wb.get(done), NotFound);
      assert.equal((await wb.get(live)).status, "running", "a live one is never touched");
      assert.equal(await wb.prune({ status: "completed", before: 0 }), 0);
      const stats = await wb.stats();
      assert.equal(stats.executions.completed + stats.executions.failed, 0);
    } finally {
      await wb.cancel(live);
    }
  });

  test("bad input: a clear error, nothing deleted", async () => {
    await wb.runBash("true");
    const before = await ids();
    for (const bad of [{}, { status: [] }, { status: "a,b" }, { status: 3 }, { before: -1 }, { before: Number.NaN }, { before: "" }, { before: new Date("nope") }]) {
      await assert.rejects(wb.prune(bad), TypeError, JSON.stringify(bad));
    }
    await assert.rejects(wb.prune({ status: "running" }), BadRequest);
    await assert.rejects(wb.prune({ status: "nope" }), BadRequest);
    await assert.rejects(wb.prune({ before: "yesterday" }), BadRequest);
    await assert.rejects(wb.prune({ before: "36501d" }), BadRequest);
    assert.deepEqual(await ids(), before, "nothing deleted");
  });
});
