/** The client's defaults and limits, shared by `Workbench` and the event follow. */

export const DEFAULT_URL = "http://127.0.0.1:8787";
/**
 * The longest single long-poll (the API allows 600000). Node's `fetch` gives up on an answer
 * whose headers take over 300 s, so waits longer than this are made of several long-polls.
 */
export const MAX_WAIT_MS = 240_000;
/** The longest wait the API takes (`waitTimeoutMs`, 0 to 600000). */
export const MAX_WAIT_TIMEOUT_MS = 600_000;
/** Extra time a request gets beyond the long-poll it asks the daemon for. */
export const SLACK_MS = 30_000;
/** A stream that sends nothing for this long is dead (the daemon sends a keepalive every 15 s). */
export const STREAM_IDLE_MS = 45_000;
export const BACKOFF_FIRST_MS = 50;
export const BACKOFF_MAX_MS = 2_000;
