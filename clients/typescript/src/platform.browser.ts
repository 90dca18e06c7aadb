/**
 * The platform in a browser (or any runtime without Node's modules): nothing to discover (no
 * environment, no files: pass `url` and `token` to `new Workbench()`), and streams through fetch.
 */

import type { Discovered, OpenStream } from "./platform.js";

export function discover(): Discovered {
  return {};
}

/** No stream of its own: the client reads the event stream through `fetch`. */
export const openStream: OpenStream | null = null;
