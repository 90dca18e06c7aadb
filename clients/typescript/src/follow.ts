/**
 * Following an execution's events over its event stream (`Workbench.events()` with `follow`):
 * resuming from the last sequence seen after a drop, backing off between reconnects, giving up
 * after `reconnectForMs`, and counting a stream silent for `streamIdleMs` as dropped.
 */

import { Unavailable, WorkbenchError, errorFromBody } from "./errors.js";
import { Deadline, type Http, notSent, sleep } from "./http.js";
import { BACKOFF_FIRST_MS, BACKOFF_MAX_MS } from "./limits.js";
import type { OpenStream } from "./platform.js";
import { type Frame, FrameReader } from "./sse.js";
import { type Event, type LiveEvent, isTerminal } from "./types.js";

/** What a follow takes from its client. */
export interface FollowClient {
  readonly http: Http;
  readonly openStream: OpenStream;
  /** How long opening a stream may take. */
  readonly timeoutMs: number;
  readonly reconnectForMs: number;
  readonly streamIdleMs: number;
}

function isLast(event: Event | LiveEvent): boolean {
  return event.sequence !== null && event.eventType === "status" && isTerminal(event.status);
}

/** The state of one `events()` follow: where to resume, what to drop, when to give up. */
class Follow {
  truncated = false;
  /** A stream was opened once: a daemon that cannot be reached after that went away. */
  everConnected = false;
  failingSince: number | null = null;
  delay = BACKOFF_FIRST_MS;

  constructor(
    public last: number,
    private readonly live: boolean,
    private readonly reconnectForMs: number,
    private readonly http: Http,
  ) {}

  /**
   * Called when a stream opens: it ends a failure, so the give-up clock and the backoff start
   * afresh at the next drop. After a reconnect past the budget, a gap (display was missed).
   */
  connected(): LiveEvent | null {
    const reconnected = this.failingSince !== null;
    this.everConnected = true;
    this.failingSince = null;
    this.delay = BACKOFF_FIRST_MS;
    if (this.truncated && this.live && reconnected) return { sequence: null, eventType: "gap" };
    return null;
  }

  /** The event of `frame` to hand out, or null (a duplicate, or live output not wanted). */
  take(frame: Frame): Event | LiveEvent | null {
    if (frame.id !== null) {
      const event = JSON.parse(frame.data) as Event;
      if (event.sequence <= this.last) return null;
      this.last = event.sequence;
      this.failingSince = null;
      this.delay = BACKOFF_FIRST_MS;
      if (event.eventType === "output_truncated") this.truncated = true;
      return event;
    }
    if (!this.live) return null;
    if (frame.event === "gap") {
      const data = frame.data ? (JSON.parse(frame.data) as { missedBytes?: number }) : {};
      return { sequence: null, eventType: "gap", missedBytes: data.missedBytes ?? null };
    }
    if (frame.event === "output") {
      const data = JSON.parse(frame.data) as Pick<LiveEvent, "timestamp" | "stream" | "outputDelta">;
      return {
        sequence: null,
        eventType: "output",
        timestamp: data.timestamp ?? null,
        stream: data.stream ?? null,
        outputDelta: data.outputDelta ?? null,
      };
    }
    return null;
  }

  /**
   * The stream ended before the terminal event: the pause before reconnecting, or throw. A
   * daemon that cannot be reached before any stream was opened is not waited for (as `get()`).
   */
  broke(error: unknown): number {
    if (!this.everConnected && !(error instanceof WorkbenchError)) throw this.http.unreachable(error);
    const now = Date.now();
    if (this.failingSince === null) this.failingSince = now;
    if (now - this.failingSince > this.reconnectForMs) {
      throw this.http.unreachable(error ?? new Error("the event stream ended early"));
    }
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, BACKOFF_MAX_MS);
    return delay;
  }
}

/**
 * The events of the stream at `url` after sequence `after`, live ones too with `live`, ending
 * after the terminal status event; reconnects as `events()` describes.
 */
export async function* followEvents(
  client: FollowClient,
  url: string,
  after: number,
  live: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<Event | LiveEvent, void, undefined> {
  const state = new Follow(after, live, client.reconnectForMs, client.http);
  for (;;) {
    let error: unknown;
    const connection = new Deadline(signal, client.timeoutMs);
    let idle: ReturnType<typeof setInterval> | undefined;
    let stream: Awaited<ReturnType<OpenStream>> | undefined;
    let finished = false;
    try {
      const headers = { ...client.http.headers, Accept: "text/event-stream", "Last-Event-ID": String(state.last) };
      stream = await client.openStream(url, headers, connection.signal);
      connection.clearTimer();
      // 204: reconnected after the terminal event, so nothing more will come.
      if (stream.status === 204) return;
      if (stream.status !== 200) throw errorFromBody(stream.status, await stream.text());
      const gap = state.connected();
      if (gap !== null) yield gap;
      const frames = new FrameReader();
      // Silence is time spent waiting for the stream: while the caller has an event, the
      // stream is not read (and need not be), so that time does not count.
      let heard = Date.now();
      let handedOut = false;
      idle = setInterval(
        () => {
          if (!handedOut && Date.now() - heard > client.streamIdleMs) {
            connection.controller.abort(new Error(`the event stream was silent for ${client.streamIdleMs} ms`));
          }
        },
        Math.min(5_000, client.streamIdleMs),
      );
      // The open connection keeps a Node process alive; this check need not.
      (idle as { unref?: () => void }).unref?.();
      for await (const piece of stream.pieces) {
        heard = Date.now();
        for (const frame of frames.feed(piece)) {
          const event = state.take(frame);
          if (event === null) continue;
          if (isLast(event)) finished = true;
          handedOut = true;
          yield event;
          handedOut = false;
          heard = Date.now();
          if (finished) return;
        }
      }
      error = new Error("the event stream ended before the terminal event");
    } catch (caught) {
      if (signal?.aborted) throw signal.reason;
      // A daemon that is stopping or restarting is waited for; every other answer is final.
      if (caught instanceof WorkbenchError && !(caught instanceof Unavailable)) throw caught;
      if (caught instanceof SyntaxError || notSent(caught)) throw caught;
      error = caught;
    } finally {
      if (idle !== undefined) clearInterval(idle);
      stream?.close(finished);
      if (!finished) connection.controller.abort();
      connection.dispose();
    }
    await sleep(state.broke(error), signal);
  }
}
