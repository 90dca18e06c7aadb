// sendInput and signal on the way to a real daemon: input of any size in pieces of at most 1 MiB,
// each sent again while the execution has not read what was sent before (`input_backlog`), and
// neither sent twice after a broken connection.

import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { Conflict, InputBacklog, Unavailable, Workbench, inputPieces } from "../dist/index.js";
import { Scratch, TOKEN, eventually } from "./daemon.mjs";
import { Proxies } from "./proxy.mjs";

const MiB = 1 << 20;
const scratch = new Scratch("input");
const proxies = new Proxies();
let daemon;
let wb;

before(async () => {
  daemon = await scratch.daemon().start();
  wb = daemon.client();
});
after(async () => {
  await proxies.close();
  await scratch.cleanup();
});

const text = (bytes) => new TextDecoder().decode(bytes);
const sha = (data) => createHash("sha256").update(data).digest("hex");

async function started(command) {
  const run = await wb.runBash(command, { openStdin: true, background: true });
  await eventually(async () => (await wb.get(run)).status === "running", 10_000, "running");
  return run;
}

async function inputs(run) {
  return (await wb.eventsPage(run)).events.filter((e) => e.eventType === "input");
}

describe("sendInput", { timeout: 60_000 }, () => {
  test("more than the backlog waits for a slow reader: every byte once, in order", async () => {
    const data = randomBytes(3_000_000);
    const run = await started("sleep 2; cat > got; wc -c < got; sha256sum < got | cut -d' ' -f1");
    await wb.sendInput(run, data, { eof: true, record: false });
    const done = await wb.wait(run);
    assert.equal(done.status, "completed");
    assert.equal(text(await wb.output(done)), `3000000\n${sha(data)}\n`);
    assert.deepEqual(
      (await inputs(run)).map((e) => e.inputBytes),
      [MiB, MiB, 3_000_000 - 2 * MiB],
    );
  });

  test("text of more than 1 MiB is cut between whole characters", async () => {
    const data = "é€😀x".repeat(200_000); // 2 + 3 + 4 + 1 bytes: 2,000,000 bytes
    const run = await started("sleep 1; cat > got; sha256sum < got | cut -d' ' -f1");
    await wb.sendInput(run, data, { eof: true });
    const done = await wb.wait(run);
    assert.equal(text(await wb.output(done)), `${sha(Buffer.from(data, "utf8"))}\n`);
    const deltas = (await inputs(run)).map((e) => e.inputDelta);
    assert.equal(deltas.length, 2);
    assert.equal(deltas.join(""), data);
    for (const piece of inputPieces(data)) assert.ok(piece.length <= MiB);
  });

  test("text with a lone surrogate is refused before anything is sent: it is not Unicode", async () => {
    // As the Python client's UnicodeEncodeError: never sent as U+FFFD in its place.
    const run = await started("cat");
    try {
      for (const bad of ["ok\ud800", "\udc00ok", "a\udbff\udbffb"]) {
        await assert.rejects(
          wb.sendInput(run, bad),
          (e) => e instanceof TypeError && /lone surrogate/.test(e.message),
        );
      }
      assert.deepEqual(inputPieces("pair 😀 whole").length, 1); // a pair is a character
      assert.deepEqual(await inputs(run), []);
    } finally {
      await wb.cancel(run);
    }
  });

  test("giving up on a full backlog says how much was taken", async () => {
    const run = await started("sleep 300");
    try {
      let began = Date.now();
      const caught = await wb.sendInput(run, new Uint8Array(2 * MiB + 5), { timeoutMs: 500 }).catch((e) => e);
      assert.ok(caught instanceof InputBacklog, String(caught));
      assert.ok(Date.now() - began >= 500);
      assert.equal(caught.details.takenBytes, MiB);
      assert.equal(caught.status, 429);
      assert.match(caught.message, /the first 1048576 bytes of the input were taken/);
      began = Date.now();
      const again = await wb.sendInput(run, "y".repeat(MiB), { timeoutMs: 0 }).catch((e) => e);
      assert.ok(again instanceof InputBacklog, String(again));
      assert.ok(Date.now() - began < 5_000);
      assert.equal(again.details.takenBytes, 0);
      assert.match(again.message, /none of the input was taken/);
      await assert.rejects(wb.sendInput(run, "z", { timeoutMs: -1 }), TypeError);
    } finally {
      await wb.cancel(run);
    }
    assert.deepEqual(
      (await inputs(run)).map((e) => e.inputBytes),
      [MiB],
    );
  });

  test("an execution that ends while input waits: Conflict, saying what was taken", async () => {
    const run = await started("sleep 2");
    const caught = await wb.sendInput(run, new Uint8Array(3_000_000)).catch((e) => e);
    assert.ok(caught instanceof Conflict, String(caught));
    assert.equal(caught.details.takenBytes, MiB);
    assert.match(caught.message, /the first 1048576 bytes of the input were taken/);
  });
});

describe("a broken connection", { timeout: 60_000 }, () => {
  async function through() {
    const proxy = await proxies.to(daemon.url);
    return { proxy, client: new Workbench({ url: proxy.url, token: TOKEN }) };
  }

  test("input the daemon took is not sent again", async () => {
    const { proxy, client } = await through();
    const run = await started("cat");
    proxy.cutAfter("/input");
    const caught = await client.sendInput(run, "once\n").catch((e) => e);
    assert.ok(caught instanceof Unavailable, String(caught));
    assert.match(caught.message, /not sent again/);
    assert.equal(proxy.count("/input"), 1);
    await eventually(async () => (await inputs(run)).length === 1, 10_000, "the input journaled");
    await wb.sendInput(run, "", { eof: true });
    assert.equal(text(await wb.output(await wb.wait(run))), "once\n");
  });

  test("a signal the daemon sent is not sent again", async () => {
    const { proxy, client } = await through();
    const run = await started("trap 'echo got USR1' USR1; for i in $(seq 100); do sleep 0.1; done");
    await new Promise((resolve) => setTimeout(resolve, 300)); // the trap is set
    proxy.cutAfter("/signal");
    const caught = await client.signal(run, "USR1").catch((e) => e);
    assert.ok(caught instanceof Unavailable, String(caught));
    assert.equal(proxy.count("/signal"), 1);
    await wb.cancel(run);
    const signals = (await wb.eventsPage(run)).events.filter((e) => e.eventType === "signal");
    assert.equal(signals.length, 1);
  });
});
