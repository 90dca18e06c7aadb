/**
 * A reader of `text/event-stream` without I/O: feed it text as it arrives, get whole frames.
 *
 * It reads the daemon's stream as the Python client does: `id:` is the event's sequence, an
 * id-less `output` frame is a live display update past the output budget, `event: gap` says how
 * many display bytes a slow reader missed, and `:` comments (keepalives) are dropped.
 */

export interface Frame {
  /** The `id:` field as a sequence number, or null (a display update or a gap). */
  id: number | null;
  /** The `event:` field (`message` when absent). */
  event: string;
  /** The `data:` field, its lines joined with newlines. */
  data: string;
}

const DIGITS = /^\d+$/;

export class FrameReader {
  /** The start of a line whose end has not come yet, in pieces (joined once, when it ends). */
  private pending: string[] = [];
  private id: string | null = null;
  private event: string | null = null;
  private data: string[] = [];
  private any = false;

  /** Take a piece of the stream (any cut); the frames it completed, in order. */
  feed(text: string): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    let end = text.indexOf("\n");
    while (end >= 0) {
      let line = text.slice(start, end);
      if (this.pending.length > 0) {
        this.pending.push(line);
        line = this.pending.join("");
        this.pending = [];
      }
      if (line.charCodeAt(line.length - 1) === 13 /* "\r" */) line = line.slice(0, -1);
      const frame = this.line(line);
      if (frame !== null) frames.push(frame);
      start = end + 1;
      end = text.indexOf("\n", start);
    }
    if (start < text.length) this.pending.push(start === 0 ? text : text.slice(start));
    return frames;
  }

  /** Take one line (without its line ending); the completed frame at a blank line, else null. */
  line(line: string): Frame | null {
    if (line.length === 0) {
      if (!this.any) return null;
      const raw = this.id;
      const frame: Frame = {
        id: raw !== null && DIGITS.test(raw) ? Number(raw) : null,
        event: this.event ?? "message",
        data: this.data.length === 1 ? (this.data[0] as string) : this.data.join("\n"),
      };
      this.id = null;
      this.event = null;
      this.data = [];
      this.any = false;
      return frame;
    }
    if (line.charCodeAt(0) === 58 /* ":" */) return null;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* " " */) value = value.slice(1);
    if (name === "data") this.data.push(value);
    else if (name === "id") this.id = value;
    else if (name === "event") this.event = value;
    else return null; // `retry:` and unknown fields are not used by Workbench
    this.any = true;
    return null;
  }
}
