// The token is found as the command line finds it: $WORKBENCH_TOKEN, else <data dir>/token.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";

import { dataDir, discover } from "../dist/platform.node.js";
import { DEFAULT_URL, Workbench } from "../dist/index.js";

const root = mkdtempSync(join(tmpdir(), "wb-ts-discover-"));
after(() => rmSync(root, { recursive: true, force: true }));

function tokenFile(dir, text) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "token"), text);
  return join(dir, "token");
}

test("$WORKBENCH_TOKEN comes first", () => {
  const dir = join(root, "first");
  tokenFile(dir, "from-the-file");
  assert.deepEqual(discover({ WORKBENCH_TOKEN: "from-env", WORKBENCH_DATA_DIR: dir }), {
    token: "from-env",
    tokenSource: "WORKBENCH_TOKEN",
  });
});

test("else <$WORKBENCH_DATA_DIR>/token, stripped; ~ is the home directory", () => {
  const path = tokenFile(join(root, "data"), "  tok-in-file\n");
  assert.deepEqual(discover({ WORKBENCH_DATA_DIR: join(root, "data") }), { token: "tok-in-file", tokenSource: path });
  const home = join(root, "home");
  const homePath = tokenFile(join(home, "wb"), "tok-under-home\n");
  assert.deepEqual(discover({ HOME: home, WORKBENCH_DATA_DIR: "~/wb" }), { token: "tok-under-home", tokenSource: homePath });
  assert.equal(dataDir({ HOME: home, WORKBENCH_DATA_DIR: "~" }), home);
});

test("else ~/.local/share/workbench/token; an empty or missing file is no token", () => {
  const home = join(root, "home2");
  const path = tokenFile(join(home, ".local", "share", "workbench"), "default-place\n");
  assert.deepEqual(discover({ HOME: home }), { token: "default-place", tokenSource: path });
  tokenFile(join(home, ".local", "share", "workbench"), "\n");
  assert.deepEqual(discover({ HOME: home }), {});
  assert.deepEqual(discover({ HOME: join(root, "nobody") }), {});
  assert.deepEqual(discover({ HOME: home, WORKBENCH_DATA_DIR: "" }), {}, "an empty variable is as unset");
});

test("$WORKBENCH_URL is the default URL; options win over the environment", () => {
  assert.deepEqual(discover({ WORKBENCH_URL: "http://127.0.0.1:9999", HOME: join(root, "nobody") }), {
    url: "http://127.0.0.1:9999",
  });
  const saved = { ...process.env };
  try {
    process.env.WORKBENCH_URL = "http://127.0.0.1:9999/";
    process.env.WORKBENCH_TOKEN = "env-token";
    const found = new Workbench();
    assert.equal(found.url, "http://127.0.0.1:9999");
    assert.equal(found.tokenSource, "WORKBENCH_TOKEN");
    const given = new Workbench({ url: "http://127.0.0.1:1234", token: "given" });
    assert.equal(given.url, "http://127.0.0.1:1234");
    assert.equal(given.tokenSource, "option");
    assert.equal(new Workbench({ token: null }).tokenSource, null);
    delete process.env.WORKBENCH_URL;
    assert.equal(new Workbench().url, DEFAULT_URL);
    assert.throws(() => new Workbench({ url: "unix:///tmp/x.sock" }), TypeError);
    assert.throws(() => new Workbench({ url: "127.0.0.1:8787" }), TypeError);
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
});
