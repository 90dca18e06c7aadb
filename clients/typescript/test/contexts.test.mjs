// Code contexts and sessions through the client, against a real daemon: state kept between runs,
// a value and an exception, a cancelled cell, close; sessions listed and removed.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { CodeContext, Conflict, NotFound, UnsupportedLanguage } from "../dist/index.js";
import { Scratch, eventually } from "./daemon.mjs";

const scratch = new Scratch("contexts");
let daemon;
let wb;

before(async () => ({ daemon, wb } = await scratch.started()));
after(() => scratch.cleanup());

const text = (bytes) => new TextDecoder().decode(bytes);

describe("code contexts", { timeout: 60_000 }, () => {
  test("names persist between runs; a value, an exception, the record", async () => {
    const ctx = await wb.createContext("python", { sessionId: "ts-cx", env: { GREETING: "hi" } });
    assert.ok(ctx instanceof CodeContext);
    assert.match(ctx.id, /^cx_/);
    assert.equal(ctx.language, "python");
    assert.equal(ctx.record.status, "ready");
    assert.equal(ctx.record.sessionId, "ts-cx");
    try {
      await ctx.run("import os\nx = 6");
      const value = await ctx.run("print(os.environ['GREETING'])\nx * 7");
      assert.equal(value.status, "completed");
      assert.deepEqual(value.result, { "text/plain": "42" });
      assert.equal(text(await wb.output(value)), "hi\n");
      const failed = await ctx.run("{}['nope']");
      assert.equal(failed.status, "failed");
      assert.equal(failed.error.code, "exception");
      assert.match(failed.error.traceback, /KeyError: 'nope'/);
      const record = await ctx.refresh();
      assert.equal(record.executions, 3);
      assert.equal(ctx.record, record);
      assert.deepEqual(
        (await wb.contexts()).map((c) => c.id),
        [ctx.id],
      );
      assert.equal((await wb.context(ctx.id)).record.status, "ready");
    } finally {
      await ctx.close();
    }
    await assert.rejects(ctx.refresh(), NotFound);
    await assert.rejects(wb.context(ctx.id), NotFound);
    assert.deepEqual(await wb.contexts(), []);
  });

  test("a cancelled cell is interrupted; the context lives on", async () => {
    const ctx = await wb.createContext();
    try {
      await ctx.run("n = 1");
      const spin = await ctx.run("while True: pass", { background: true });
      await eventually(async () => (await wb.get(spin)).status === "running", 10_000, "running");
      await wb.cancel(spin);
      assert.equal((await wb.wait(spin)).status, "cancelled");
      assert.deepEqual((await ctx.run("n + 1")).result, { "text/plain": "2" });
    } finally {
      await ctx.close();
    }
  });

  test("a language the image lacks, and an id that names none", async () => {
    await assert.rejects(wb.createContext("cobol"), (e) => e.code === "invalid_request" || e instanceof UnsupportedLanguage);
    await assert.rejects(wb.context("cx_nope"), NotFound);
    await assert.rejects(wb.context(""), TypeError);
  });
});

describe("sessions", { timeout: 60_000 }, () => {
  test("listed with their sizes; removed unless in use; an empty id, `.` and `..` are refused", async () => {
    await wb.runBash("printf 12345 > f", { sessionId: "ts-a" });
    await wb.runBash("true", { sessionId: "ts-b" });
    const found = Object.fromEntries((await wb.sessions()).map((s) => [s.sessionId, s]));
    assert.equal(found["ts-a"].sizeBytes, 5);
    assert.equal(found["ts-a"].liveExecutions, 0);
    const busy = await wb.runBash("sleep 30", { sessionId: "ts-a", background: true });
    await assert.rejects(wb.deleteSession("ts-a"), Conflict);
    await wb.cancel(busy);
    await wb.wait(busy);
    for (const id of [".", "..", ""]) await assert.rejects(wb.deleteSession(id), TypeError);
    assert.ok((await wb.sessions()).some((s) => s.sessionId === "ts-b"), "nothing was removed");
    await wb.deleteSession("ts-a");
    await assert.rejects(wb.deleteSession("ts-a"), NotFound);
    assert.ok(!(await wb.sessions()).some((s) => s.sessionId === "ts-a"));
    await wb.deleteSessions();
    assert.deepEqual(await wb.sessions(), []);
  });
});

describe("deletes whose answer was lost", { timeout: 60_000 }, () => {
  test("a resend that finds nothing is done: the first try deleted it", async () => {
    // Each DELETE reaches the daemon, which deletes; then its answer is lost, as when the
    // connection breaks on the way back, and the client sends it again.
    let lost = 0;
    const lossy = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "DELETE" && lost % 2 === 0) {
        lost += 1;
        await response.arrayBuffer();
        throw new TypeError("fetch failed", { cause: { code: "ECONNRESET", message: "socket hang up" } });
      }
      if (init?.method === "DELETE") lost += 1;
      return response;
    };
    const client = daemon.client({ fetch: lossy });
    await client.runBash("true", { sessionId: "ts-lost" });
    const run = await client.runBash("true");
    const ctx = await client.createContext();
    await client.deleteSession("ts-lost");
    await ctx.close();
    await client.delete(run);
    assert.equal(lost, 6, "each delete was sent twice");
    assert.ok(!(await wb.sessions()).some((s) => s.sessionId === "ts-lost"));
    await assert.rejects(wb.get(run), NotFound);
    await assert.rejects(wb.context(ctx.id), NotFound);
    // A delete of what never was is NotFound still: only a resend's 404 means it is done.
    await assert.rejects(wb.deleteSession("ts-never"), NotFound);
  });
});
