// The client's types as a user's strict project sees them: `exactOptionalPropertyTypes` takes an
// option that may be undefined (`process.env.X`) wherever the option is optional.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

import { PACKAGE } from "./daemon.mjs";

test("options from the environment compile under exactOptionalPropertyTypes", () => {
  const tsc = join(PACKAGE, "node_modules", ".bin", "tsc");
  const done = spawnSync(tsc, ["-p", join(PACKAGE, "test", "exact-optional", "tsconfig.json")], { encoding: "utf8" });
  assert.equal(done.status, 0, `${done.stdout}${done.stderr}`);
});
