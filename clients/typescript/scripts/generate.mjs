#!/usr/bin/env node
// Generates src/generated/openapi.ts from a daemon's `GET /openapi.json` (the live wire contract).
//
//   node scripts/generate.mjs [--url http://127.0.0.1:8787 | --file openapi.json] [--check]
//
// The URL defaults to $WORKBENCH_URL, else http://127.0.0.1:8787 (the document needs no token).
// With --check nothing is written: it exits 1 when the checked-in file differs from what the
// document generates (the test suite runs that check against a daemon it starts).

import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";

export const OUTPUT = fileURLToPath(new URL("../src/generated/openapi.ts", import.meta.url));

const HEADER = `// Generated from the daemon's GET /openapi.json by scripts/generate.mjs: do not edit.
// Regenerate with \`npm run generate -- --url http://127.0.0.1:8787\` against a running daemon.

`;

/** The TypeScript source that an OpenAPI document (parsed JSON) generates. */
export async function render(document) {
  const ast = await openapiTS(document, { alphabetize: false });
  return HEADER + astToString(ast);
}

/** The OpenAPI document served by the daemon at `url`. */
export async function fetchDocument(url) {
  const response = await fetch(`${url.replace(/\/+$/, "")}/openapi.json`);
  if (!response.ok) {
    throw new Error(`GET ${url}/openapi.json answered ${response.status}`);
  }
  return response.json();
}

/** The first line that differs between two texts, for a readable failure. */
export function firstDifference(expected, actual) {
  const a = expected.split("\n");
  const b = actual.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      return `line ${i + 1}:\n  checked in: ${JSON.stringify(a[i] ?? "<end of file>")}\n  generated:  ${JSON.stringify(b[i] ?? "<end of file>")}`;
    }
  }
  return null;
}

async function main(argv) {
  let url = process.env.WORKBENCH_URL || "http://127.0.0.1:8787";
  let file = null;
  let check = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--url") url = argv[++i];
    else if (arg === "--file") file = argv[++i];
    else if (arg === "--check") check = true;
    else {
      console.error(`generate: unknown argument ${arg}\nusage: generate.mjs [--url URL | --file FILE] [--check]`);
      return 2;
    }
  }
  const document = file ? JSON.parse(await readFile(file, "utf8")) : await fetchDocument(url);
  const source = await render(document);
  if (check) {
    const current = await readFile(OUTPUT, "utf8").catch(() => "");
    const difference = firstDifference(current, source);
    if (difference !== null) {
      console.error(`generate: src/generated/openapi.ts is stale (first difference at ${difference})`);
      return 1;
    }
    console.error("generate: src/generated/openapi.ts matches the document");
    return 0;
  }
  await writeFile(OUTPUT, source);
  console.error(`generate: wrote src/generated/openapi.ts from ${file ?? `${url}/openapi.json`}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await main(process.argv.slice(2));
}
