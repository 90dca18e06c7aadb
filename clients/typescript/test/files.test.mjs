// The files of a session's workspace through the client, against a real daemon: bytes in and out
// exactly (any byte, not UTF-8 only), ranges, listings, conditional writes, deletes, moves, archives
// up and down, watches; paths out of the workspace and unknown sessions refused, nothing changed.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  Conflict,
  Files,
  InvalidRequest,
  NotFound,
  PreconditionFailed,
  Unavailable,
  WorkbenchError,
} from "../dist/index.js";
import { Scratch, eventually } from "./daemon.mjs";

const scratch = new Scratch("files");
let daemon;
let wb;

before(async () => ({ daemon, wb } = await scratch.started()));
after(() => scratch.cleanup());

const text = (bytes) => new TextDecoder().decode(bytes);
/** Every byte value, then bytes that are no UTF-8 (a lone continuation, an overlong, a cut character). */
const ALL = Uint8Array.from([...Array(256).keys(), 0x80, 0xc0, 0xaf, 0xe2, 0x82, 0xff, 0xfe, 0x00]);
const names = (list) => list.entries.map((e) => `${e.path}:${e.type}`);

describe("read and write", { timeout: 60_000 }, () => {
  test("bytes round trip exactly, non-UTF-8 ones too; text goes as UTF-8", async () => {
    const files = wb.files("ts-files");
    assert.ok(files instanceof Files);
    assert.equal(files.sessionId, "ts-files");
    const entry = await files.write("bin/all.bin", ALL);
    assert.equal(entry.path, "bin/all.bin");
    assert.equal(entry.type, "file");
    assert.equal(entry.sizeBytes, ALL.length);
    assert.match(entry.etag, /^".+"$/);
    const back = await files.read("bin/all.bin");
    assert.ok(back instanceof Uint8Array);
    assert.deepEqual([...back], [...ALL]);
    // What an execution sees is what was written, byte for byte.
    const seen = await wb.runBash("od -An -v -tx1 bin/all.bin | tr -d ' \\n'", { sessionId: "ts-files" });
    assert.equal(text(await wb.output(seen)), Buffer.from(ALL).toString("hex"));
    // A view into a larger buffer sends only its own bytes.
    const view = new Uint8Array([1, 2, 0xff, 0xfe, 5, 6]).subarray(2, 4);
    await files.write("view.bin", view);
    assert.deepEqual([...(await files.read("view.bin"))], [0xff, 0xfe]);
    await files.write("empty", new Uint8Array(0));
    assert.equal((await files.read("empty")).length, 0);
    await files.write("notes/é 100%.txt", "héllo ✓\n");
    assert.equal(text(await files.read("notes/é 100%.txt")), "héllo ✓\n");
    assert.deepEqual([...(await files.read("notes/é 100%.txt"))], [...Buffer.from("héllo ✓\n")]);
  });

  test("a range: start, end (exclusive), past the end", async () => {
    const files = wb.files("ts-files");
    await files.write("range.bin", ALL);
    assert.deepEqual([...(await files.read("range.bin", { start: 254, end: 258 }))], [254, 255, 0x80, 0xc0]);
    assert.deepEqual([...(await files.read("range.bin", { start: 260 }))], [...ALL.subarray(260)]);
    assert.deepEqual([...(await files.read("range.bin", { end: 3 }))], [0, 1, 2]);
    assert.equal((await files.read("range.bin", { start: ALL.length })).length, 0);
    assert.equal((await files.read("range.bin", { start: 10_000 })).length, 0);
    assert.equal((await files.read("range.bin", { start: 5, end: 5 })).length, 0);
    await assert.rejects(files.read("range.bin", { start: -1 }), TypeError);
    await assert.rejects(files.read("range.bin", { end: 1.5 }), TypeError);
  });

  test("ifMatch and createOnly: a stale write is refused and changes nothing", async () => {
    const files = wb.files("ts-files");
    const first = await files.write("cas.txt", "one");
    const second = await files.write("cas.txt", "two", { ifMatch: first.etag });
    assert.notEqual(second.etag, first.etag);
    await assert.rejects(files.write("cas.txt", "three", { ifMatch: first.etag }), PreconditionFailed);
    await assert.rejects(files.write("cas.txt", "four", { createOnly: true }), PreconditionFailed);
    assert.equal(text(await files.read("cas.txt")), "two");
    await files.write("new.txt", "made", { createOnly: true });
    assert.equal(text(await files.read("new.txt")), "made");
    await assert.rejects(files.delete("cas.txt", { ifMatch: first.etag }), PreconditionFailed);
    assert.equal(text(await files.read("cas.txt")), "two");
    await files.delete("cas.txt", { ifMatch: second.etag });
    await assert.rejects(files.read("cas.txt"), NotFound);
  });

  test("bad input: a clear error, and nothing written", async () => {
    const files = wb.files("ts-bad");
    await files.write("keep.txt", "kept");
    await wb.runBash("ln -sfn /tmp out", { sessionId: "ts-bad" });
    const before = names(await files.list("", { depth: 5 }));
    // A URL would resolve `..` (escaped too) to another route: refused before anything is sent.
    await assert.rejects(files.write("../out.txt", "x"), TypeError);
    await assert.rejects(files.write("a/%2E%2E/../../files/out.txt", "x"), TypeError);
    await assert.rejects(files.delete("../../ts-files/files/bin"), TypeError);
    await assert.rejects(files.read(".."), TypeError);
    await assert.rejects(files.list("a/.."), TypeError);
    // The daemon refuses what leads out in a body or a query, or through a symlink.
    await assert.rejects(files.write("out/x.txt", "x"), InvalidRequest);
    await assert.rejects(files.move("keep.txt", "../keep.txt"), InvalidRequest);
    await assert.rejects(files.write("lone.txt", "\ud800"), TypeError);
    await assert.rejects(files.write("num.txt", 42), TypeError);
    await assert.rejects(files.write("", "x"), TypeError);
    await assert.rejects(files.write("/", "x"), TypeError);
    // An absolute path, and a write to a directory's path, as the daemon refuses them.
    await assert.rejects(files.write("/etc/x", "x"), TypeError);
    await assert.rejects(files.read("/keep.txt"), TypeError);
    await assert.rejects(files.delete("/keep.txt"), TypeError);
    await assert.rejects(files.list("/"), TypeError);
    await assert.rejects(files.write("dir/", "x"), TypeError);
    await assert.rejects(files.write("etag.txt", "x", { ifMatch: "bad\nvalue" }), TypeError);
    await assert.rejects(files.delete(""), TypeError);
    await assert.rejects(files.delete("./"), TypeError);
    assert.deepEqual(names(await files.list("", { depth: 5 })), before, "nothing changed");
    assert.equal(text(await files.read("keep.txt")), "kept");
    assert.throws(() => wb.files(".."), TypeError);
    assert.throws(() => wb.files(""), TypeError);
  });

  test("unknown sessions and files are NotFound; a directory is not read as a file", async () => {
    const nowhere = wb.files("ts-never-made");
    await assert.rejects(nowhere.read("x"), NotFound);
    await assert.rejects(nowhere.list(), NotFound);
    await assert.rejects(nowhere.download(), NotFound);
    await assert.rejects(nowhere.delete("x"), NotFound);
    assert.ok(!(await wb.sessions()).some((s) => s.sessionId === "ts-never-made"), "no session was made");
    const files = wb.files("ts-files");
    await assert.rejects(files.read("no/such.txt"), NotFound);
    await assert.rejects(files.delete("no/such.txt"), NotFound);
    await assert.rejects(files.move("no/such.txt", "b.txt"), NotFound);
    await assert.rejects(files.read("bin"), (e) => e instanceof WorkbenchError && e.code === "is_a_directory");
  });

  test("a plain write whose answer was lost is sent again; a conditional one is not", async () => {
    let puts = 0;
    let lose = true;
    const lossy = async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "PUT") {
        puts += 1;
        if (lose) {
          lose = false;
          await response.arrayBuffer();
          throw new TypeError("fetch failed", { cause: { code: "ECONNRESET", message: "socket hang up" } });
        }
      }
      return response;
    };
    const files = daemon.client({ fetch: lossy }).files("ts-lossy");
    const entry = await files.write("a.bin", ALL);
    assert.equal(puts, 2);
    assert.equal(entry.sizeBytes, ALL.length);
    lose = true;
    await assert.rejects(files.write("b.bin", ALL, { createOnly: true }), Unavailable);
    assert.equal(puts, 3, "sent once");
    assert.deepEqual([...(await wb.files("ts-lossy").read("b.bin"))], [...ALL], "its first try wrote it");
  });
});

describe("list, delete, move", { timeout: 60_000 }, () => {
  test("a listing to a depth; a file lists as itself; a symlink with its target", async () => {
    const files = wb.files("ts-tree");
    await files.write("src/app.py", "print(1)\n");
    await files.write("src/lib/util.py", "x = 1\n");
    await wb.runBash("ln -s src/app.py link", { sessionId: "ts-tree" });
    const top = await files.list();
    assert.equal(top.path, "");
    assert.equal(top.type, "directory");
    assert.equal(top.truncated, false);
    assert.deepEqual(names(top), ["link:symlink", "src:directory"]);
    assert.equal(top.entries[0].target, "src/app.py");
    assert.deepEqual(names(await files.list("src", { depth: 2 })), [
      "src/app.py:file",
      "src/lib:directory",
      "src/lib/util.py:file",
    ]);
    assert.deepEqual(names(await files.list("src/app.py")), ["src/app.py:file"]);
    const alone = await files.list("src", { depth: 0 });
    assert.equal(alone.type, "directory");
    assert.deepEqual(alone.entries, []);
    assert.deepEqual(names(await files.list("./src//lib/")), ["src/lib/util.py:file"]);
    await assert.rejects(files.list("src", { depth: 65 }), (e) => e instanceof WorkbenchError && e.status === 400);
  });

  test("move, with and without overwrite; delete a directory", async () => {
    const files = wb.files("ts-tree");
    await files.write("m/a.txt", "a");
    await files.write("m/b.txt", "b");
    const moved = await files.move("m/a.txt", "n/deep/a.txt");
    assert.equal(moved.path, "n/deep/a.txt");
    await assert.rejects(files.read("m/a.txt"), NotFound);
    await assert.rejects(files.move("m/b.txt", "n/deep/a.txt"), Conflict);
    assert.equal(text(await files.read("m/b.txt")), "b", "nothing moved");
    await files.move("m/b.txt", "n/deep/a.txt", { overwrite: true });
    assert.equal(text(await files.read("n/deep/a.txt")), "b");
    await assert.rejects(files.move("n", "../n"), InvalidRequest);
    await files.delete("n");
    await assert.rejects(files.list("n"), NotFound);
  });
});

describe("upload and download", { timeout: 60_000 }, () => {
  test("a tar down, and up again elsewhere, bytes intact", async () => {
    const files = wb.files("ts-arch");
    await files.write("pkg/data.bin", ALL);
    await files.write("pkg/sub/readme.txt", "hi\n");
    const tar = await files.download("pkg");
    assert.ok(tar instanceof Uint8Array && tar.length >= 1024);
    const result = await files.upload(tar, { path: "copy" });
    assert.equal(result.path, "copy");
    assert.equal(result.files, 2);
    assert.equal(result.sizeBytes, ALL.length + 3);
    assert.deepEqual([...(await files.read("copy/data.bin"))], [...ALL]);
    assert.equal(text(await files.read("copy/sub/readme.txt")), "hi\n");
    const whole = await files.download();
    assert.ok(whole.length > tar.length);
  });

  test("a refused archive changes nothing", async () => {
    const files = wb.files("ts-arch");
    const before = names(await files.list("", { depth: 5 }));
    await assert.rejects(files.upload(new Uint8Array([1, 2, 3]), { path: "junk" }), (e) => e instanceof WorkbenchError && e.status === 422);
    await assert.rejects(files.upload("not bytes"), TypeError);
    await assert.rejects(files.upload(await files.download("pkg"), { path: "../out" }), InvalidRequest);
    assert.deepEqual(names(await files.list("", { depth: 5 })), before);
  });
});

describe("watch", { timeout: 60_000 }, () => {
  test("changes as they happen; leaving the loop closes it; timeoutMs ends it", async () => {
    const files = wb.files("ts-watch");
    await files.write("w/.keep", "");
    const seen = [];
    const watching = (async () => {
      for await (const change of files.watch("w")) {
        seen.push(change);
        if (change.path === "w/last.txt") break;
      }
    })();
    // The watch is set up once the daemon answers: write until a change is seen.
    await eventually(
      async () => {
        await files.write("w/first.txt", "1");
        return seen.length > 0;
      },
      10_000,
      "a change",
    );
    await files.write("w/last.txt", "2");
    await watching;
    assert.ok(seen.some((c) => c.path === "w/first.txt" && c.type === "created" && c.directory === false));
    assert.equal(seen.at(-1).path, "w/last.txt");
    const started = Date.now();
    const none = [];
    for await (const change of files.watch("w", { timeoutMs: 300 })) none.push(change);
    assert.ok(Date.now() - started < 10_000);
    assert.deepEqual(none, []);
  });

  test("an aborted watch rejects with the signal's reason; an unknown path is refused", async () => {
    const files = wb.files("ts-watch");
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("enough")), 200);
    await assert.rejects(
      (async () => {
        for await (const _ of files.watch("w", { signal: controller.signal }));
      })(),
      /enough/,
    );
    const refuse = async (iterable) => {
      for await (const _ of iterable);
    };
    await assert.rejects(refuse(files.watch("no/such/dir")), NotFound);
    await assert.rejects(refuse(files.watch("../x")), InvalidRequest);
    await assert.rejects(refuse(wb.files("ts-never-made").watch()), NotFound);
  });
});
