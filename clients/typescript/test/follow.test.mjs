// events() between a client and its daemon: connections that drop (through a TCP proxy), a proxy
// answering 502 for a daemon it cannot reach, a daemon that was never up, and a slow consumer.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Unavailable, Workbench } from "../dist/index.js";
import { Scratch, TOKEN, unusedPort } from "./daemon.mjs";
import { Proxies } from "./proxy.mjs";

const scratch = new Scratch("follow");
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

const proxy = () => proxies.to(daemon.url);

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check, withinMs = 15_000) {
  const deadline = Date.now() + withinMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await pause(10);
  }
}

/** Follow `run` in the background; `seen` fills as events come, `done` is all of them (or the error). */
function follow(client, run, consume = undefined) {
  const seen = [];
  const done = (async () => {
    for await (const event of client.events(run)) {
      seen.push(event);
      if (consume) await consume(event);
    }
    return seen;
  })();
  done.catch(() => undefined);
  return { seen, done };
}

const printed = (events) =>
  events
    .filter((e) => e.eventType === "output")
    .map((e) => e.outputDelta)
    .join("");

describe("events() between a client and its daemon", { timeout: 60_000 }, () => {
  test("a drop long after an earlier one that reconnected is reconnected too", async () => {
    const between = await proxy();
    const client = new Workbench({ url: between.url, token: TOKEN, reconnectForMs: 1_000 });
    const run = await wb.runBash("echo a; sleep 4; echo b", { background: true });
    const { seen, done } = follow(client, run);
    await until(() => printed(seen) === "a\n");
    between.drop();
    await until(() => between.count("/events/stream") === 2);
    // The reconnect worked; a second drop, past reconnectForMs after the first, starts afresh.
    await pause(2_000);
    between.drop();
    const events = await done;
    assert.equal(printed(events), "a\nb\n");
    assert.equal(events.at(-1).status, "completed");
    assert.ok(between.count("/events/stream") >= 3);
  });

  test("a proxy's 502 for a daemon it cannot reach is waited for, as a daemon that went away", async () => {
    const between = await proxy();
    const client = new Workbench({ url: between.url, token: TOKEN });
    const run = await wb.runBash("echo a; sleep 1.5; echo b", { background: true });
    const { seen, done } = follow(client, run);
    await until(() => printed(seen) === "a\n");
    between.mode = "gateway";
    between.drop();
    await pause(800);
    between.mode = "forward";
    const events = await done;
    assert.equal(printed(events), "a\nb\n");
    assert.equal(events.at(-1).status, "completed");
  });

  test("a daemon that was never up fails at once, as get() does", async () => {
    const gone = new Workbench({ url: `http://127.0.0.1:${await unusedPort()}`, token: TOKEN });
    const stop = new AbortController();
    const timer = setTimeout(() => stop.abort(new Error("still reconnecting after 5 s")), 5_000);
    const began = Date.now();
    try {
      await assert.rejects(
        (async () => {
          for await (const _ of gone.events("ex_01M8RF4Q4G3XB8E7KY9425AAAA", { signal: stop.signal })) {
            // nothing comes
          }
        })(),
        (error) => error instanceof Unavailable && /cannot reach the daemon/.test(error.message),
      );
    } finally {
      clearTimeout(timer);
    }
    assert.ok(Date.now() - began < 2_000, `took ${Date.now() - began} ms`);
  });

  test("a consumer slower than streamIdleMs does not make the stream count as silent", async () => {
    const between = await proxy();
    const client = new Workbench({ url: between.url, token: TOKEN, streamIdleMs: 1_000 });
    // Nothing comes while the consumer works on `a` (3 s): the stream is quiet, not silent.
    const run = await wb.runBash("echo a; sleep 3.3; echo b", { background: true });
    const { done } = follow(client, run, async (event) => {
      if (event.outputDelta === "a\n") await pause(3_000);
    });
    const events = await done;
    assert.equal(printed(events), "a\nb\n");
    assert.equal(between.count("/events/stream"), 1, "one stream, never dropped");
  });
});

describe("exits() long-polls", { timeout: 30_000 }, () => {
  test("as long as asked, up to the API's 600000 ms, in long-polls Node's fetch can wait for", async () => {
    const asked = [];
    const stop = new AbortController();
    const client = daemon.client({
      fetch: (url, init) => {
        const target = new URL(url);
        if (target.pathname === "/v1/exits") {
          asked.push(Number(target.searchParams.get("waitTimeoutMs")));
          // The daemon is asked for less, as if each long-poll had run its whole time.
          target.searchParams.set("waitTimeoutMs", "50");
          if (asked.length === 3) stop.abort();
        }
        return fetch(target, init);
      },
    });
    await assert.rejects(client.exits({ waitTimeoutMs: 600_000, signal: stop.signal }), { name: "AbortError" });
    assert.equal(asked.length, 3, "it asked again while the time it was given lasted");
    assert.ok(asked.every((ms) => ms > 0 && ms <= 240_000), String(asked));
    assert.deepEqual(await client.exits({ waitTimeoutMs: 0 }), []);
  });
});
