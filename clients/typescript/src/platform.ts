/**
 * What differs between Node and a browser, behind the conditional import `#platform`
 * (package.json `imports`): `platform.node.ts` on Node, `platform.browser.ts` elsewhere.
 */

/** What the environment says about the daemon, as the command line finds it. */
export interface Discovered {
  /** `$WORKBENCH_URL`, when set. */
  url?: string;
  token?: string;
  /** Where the token came from (`WORKBENCH_TOKEN` or the token file's path). */
  tokenSource?: string;
}

/** An open event stream: its status, then its body as text in pieces as they arrive. */
export interface StreamResponse {
  status: number;
  /** The body, decoded as UTF-8 (a character is never cut between pieces). */
  pieces: AsyncIterable<string>;
  /** The whole body (for an error answer). */
  text(): Promise<string>;
  /**
   * Done with the stream (the execution is not touched). `finished`: its last event came, so
   * the rest (the end of the body) may be read to keep the connection for the next request;
   * otherwise the connection is dropped at once.
   */
  close(finished: boolean): void;
}

/** Opens `GET url` with `headers`; rejects when it cannot connect or `signal` aborts. */
export type OpenStream = (url: string, headers: Record<string, string>, signal: AbortSignal) => Promise<StreamResponse>;

/** The event stream read through a `fetch`: what browsers (and a `fetch` given as an option) use. */
export function fetchStream(fetchImpl: typeof fetch): OpenStream {
  return async (url, headers, signal) => {
    const response = await fetchImpl(url, { headers, signal });
    const body = response.body;
    return {
      status: response.status,
      pieces: {
        async *[Symbol.asyncIterator]() {
          if (body === null) return;
          const reader = body.getReader();
          const decoder = new TextDecoder();
          try {
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              yield decoder.decode(value, { stream: true });
            }
            const rest = decoder.decode();
            if (rest) yield rest;
          } finally {
            reader.releaseLock();
          }
        },
      },
      text: () => response.text(),
      close: () => {
        body?.cancel().catch(() => undefined); // `fetch` pools the connection as it sees fit
      },
    };
  };
}
