/**
 * Where the daemon is, on Node: found as the command line and the Python client find it.
 *
 * - URL: `$WORKBENCH_URL` (else the client's default, `http://127.0.0.1:8787`).
 * - Token: `$WORKBENCH_TOKEN`, else the file `token` in the data dir (`$WORKBENCH_DATA_DIR`,
 *   else `~/.local/share/workbench`), which `workbench serve` writes on first start. Empty or
 *   missing: no token (the daemon then answers `unauthorized`).
 */

/// <reference types="node" />
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

import type { Discovered } from "./discovered.js";

/** `~` and `~/...` expanded as the shell (and Python's `os.path.expanduser`) would. */
function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return join(home, path.slice(2));
  return path;
}

function home(env: NodeJS.ProcessEnv): string {
  return env.HOME || homedir();
}

/** The data dir the daemon uses by default. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.WORKBENCH_DATA_DIR;
  if (configured) return expandHome(configured, home(env));
  return join(home(env), ".local", "share", "workbench");
}

export function discover(env: NodeJS.ProcessEnv = process.env): Discovered {
  const found: Discovered = {};
  if (env.WORKBENCH_URL) found.url = env.WORKBENCH_URL;
  if (env.WORKBENCH_TOKEN) {
    found.token = env.WORKBENCH_TOKEN;
    found.tokenSource = "WORKBENCH_TOKEN";
    return found;
  }
  const path = join(dataDir(env), "token");
  let token = "";
  try {
    token = readFileSync(path, "utf8").trim();
  } catch {
    token = "";
  }
  if (token) {
    found.token = token;
    found.tokenSource = path;
  }
  return found;
}
