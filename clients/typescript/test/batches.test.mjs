// Batches through the client, against a real daemon: started and waited on, their items listed by
// `batchId`, failFast, a start whose answer was lost resent without starting twice, and bad input
// refused with nothing started.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { BadRequest, IdempotencyKeyReused, InvalidRequest, NotFound, isTerminal } from "../dist/index.js";
import { Scratch } from "./daemon.mjs";

const scratch = new Scratch("batches");
let daemon;
let wb;

before(async () => ({ daemon, wb } = await scratch.started()));
after(() => scratch.cleanup());

const text = (bytes) => new TextDecoder().decode(bytes);
const batches = async () => (await wb.list({ kind: "batch" }).toArray()).map((b) => b.executionId).sort();
const everything = async () => (await wb.list().toArray()).length;

describe("runBatch", { timeout: 60_000 }, () => {
  test("runs its items, waits for the end, and lists them by batchId", async () => {
    const batch = await wb.runBatch(
      [
        { kind: "workbench_bash", command: "printf one", env: { X: "1" } },
        { kind: "workbench_code", language: "python", code: "print(6 * 7)" },
      ],
      { concurrency: 1, metadata: { pr: 7 }, sessionId: "ts-batch" },
    );
    assert.equal(batch.executionKind, "batch");
    assert.equal(batch.status, "completed");
    assert.deepEqual(batch.metadata, { pr: 7 });
    assert.equal(batch.sessionId, "ts-batch");
    assert.equal(batch.items.length, 2);
    assert.ok(batch.items.every((item) => item.status === "completed" && item.exitCode === 0));
    const [first, second] = batch.items;
    assert.equal(text(await wb.output(first.executionId)), "one");
    assert.equal(text(await wb.output(second.executionId)), "42\n");
    const items = await wb.list({ batchId: batch }).toArray();
    assert.deepEqual(items.map((e) => e.executionId).sort(), batch.items.map((i) => i.executionId).sort());
    assert.ok(items.every((e) => e.batchId === batch.executionId));
    const page = await wb.listPage({ batchId: batch.executionId, limit: 1 });
    assert.equal(page.executions.length, 1);
    assert.notEqual(page.nextCursor, null);
  });

  test("startBatch is runBatch; in the background, then waited on", async () => {
    const batch = await wb.startBatch([{ kind: "workbench_bash", command: "sleep 0.3" }], { background: true });
    assert.ok(["queued", "running"].includes(batch.status), batch.status);
    const done = await wb.wait(batch);
    assert.equal(done.status, "completed");
    const partial = await wb.runBatch(
      [
        { kind: "workbench_bash", command: "true" },
        { kind: "workbench_bash", command: "exit 3" },
      ],
      { concurrency: 1 },
    );
    assert.equal(partial.status, "partial_failed");
  });

  test("failFast: the first item that fails cancels the rest", async () => {
    const batch = await wb.runBatch(
      [
        { kind: "workbench_bash", command: "exit 1" },
        { kind: "workbench_bash", command: "sleep 30" },
        { kind: "workbench_bash", command: "sleep 30" },
      ],
      { concurrency: 1, failFast: true, waitTimeoutMs: 20_000 },
    );
    assert.equal(batch.status, "failed");
    assert.equal(batch.error.code, "fail_fast");
    assert.deepEqual(
      batch.items.map((i) => i.status),
      ["failed", "cancelled", "cancelled"],
    );
  });

  test("a foreground batch whose waitTimeoutMs passes comes back as it is, and goes on", async () => {
    const batch = await wb.runBatch([{ kind: "workbench_bash", command: "sleep 1" }], { waitTimeoutMs: 100 });
    assert.ok(!isTerminal(batch), batch.status);
    assert.equal((await wb.wait(batch)).status, "completed");
  });
});

describe("a batch start is never started twice", { timeout: 60_000 }, () => {
  test("a start whose answer was lost is sent again with the same key: one batch", async () => {
    const before = await batches();
    const keys = [];
    let lost = false;
    const lossy = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "POST" && String(input).endsWith("/v1/executions/batch")) {
        keys.push(init.headers["Idempotency-Key"]);
        if (!lost) {
          lost = true;
          await response.arrayBuffer(); // the daemon took it; its answer never arrives
          throw new TypeError("fetch failed", { cause: { code: "ECONNRESET", message: "socket hang up" } });
        }
      }
      return response;
    };
    const client = daemon.client({ fetch: lossy });
    const batch = await client.runBatch([{ kind: "workbench_bash", command: "echo once >> once.txt", sessionId: "ts-once" }]);
    assert.equal(keys.length, 2, "sent twice");
    assert.equal(keys[0], keys[1], "with one key");
    assert.match(keys[0], /^wbc-/);
    assert.equal(batch.status, "completed");
    const after = await batches();
    assert.deepEqual(after, [...before, batch.executionId].sort(), "one batch was started");
    assert.equal((await wb.list({ batchId: batch }).toArray()).length, 1);
    assert.equal(text(await wb.files("ts-once").read("once.txt")), "once\n");
  });

  test("the same idempotencyKey answers the same batch; with another body it is refused", async () => {
    const items = [{ kind: "workbench_bash", command: "true" }];
    const first = await wb.runBatch(items, { idempotencyKey: "batch-key-1" });
    const again = await wb.runBatch(items, { idempotencyKey: "batch-key-1" });
    assert.equal(again.executionId, first.executionId);
    const count = await everything();
    await assert.rejects(
      wb.runBatch([{ kind: "workbench_bash", command: "false" }], { idempotencyKey: "batch-key-1" }),
      IdempotencyKeyReused,
    );
    await assert.rejects(wb.runBatch(items, { idempotencyKey: "bad\nkey" }), TypeError);
    assert.equal(await everything(), count, "nothing started");
  });
});

describe("bad input", { timeout: 60_000 }, () => {
  test("refused with a clear error, nothing started", async () => {
    const count = await everything();
    await assert.rejects(wb.runBatch("echo hi"), TypeError);
    await assert.rejects(wb.runBatch([null]), /item 0 of the batch is not a start body/);
    await assert.rejects(wb.runBatch([]), InvalidRequest);
    // One bad item refuses the whole batch, and the error names it.
    const refused = await wb
      .runBatch([
        { kind: "workbench_bash", command: "true" },
        { kind: "workbench_bash", command: "true", tty: true },
      ])
      .catch((e) => e);
    assert.ok(refused instanceof InvalidRequest, String(refused));
    assert.ok(JSON.stringify(refused.details).includes("items.1"), JSON.stringify(refused.details));
    await assert.rejects(wb.runBatch([{ kind: "workbench_bash", command: "true" }], { concurrency: 0 }), InvalidRequest);
    assert.equal(await everything(), count, "nothing started");
  });

  test("an unknown batch lists nothing; a malformed id is BadRequest; its wait is NotFound", async () => {
    assert.deepEqual(await wb.list({ batchId: "ex_01JD5Q9X0V8Q2B3C4D5E6F7G8H" }).toArray(), []);
    await assert.rejects(wb.listPage({ batchId: "nope" }), BadRequest);
    await assert.rejects(wb.listPage({ batchId: "" }), TypeError);
    await assert.rejects(wb.wait("ex_01JD5Q9X0V8Q2B3C4D5E6F7G8H"), NotFound);
  });
});
