// The checked-in types are what the live daemon's /openapi.json generates: a drift fails here.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, test } from "node:test";

import { OUTPUT, fetchDocument, firstDifference, render } from "../scripts/generate.mjs";
import { Scratch } from "./daemon.mjs";

const scratch = new Scratch("openapi");
let daemon;

before(async () => {
  daemon = await scratch.daemon().start();
});
after(() => scratch.cleanup());

test("src/generated/openapi.ts matches the daemon's /openapi.json", { timeout: 60_000 }, async () => {
  const generated = await render(await fetchDocument(daemon.url));
  const checkedIn = readFileSync(OUTPUT, "utf8");
  const difference = firstDifference(checkedIn, generated);
  assert.equal(
    difference,
    null,
    `the types drifted from the API at ${difference}\n` +
      "regenerate them against a daemon of this tree: npm run generate -- --url http://127.0.0.1:8787",
  );
});
