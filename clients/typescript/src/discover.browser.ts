/**
 * Where the daemon is, in a browser: nothing to discover (no environment, no files). Pass `url`
 * and `token` to `new Workbench()`; without a token the daemon answers `Unauthorized`.
 */

import type { Discovered } from "./discovered.js";

export function discover(): Discovered {
  return {};
}
