// The log of an execution: its lines (stdout and stderr apart), a virtualised view that keeps
// only the visible lines in the document, ANSI colours, and streams that resume where they broke;
// and the rest of an execution's page (its record, progress, items, events).
// Output is only ever put into the page as text (textContent), never as markup.
(() => {
"use strict";

const LINE_HEIGHT = 18;
const OVERSCAN = 20;
const BLOCK = 64;
const SGR = /\x1b\[([0-9;]*)m/g;
// A colour code, or an erase in the line (`ESC[K`: to its end; `ESC[1K`: to its start; `ESC[2K`: all).
const DRAWN = /\x1b\[([0-9;]*)m|\x1b\[([012]?)K/g;
// Other escape sequences (cursor moves, other erases, titles) are dropped from what is shown.
const OTHER_ESCAPES = /\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b\[(?![012]?K)[0-9;?]*[A-Za-ln-z]|\x1b[()][A-Z0-9]|\x1b[=>]/g;

class LogModel {
  constructor() {
    this.lines = []; // {s: "stdout" | "stderr", t: text}
    this.open = { stdout: -1, stderr: -1 }; // the unfinished last line of each stream
    this.latest = { stdout: -1, stderr: -1 }; // the last line of each stream
    this.chunks = { stdout: [], stderr: [] };
  }

  append(stream, delta) {
    if (!delta) return;
    const s = stream === "stderr" ? "stderr" : "stdout";
    this.chunks[s].push(delta);
    const parts = delta.split("\n");
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      const last = i === parts.length - 1;
      if (i === 0 && this.open[s] >= 0) {
        const line = this.lines[this.open[s]];
        line.t = overwritten(line.t + part);
        if (!last) this.open[s] = -1;
        continue;
      }
      if (last && part === "") {
        this.open[s] = -1;
        break;
      }
      // A line starts in the colours the stream's previous line ended in.
      const before = this.lines[this.latest[s]];
      this.lines.push({ s, t: part, st: before ? sgrEnd(before) : null });
      this.latest[s] = this.lines.length - 1;
      this.open[s] = last ? this.latest[s] : -1;
    }
  }

  // A line of the page's own (a gap in what was shown, the end of the journal's budget): it ends
  // the streams' open lines, so that text never joins across it.
  note(message) {
    this.open = { stdout: -1, stderr: -1 };
    this.lines.push({ s: "note", t: message, st: null });
  }

  text(stream) {
    const joined = this.chunks[stream].join("");
    this.chunks[stream] = joined ? [joined] : [];
    return joined;
  }
}

// A long line of carriage returns without escapes (a progress bar that never ends its line) as a
// terminal shows it, its cursor where it was: drawn again at every output event, the text of
// every update it ever had made the page redraw megabytes at each.
function overwritten(t) {
  if (t.length < 1024 || t.indexOf("\r") < 0 || t.indexOf("\x1b") >= 0) return t;
  const cells = [];
  let column = 0;
  for (const ch of t) {
    if (ch === "\r") column = 0;
    else cells[column++] = ch;
  }
  const shown = cells.join("");
  return column < cells.length ? shown + "\r" + cells.slice(0, column).join("") : shown;
}

// Colours and styles of SGR codes, as classes (never as inline styles or markup).
function sgrClasses(state, codes) {
  const list = codes === "" ? [0] : codes.split(";").map((c) => parseInt(c, 10) || 0);
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === 0) { state.fg = null; state.bg = null; state.bold = false; state.underline = false; }
    else if (c === 1) state.bold = true;
    else if (c === 4) state.underline = true;
    else if (c === 22) state.bold = false;
    else if (c === 24) state.underline = false;
    else if (c >= 30 && c <= 37) state.fg = c - 30;
    else if (c >= 90 && c <= 97) state.fg = c - 90 + 8;
    else if (c === 39) state.fg = null;
    else if (c >= 40 && c <= 47) state.bg = c - 40;
    else if (c >= 100 && c <= 107) state.bg = c - 100 + 8;
    else if (c === 49) state.bg = null;
    else if ((c === 38 || c === 48) && list[i + 1] === 5) {
      const n = list[i + 2] & 255;
      if (c === 38) state.fg = n < 16 ? n : null; else state.bg = n < 16 ? n : null;
      i += 2;
    } else if ((c === 38 || c === 48) && list[i + 1] === 2) i += 4;
  }
}

function plainState(state) {
  return state.fg === null && state.bg === null && !state.bold && !state.underline;
}

// The SGR state a line ends in (null: none), from the one it starts in.
function sgrEnd(line) {
  if (line.t.indexOf("\x1b[") < 0) return line.st;
  const state = Object.assign({ fg: null, bg: null, bold: false, underline: false }, line.st);
  SGR.lastIndex = 0;
  let match;
  while ((match = SGR.exec(line.t)) !== null) sgrClasses(state, match[1]);
  return plainState(state) ? null : state;
}

function classesOf(state) {
  const classes = [];
  if (state.fg !== null) classes.push("fg" + state.fg);
  if (state.bg !== null) classes.push("bg" + state.bg);
  if (state.bold) classes.push("bold");
  if (state.underline) classes.push("underline");
  return classes.join(" ");
}

// One line as a <div> of text spans, drawn as a terminal would: a carriage return goes back to
// column 0, what follows it overwrites the line from there, and an erase in the line blanks it.
function renderLine(line) {
  const div = document.createElement("div");
  div.className = "line " + line.s;
  const text = line.t.replace(OTHER_ESCAPES, "");
  if (!line.st && text.indexOf("\x1b[") < 0 && text.indexOf("\r") < 0) {
    div.textContent = text;
    return div;
  }
  const state = Object.assign({ fg: null, bg: null, bold: false, underline: false }, line.st);
  const cells = []; // [character, classes] per column
  let column = 0;
  let classes = classesOf(state);
  const put = (piece) => {
    for (const ch of piece) {
      if (ch === "\r") column = 0;
      else cells[column++] = [ch, classes];
    }
  };
  const erase = (mode) => {
    if (mode === "1") for (let i = 0; i <= column && i < cells.length; i++) cells[i] = [" ", classes];
    else if (mode === "2") {
      cells.length = column;
      for (let i = 0; i < column; i++) cells[i] = [" ", classes];
    }
    else cells.length = Math.min(cells.length, column);
  };
  DRAWN.lastIndex = 0;
  let at = 0;
  let match;
  while ((match = DRAWN.exec(text)) !== null) {
    put(text.slice(at, match.index));
    if (match[2] !== undefined) erase(match[2]);
    else {
      sgrClasses(state, match[1]);
      classes = classesOf(state);
    }
    at = DRAWN.lastIndex;
  }
  put(text.slice(at));
  let run = "";
  let runClasses = null;
  const emit = () => {
    if (!run) return;
    const span = document.createElement("span");
    span.className = runClasses;
    span.textContent = run;
    div.appendChild(span);
    run = "";
  };
  for (const [ch, c] of cells) {
    if (c !== runClasses) { emit(); runClasses = c; }
    run += ch;
  }
  emit();
  return div;
}

class LogView {
  constructor(container, model) {
    this.container = container;
    this.model = model;
    this.show = { stdout: true, stderr: true, note: true };
    this.follow = true; // the view keeps to the end as lines come
    this.held = false; // following was turned off (not by scrolling): scrolling does not resume it
    this.onFollow = null; // called with `follow` when scrolling changes it
    this.spacer = document.createElement("div");
    this.spacer.className = "spacer";
    this.window = document.createElement("div");
    this.window.className = "window";
    container.replaceChildren(this.spacer, this.window);
    this.shown = [];
    this.filtered = null; // indexes of shown lines when a stream is hidden
    // Scrolling up with the wheel stops following at once: the scroll event it makes may come
    // merged with one of the view's own (following the end), and be taken for it.
    container.addEventListener("wheel", (event) => {
      if (event.deltaY >= 0 || !this.follow || container.scrollHeight <= container.clientHeight) return;
      this.follow = false;
      if (this.onFollow) this.onFollow(false);
    }, { passive: true });
    container.addEventListener("scroll", () => {
      const bottom = container.scrollTop + container.clientHeight >= container.scrollHeight - LINE_HEIGHT;
      if (!this.programmatic && this.follow !== (bottom && !this.held)) {
        this.follow = bottom && !this.held;
        if (this.onFollow) this.onFollow(this.follow);
      }
      this.programmatic = false;
      this.render();
    });
  }

  setFollow(on) {
    this.follow = on;
    this.held = !on;
    this.render();
  }

  setShown(stream, on) {
    this.show[stream] = on;
    this.filtered = null;
    this.first = -1;
    this.render();
  }

  visibleIndexes() {
    const lines = this.model.lines;
    if (this.show.stdout && this.show.stderr) return null;
    if (this.filtered === null || this.filteredUpTo !== lines.length) {
      const from = this.filtered === null ? 0 : this.filteredUpTo;
      const out = this.filtered || [];
      for (let i = from; i < lines.length; i++) if (this.show[lines[i].s]) out.push(i);
      this.filtered = out;
      this.filteredUpTo = lines.length;
    }
    return this.filtered;
  }

  // Renders the visible window: the lines in view, and a spacer as tall as all of them.
  render() {
    const indexes = this.visibleIndexes();
    const count = indexes === null ? this.model.lines.length : indexes.length;
    this.spacer.style.height = count * LINE_HEIGHT + "px";
    const c = this.container;
    if (this.follow) {
      const target = Math.max(0, count * LINE_HEIGHT - c.clientHeight);
      if (Math.abs(c.scrollTop - target) > 1) {
        this.programmatic = true;
        c.scrollTop = target;
      }
    }
    // The window starts on a multiple of BLOCK lines, so that following the end mostly appends
    // a line to it instead of rebuilding it.
    const top = Math.floor(c.scrollTop / LINE_HEIGHT);
    const first = Math.max(0, (Math.floor(top / BLOCK) - 1) * BLOCK);
    const last = Math.min(count, top + Math.ceil(c.clientHeight / LINE_HEIGHT) + OVERSCAN);
    if (first !== this.first || indexes !== this.lastIndexes) {
      this.first = first;
      this.lastIndexes = indexes;
      this.nodes = [];
      this.window.replaceChildren();
      this.window.style.top = first * LINE_HEIGHT + "px";
    }
    const nodes = this.nodes;
    for (let i = first; i < last; i++) {
      const line = this.model.lines[indexes === null ? i : indexes[i]];
      const at = i - first;
      const node = nodes[at];
      if (node && node.wbLine === line && node.wbText === line.t) continue;
      const fresh = renderLine(line);
      fresh.wbLine = line;
      fresh.wbText = line.t;
      if (node) node.replaceWith(fresh); else this.window.appendChild(fresh);
      nodes[at] = fresh;
    }
    while (nodes.length > last - first) nodes.pop().remove();
  }
}

// An EventSource that resumes after `cursor()` once it breaks. An error tells neither what the
// daemon answered nor whether it answered: a stream that failed before it opened is asked again
// with fetch. A 204 (nothing more will come) calls `hooks.ended`; a 401 `ResumingStream.on.
// unauthorized`; another refusal `hooks.failed(status, message)`; these end the stream. No answer
// at all calls `ResumingStream.on.unreachable` and tries again, `on.reached` once one opens.
class ResumingStream {
  constructor(url, handlers, cursor, hooks) {
    this.url = url;
    this.handlers = handlers;
    this.cursor = cursor;
    this.hooks = hooks || {};
    this.closed = false;
    this.delay = 100;
    ResumingStream.open.add(this);
    this.connect();
  }

  connect() {
    if (this.closed) return;
    const after = this.cursor();
    const sep = this.url.includes("?") ? "&" : "?";
    const url = after === null ? this.url : this.url + sep + "after=" + encodeURIComponent(after);
    const source = new EventSource(url);
    this.source = source;
    let opened = false;
    source.onopen = () => {
      opened = true;
      ResumingStream.on.reached();
    };
    for (const [type, fn] of Object.entries(this.handlers)) {
      source.addEventListener(type, (event) => {
        this.delay = 100;
        fn(event.data ? JSON.parse(event.data) : null, event);
      });
    }
    source.onerror = () => {
      source.close();
      if (this.source !== source || this.closed) return;
      this.source = null;
      if (opened) this.retry();
      else this.ask(url);
    };
  }

  retry() {
    setTimeout(() => this.connect(), this.delay);
    this.delay = Math.min(this.delay * 2, 2000);
  }

  // What the daemon answers the stream's request, read as far as its status (and error body).
  async ask(url) {
    let status = 0;
    let message = "";
    const abort = new AbortController();
    try {
      const response = await fetch(url, { credentials: "same-origin", signal: abort.signal });
      status = response.status;
      if (status !== 200 && status !== 204) {
        const data = await response.json().catch(() => null);
        message = data && data.error ? data.error.code + ": " + data.error.message : response.statusText;
      }
    } catch (error) {
      status = 0;
    }
    abort.abort();
    if (this.closed) return;
    if (status === 0) ResumingStream.on.unreachable();
    else ResumingStream.on.reached();
    if (status === 204 || status === 401 || (status >= 400 && status < 500 && status !== 429)) {
      this.close();
      if (status === 204) { if (this.hooks.ended) this.hooks.ended(); }
      else if (status === 401) ResumingStream.on.unauthorized();
      else if (this.hooks.failed) this.hooks.failed(status, message);
      return;
    }
    this.retry();
  }

  close() {
    this.closed = true;
    ResumingStream.open.delete(this);
    if (this.source) this.source.close();
    this.source = null;
  }
}
ResumingStream.open = new Set();
ResumingStream.on = { reached: () => {}, unreachable: () => {}, unauthorized: () => {} };

// -- an execution's record ------------------------------------------------------------------------

const TERMINAL = new Set(["completed", "failed", "cancelled", "timed_out", "partial_failed"]);
const $ = (id) => document.getElementById(id);

function text(tag, value, className) {
  const el = document.createElement(tag);
  el.textContent = value === null || value === undefined ? "" : String(value);
  if (className) el.className = className;
  return el;
}

function progressText(progress) {
  if (!progress || progress.progress === null || progress.progress === undefined) return "";
  if (progress.total) return Math.round((100 * progress.progress) / progress.total) + "%";
  return String(progress.progress);
}

const itemText = (item) => item.executionId + " " + item.status +
  (item.exitCode !== null && item.exitCode !== undefined ? " exit " + item.exitCode : "");

const RECORD_FIELDS = [
  ["Kind", (r) => r.executionKind], ["Session", (r) => r.sessionId], ["Image", (r) => r.image],
  ["Working directory", (r) => r.cwd], ["Command", (r) => r.command], ["Language", (r) => r.language],
  ["Code", (r) => r.code], ["Metadata", (r) => (r.metadata === null ? null : JSON.stringify(r.metadata, null, 2))],
  ["Context", (r) => r.contextId], ["Batch", (r) => r.batchId], ["Concurrency", (r) => r.concurrency],
  ["Fail fast", (r) => (r.failFast ? "yes" : null)],
  ["Created", (r) => r.createdAt], ["Started", (r) => r.startedAt], ["Finished", (r) => r.finishedAt],
  ["Deadline", (r) => r.deadlineAt], ["Exit code", (r) => r.exitCode], ["Signal", (r) => r.signal],
  ["Result", (r) => (r.result ? r.result["text/plain"] : null)],
  ["Error", (r) => (r.error ? r.error.code + ": " + r.error.message : null)],
  ["Traceback", (r) => (r.error && r.error.traceback ? r.error.traceback : null)],
  ["Cancel reason", (r) => r.cancelReason], ["Detached", (r) => (r.detached ? "yes" : null)],
  ["Containment", (r) => r.containment],
  ["Output", (r) => `${r.output.stdoutBytes} bytes stdout, ${r.output.stderrBytes} bytes stderr` +
    (r.output.truncated ? " (events truncated: see the artifacts)" : "")],
];

function renderRecord(record) {
  if (!$("x-id") || ($("x-id").textContent && $("x-id").textContent !== record.executionId)) return;
  $("x-id").textContent = record.executionId;
  const status = $("x-status");
  status.textContent = record.status;
  status.className = "status " + record.status;
  const items = [];
  for (const [label, get] of RECORD_FIELDS) {
    const value = get(record);
    if (value === null || value === undefined) continue;
    items.push(text("dt", label));
    const dd = document.createElement("dd");
    dd.appendChild(text(String(value).includes("\n") ? "pre" : "span", value));
    items.push(dd);
  }
  $("x-record").replaceChildren(...items);
  const artifacts = record.artifacts.map((a) => {
    const li = document.createElement("li");
    const link = text("a", a.name);
    link.href = `/v1/executions/${record.executionId}/artifacts/${encodeURIComponent(a.name)}`;
    link.setAttribute("download", a.name);
    li.append(link, text("span", ` ${a.sizeBytes} bytes, sha256 ${a.sha256}`));
    return li;
  });
  $("x-artifacts").replaceChildren(...(artifacts.length ? artifacts : [text("li", "none")]));
  renderItems(record);
  const ended = TERMINAL.has(record.status);
  $("cancel").disabled = ended;
  $("detach").disabled = ended || record.detached;
}

// A batch's items, each a link to its page; and a link to the list of them (`?batchId=`).
function renderItems(record) {
  $("x-batch").hidden = !record.items;
  if (!record.items) return;
  $("x-items").replaceChildren(...record.items.map((item) => {
    const li = document.createElement("li");
    const link = text("a", item.executionId);
    link.href = "#/x/" + item.executionId;
    li.append(link, text("span", " " + itemText(item).slice(item.executionId.length + 1),
      "status " + item.status));
    return li;
  }));
  $("x-items-list").href = "#/?batch=" + encodeURIComponent(record.executionId);
}

// What an execution's page shows of its progress: a record's (as of its lastSequence) or a
// `progress` event's (as of its sequence), never one older than what it shows: its record and its
// events come by two streams, not ordered with each other.
function progressShower() {
  let at = 0;
  return (progress, sequence) => {
    if (sequence < at) return;
    at = sequence;
    renderProgress(progress);
  };
}

function renderProgress(progress) {
  const bar = $("x-progress");
  if (!bar || !progress || progress.progress === null) return;
  bar.hidden = false;
  if (progress.total) {
    bar.max = progress.total;
    bar.value = progress.progress;
  } else bar.removeAttribute("value");
  $("x-progress-text").textContent = progressText(progress) + (progress.message ? " " + progress.message : "");
}

function traceRow(event) {
  const tr = document.createElement("tr");
  let detail = "";
  if (event.eventType === "status") {
    detail = event.status + (event.exitCode !== null && event.exitCode !== undefined ? " exit " + event.exitCode : "") +
      (event.signal ? " " + event.signal : "") + (event.error ? " " + event.error.code : "");
  } else if (event.eventType === "progress") {
    detail = progressText(event) + (event.message ? " " + event.message : "");
  } else if (event.eventType === "item" && event.item) detail = itemText(event.item);
  else detail = event.message || event.stream || event.signal || "";
  tr.append(text("td", event.sequence), text("td", event.eventType), text("td", event.timestamp), text("td", detail));
  return tr;
}

window.WorkbenchLog = {
  LogModel, LogView, ResumingStream, renderLine,
  TERMINAL, $, text, progressText, renderRecord, progressShower, traceRow,
};
})();
