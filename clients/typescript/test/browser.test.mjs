// The browser build: under the `browser` condition the package loads no Node module and reads no
// environment; it runs against a daemon with only fetch and web streams.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { PACKAGE, Scratch, TOKEN } from "./daemon.mjs";

const run = promisify(execFile);
const scratch = new Scratch("browser");
let daemon;

before(async () => {
  daemon = await scratch.daemon().start();
});
after(() => scratch.cleanup());

const IMPORT = /(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s*["']([^"']+)["']/g;

/** The files of the module graph from `entry`, resolving `#` imports with the browser condition. */
function browserGraph(entry) {
  const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  const seen = new Map();
  const visit = (file) => {
    if (seen.has(file)) return;
    // Comments out: a doc comment may quote an import.
    const source = readFileSync(file, "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/^\s*\/\/.*$/gm, "");
    seen.set(file, source);
    for (const match of source.matchAll(IMPORT)) {
      const specifier = match[1] ?? match[2] ?? match[3];
      if (specifier.startsWith("#")) {
        visit(resolve(PACKAGE, manifest.imports[specifier].browser));
      } else if (specifier.startsWith(".")) {
        visit(resolve(dirname(file), specifier));
      } else {
        seen.set(`${file} imports ${specifier}`, "");
      }
    }
  };
  visit(entry);
  return seen;
}

test("the browser graph imports nothing of Node and uses no Node global", () => {
  const graph = browserGraph(join(PACKAGE, "dist", "index.js"));
  const files = [...graph.keys()];
  assert.ok(files.some((f) => f.endsWith("platform.browser.js")));
  assert.ok(!files.some((f) => f.endsWith("platform.node.js")));
  const foreign = files.filter((f) => f.includes(" imports "));
  assert.deepEqual(foreign, [], "only the package's own modules");
  for (const [file, source] of graph) {
    assert.doesNotMatch(source, /\bprocess\.|\bBuffer\b|\brequire\(/, `${file} uses a Node global`);
  }
});

test("under the browser condition it ignores the environment and runs with what it is given", { timeout: 60_000 }, async () => {
  const script = `
    import { Workbench } from "@workbench/client";
    const found = new Workbench({ url: ${JSON.stringify(daemon.url)} });
    const wb = new Workbench({ url: ${JSON.stringify(daemon.url)}, token: ${JSON.stringify(TOKEN)} });
    const run = await wb.runBash("echo from the browser build", { background: true });
    let text = "";
    for await (const event of wb.events(run)) if (event.eventType === "output") text += event.outputDelta;
    const done = await wb.wait(run);
    let refused = null;
    try { await found.get(run); } catch (error) { refused = error.code; }
    console.log(JSON.stringify({ tokenSource: found.tokenSource, text, status: done.status, refused }));
  `;
  const { stdout } = await run(process.execPath, ["--conditions=browser", "--input-type=module", "-e", script], {
    cwd: PACKAGE,
    env: { ...process.env, WORKBENCH_TOKEN: TOKEN },
    timeout: 50_000,
  });
  assert.deepEqual(JSON.parse(stdout), {
    tokenSource: null,
    text: "from the browser build\n",
    status: "completed",
    refused: "unauthorized",
  });
});

test("the README's example runs (compiled under strict)", { timeout: 60_000 }, async () => {
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  await run(process.execPath, [tsc, "-p", "examples/tsconfig.json", "--noEmit", "false"], { cwd: PACKAGE });
  const { stdout } = await run(process.execPath, [join(PACKAGE, "dist", "examples", "quickstart.js")], {
    cwd: PACKAGE,
    env: { ...process.env, WORKBENCH_URL: daemon.url, WORKBENCH_TOKEN: TOKEN },
    timeout: 50_000,
  });
  assert.match(stdout, /^failed, exit code 3\nhello\n/);
  assert.match(stdout, /step 1\nstep 2\nstep 3\nex_\w+: completed \(exit 0\)\nstill running\ncancelled\n45\nnot_found: /);
});
