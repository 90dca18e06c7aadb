// Every error class, each provoked from a real daemon where the daemon can be made to send it.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";

import * as client from "../dist/index.js";
import { Scratch, TOKEN, unusedPort, writeFile } from "./daemon.mjs";

const {
  BadRequest,
  Conflict,
  ERROR_CLASSES,
  Forbidden,
  IdempotencyKeyReused,
  ImageUnavailable,
  InputBacklog,
  InvalidRequest,
  NodeUnavailable,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  QuotaExceeded,
  RangeNotSatisfiable,
  StorageFull,
  TooManyExecutions,
  Unauthorized,
  Unavailable,
  UnknownImage,
  UnsupportedLanguage,
  Workbench,
  WorkbenchError,
  errorFromBody,
} = client;

const READER = "ts-client-reader-token-0123456789";
const scratch = new Scratch("errors");
let daemon;
let wb;

before(async () => {
  // A bubblewrap that cannot work here makes the sandbox image unavailable.
  const bin = scratch.path("bin");
  mkdirSync(bin);
  const bwrap = writeFile(`${bin}/bwrap`, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
  chmodSync(bwrap, 0o755);
  const tokens = writeFile(
    scratch.path("tokens.toml"),
    `[[tokens]]\ntoken = "${READER}"\nprincipal = "reader"\nscopes = ["logs:read"]\n`,
  );
  daemon = await scratch
    .daemon({
      PATH: `${bin}:${process.env.PATH}`,
      WORKBENCH_TOKENS_FILE: tokens,
      WORKBENCH_MAX_CONCURRENT_EXECUTIONS: "1",
      WORKBENCH_MAX_QUEUED_EXECUTIONS: "1",
    })
    .start();
  wb = daemon.client();
});
after(() => scratch.cleanup());

/** `promise` rejects with exactly `cls` (not a subclass), carrying its code, message and status. */
async function rejectsWith(promise, cls, status) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.constructor, cls, `${error.constructor.name}: ${error.message}`);
    assert.ok(error instanceof WorkbenchError && error instanceof Error);
    assert.equal(error.name, cls.name);
    assert.equal(error.code, cls.code);
    assert.equal(typeof error.message, "string");
    assert.ok(error.message.length > 0);
    assert.equal(error.status, status);
    return true;
  });
}

describe("errors from the daemon", { timeout: 60_000 }, () => {
  test("BadRequest", () => rejectsWith(wb.listPage({ limit: 0 }), BadRequest, 400));

  test("Unauthorized", async () => {
    await rejectsWith(new Workbench({ url: daemon.url, token: "wrong-token-0123456789" }).get("x"), Unauthorized, 401);
    await rejectsWith(new Workbench({ url: daemon.url, token: null }).images(), Unauthorized, 401);
  });

  test("Forbidden", () =>
    rejectsWith(new Workbench({ url: daemon.url, token: READER }).runBash("true"), Forbidden, 403));

  test("NotFound", () => rejectsWith(wb.get("ex_01M8RF4Q4G3XB8E7KY9425AAAA"), NotFound, 404));

  test("Conflict", async () => {
    const run = await wb.runBash("sleep 30", { background: true });
    try {
      await rejectsWith(wb.delete(run), Conflict, 409);
    } finally {
      await wb.cancel(run);
      await wb.wait(run);
    }
  });

  test("PayloadTooLarge", () => rejectsWith(wb.runBash(`echo ${"x".repeat(1100 * 1024)}`), PayloadTooLarge, 413));

  test("InvalidRequest, with the fields in details", async () => {
    await rejectsWith(wb.runBash("true", { cwd: "relative/dir" }), InvalidRequest, 422);
    const error = await wb.runBash("true", { timeoutMs: -5 }).catch((e) => e);
    assert.ok(Array.isArray(error.details) && error.details.length > 0, JSON.stringify(error.details));
    assert.ok(error.details.some((d) => d.field === "timeoutMs"), JSON.stringify(error.details));
  });

  test("IdempotencyKeyReused", async () => {
    await wb.runBash("true", { idempotencyKey: "reused-key" });
    await rejectsWith(wb.runBash("false", { idempotencyKey: "reused-key" }), IdempotencyKeyReused, 422);
  });

  test("UnknownImage", () => rejectsWith(wb.runBash("true", { image: "no-such-image" }), UnknownImage, 422));

  test("ImageUnavailable", async () => {
    const images = await wb.images();
    assert.equal(images.find((i) => i.name === "sandbox")?.available, false);
    await rejectsWith(wb.runBash("true", { image: "sandbox" }), ImageUnavailable, 422);
  });

  test("UnsupportedLanguage", () => rejectsWith(wb.runCode("cobol", "DISPLAY 'HI'."), UnsupportedLanguage, 422));

  test("TooManyExecutions", async () => {
    const running = await wb.runBash("sleep 30", { background: true });
    const queued = await wb.runBash("sleep 30", { background: true });
    try {
      await rejectsWith(wb.runBash("true", { background: true }), TooManyExecutions, 429);
    } finally {
      for (const run of [queued, running]) await wb.cancel(run);
      for (const run of [queued, running]) await wb.wait(run);
    }
  });

  test("Unavailable: a daemon that cannot be reached", async () => {
    const url = `http://127.0.0.1:${await unusedPort()}`;
    const gone = new Workbench({ url, token: TOKEN });
    await rejectsWith(gone.get("x"), Unavailable, undefined);
    const error = await gone.health().catch((e) => e);
    assert.ok(error.message.startsWith(`cannot reach the daemon at ${url}: ECONNREFUSED`), error.message);
  });
});

describe("mistakes found before anything is sent", { timeout: 30_000 }, () => {
  test("a token that cannot be a header value is a TypeError when the client is made", () => {
    for (const token of ["tök€n", "abc\ndef", "a\u0000b"]) {
      assert.throws(() => new Workbench({ url: daemon.url, token }), (error) => {
        assert.equal(error.constructor, TypeError);
        assert.match(error.message, /token/);
        assert.ok(!error.message.includes(token), "the message does not quote the token");
        return true;
      });
    }
  });

  test("an Idempotency-Key the API does not take is a TypeError at once, nothing sent", async () => {
    for (const key of ["abc\ndef", "tök€n", "", "k".repeat(256)]) {
      const began = Date.now();
      await assert.rejects(wb.runBash("true", { idempotencyKey: key }), (error) => {
        assert.equal(error.constructor, TypeError, `${error.constructor.name}: ${error.message}`);
        assert.match(error.message, /Idempotency-Key/);
        return true;
      });
      assert.ok(Date.now() - began < 100, `took ${Date.now() - began} ms`);
    }
  });

  test("a request fetch cannot make is not resent as a broken connection", async () => {
    let calls = 0;
    const client = daemon.client({
      fetch: (url, init) => {
        calls += 1;
        return fetch(url, { ...init, headers: { ...init.headers, "X-Bad": "a\nb" } });
      },
    });
    await assert.rejects(client.get("ex_01M8RF4Q4G3XB8E7KY9425AAAA"), TypeError);
    assert.equal(calls, 1);
  });
});

describe("error classes", () => {
  test("each API code has its class, subclasses of InvalidRequest where the API says", () => {
    const codes = {
      internal: WorkbenchError,
      bad_request: BadRequest,
      unauthorized: Unauthorized,
      forbidden: Forbidden,
      not_found: NotFound,
      conflict: Conflict,
      payload_too_large: PayloadTooLarge,
      invalid_request: InvalidRequest,
      idempotency_key_reused: IdempotencyKeyReused,
      unknown_image: UnknownImage,
      image_unavailable: ImageUnavailable,
      unsupported_language: UnsupportedLanguage,
      range_not_satisfiable: RangeNotSatisfiable,
      too_many_executions: TooManyExecutions,
      storage_full: StorageFull,
      unavailable: Unavailable,
      precondition_failed: PreconditionFailed,
      quota_exceeded: QuotaExceeded,
      input_backlog: InputBacklog,
      node_unavailable: NodeUnavailable,
    };
    assert.deepEqual(Object.keys(ERROR_CLASSES).sort(), Object.keys(codes).sort());
    // Every code of the contract's table of errors (docs/api.md) has its class.
    const contract = readFileSync(new URL("../../../docs/api.md", import.meta.url), "utf8");
    const listed = [...contract.matchAll(/^\| \d{3} \| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    assert.ok(listed.length >= 20, `the table of errors was not found (${listed.length} codes)`);
    assert.deepEqual([...new Set(listed)].sort(), Object.keys(codes).sort());
    for (const [code, cls] of Object.entries(codes)) {
      assert.equal(ERROR_CLASSES[code], cls);
      const error = errorFromBody(418, JSON.stringify({ error: { code, message: "m", details: [{ field: "f" }] } }));
      assert.equal(error.constructor, cls);
      assert.equal(error.code, code);
      assert.equal(error.message, "m");
      assert.deepEqual(error.details, [{ field: "f" }]);
      assert.equal(error.status, 418);
    }
    for (const sub of [IdempotencyKeyReused, UnknownImage, ImageUnavailable, UnsupportedLanguage]) {
      assert.ok(new sub("x") instanceof InvalidRequest);
    }
    assert.ok(new NodeUnavailable("x") instanceof Unavailable);
  });

  test("an unknown code keeps its code under WorkbenchError; a body that is no error says what came", () => {
    const unknown = errorFromBody(599, '{"error": {"code": "from_a_newer_daemon", "message": "new"}}');
    assert.equal(unknown.constructor, WorkbenchError);
    assert.equal(unknown.code, "from_a_newer_daemon");
    const garbage = errorFromBody(500, "<html>Internal Server Error</html>");
    assert.equal(garbage.constructor, WorkbenchError);
    assert.equal(garbage.code, "internal");
    assert.match(garbage.message, /HTTP 500 from the daemon: <html>Internal Server Error/);
  });

  test("a 502, 503 or 504 without the daemon's error body is Unavailable (a proxy's: the daemon is away)", () => {
    for (const status of [502, 503, 504]) {
      const error = errorFromBody(status, "<html>Bad Gateway</html>");
      assert.equal(error.constructor, Unavailable);
      assert.equal(error.code, "unavailable");
      assert.equal(error.status, status);
      assert.match(error.message, new RegExp(`HTTP ${status} .*<html>Bad Gateway`));
    }
    const own = errorFromBody(502, '{"error": {"code": "internal", "message": "the daemon says so"}}');
    assert.equal(own.constructor, WorkbenchError);
    assert.equal(errorFromBody(500, "").constructor, WorkbenchError);
  });
});
