/** `Workbench.output()`: one stream's whole output as bytes, from the journal and the artifact. */

import type { Workbench } from "./client.js";
import type { Http } from "./http.js";
import { type ArtifactOptions, type CallOptions, type ExecutionRef, type StreamName, isTerminal } from "./types.js";

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The bytes `Workbench.output()` describes, read through `client`. */
export async function streamOutput(
  client: Workbench,
  ref: ExecutionRef,
  stream: StreamName,
  options: CallOptions,
): Promise<Uint8Array> {
  const { signal } = options;
  const record = await client.get(ref, { signal });
  const terminal = isTerminal(record);
  const artifact = terminal ? (record.artifacts ?? []).find((a) => a.name === stream) : undefined;
  const encoder = new TextEncoder();
  const parts: Uint8Array[] = [];
  let size = 0;
  let exact = true;
  const held: string[] = [];
  const written = record.output[stream === "stdout" ? "stdoutBytes" : "stderrBytes"] ?? 0;
  if (written > 0) {
    let after = 0;
    for (;;) {
      const page = await client.eventsPage(record, { after, limit: 10_000, signal });
      for (const event of page.events) {
        if (event.eventType !== "output" || event.stream !== stream || !event.outputDelta) continue;
        let text = event.outputDelta;
        if (exact) {
          // U+FFFD may stand for bytes that were not UTF-8: from there on only the artifact is exact.
          const cut = text.indexOf("\ufffd");
          const good = encoder.encode(cut < 0 ? text : text.slice(0, cut));
          parts.push(good);
          size += good.length;
          if (cut < 0) continue;
          exact = false;
          text = text.slice(cut);
        }
        held.push(text);
      }
      if (page.terminal || page.nextAfter === after) break;
      after = page.nextAfter;
    }
  }
  if (artifact !== undefined) {
    if (size < artifact.sizeBytes) {
      const rest = await client.artifact(record, stream, { range: { start: size }, signal });
      parts.push(rest);
      size += rest.length;
    }
  } else {
    // No artifact: the stream was valid UTF-8 within the budget, so the journal's text is exact.
    for (const text of held) {
      const bytes = encoder.encode(text);
      parts.push(bytes);
      size += bytes.length;
    }
  }
  return concat(parts, size);
}

/** `Workbench.artifact()`: the bytes of the artifact at `target`, or of `range` of it. */
export function readArtifact(
  http: Http,
  target: string,
  timeoutMs: number,
  options: ArtifactOptions,
): Promise<Uint8Array> {
  const { range, signal } = options;
  const headers: Record<string, string> = {};
  const start = range?.start ?? 0;
  const end = range?.end;
  if (end !== undefined && end <= start) return Promise.resolve(new Uint8Array(0));
  if (start > 0 || end !== undefined) headers.Range = `bytes=${start}-${end === undefined ? "" : end - 1}`;
  return http.send(
    { method: "GET", path: target, headers, ok: [200, 206, 416], timeoutMs, headersOnly: true, signal },
    async (response) => {
      if (response.status === 416) {
        await response.arrayBuffer();
        return new Uint8Array(0); // asked from the end (or beyond): nothing more to read
      }
      return new Uint8Array(await response.arrayBuffer());
    },
  );
}
