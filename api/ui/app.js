// The dashboard: login, the live list, an execution's page, the start form.
// It holds at most two streams: the changes of every execution (GET /v1/events/stream), and the
// events of the execution on screen. Everything from the daemon is shown as text.
(() => {
"use strict";

const {
  LogModel, LogView, ResumingStream, TERMINAL, $, text, progressText, renderRecord, progressShower, traceRow,
} = window.WorkbenchLog;
const PAGE_SIZE = 50;

const UNREACHABLE = "cannot reach the daemon";

const state = {
  changes: null, // the changes stream
  changeCursor: null,
  listeners: new Set(), // functions called with each change
  unreachable: false, // a request or stream found no daemon: the next stream that opens clears it
  routeFailed: false, // the page on screen could not be read: read it again once the daemon is back
  routes: 0, // pages shown so far: a late error of one since left is not shown
};
// Read when needed, not kept: another tab may have logged out and in again (new CSRF value).
const csrf = () => localStorage.getItem("workbench.csrf");

function notice(message) {
  const el = $("notice");
  el.textContent = message || "";
  el.hidden = !message;
}

class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// An error as a line for the page: the API's code and message, or that the daemon is not there.
function describe(error) {
  if (!(error instanceof ApiError)) return "error: " + error.message;
  return error.status === 0 ? error.message : error.code + ": " + error.message;
}

// fetch, with a network failure as an ApiError of status 0.
async function reach(path, options) {
  try {
    return await fetch(path, { credentials: "same-origin", ...options });
  } catch (error) {
    daemonUnreachable();
    throw new ApiError(0, "unreachable", UNREACHABLE);
  }
}

function daemonUnreachable() {
  state.unreachable = true;
  notice(UNREACHABLE + " (trying again)");
}

function daemonReached() {
  if (!state.unreachable) return;
  state.unreachable = false;
  if ($("notice").textContent.startsWith(UNREACHABLE)) notice("");
  if (state.routeFailed) route();
}

ResumingStream.on = {
  reached: daemonReached,
  unreachable: daemonUnreachable,
  unauthorized: () => showLogin("The session has ended: log in again."),
};

async function api(method, path, body) {
  const headers = {};
  if (method !== "GET") headers["X-Workbench-CSRF"] = csrf() || "";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await reach(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || { code: "internal", message: response.statusText };
    if (response.status === 401) showLogin(error.message);
    throw new ApiError(response.status, error.code, error.message);
  }
  return data;
}

// -- login ----------------------------------------------------------------------------------------

function loggedIn(session) {
  localStorage.setItem("workbench.csrf", session.csrfToken);
  localStorage.setItem("workbench.principal", session.principal);
}

function showLogin(message) {
  stopStreams();
  localStorage.removeItem("workbench.csrf");
  $("who").textContent = "";
  $("logout").hidden = true;
  $("main").replaceChildren($("login-page").content.cloneNode(true));
  $("login-error").textContent = message || "";
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = event.target.elements.token.value.trim();
    try {
      loggedIn(await login({ token }));
      route();
    } catch (error) {
      $("login-error").textContent = error.message;
    }
  });
}

async function login(body) {
  const response = await reach("/v1/login", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new ApiError(response.status, data.error.code, data.error.message);
  return data;
}

async function logout() {
  try {
    await api("POST", "/v1/logout");
  } finally {
    localStorage.removeItem("workbench.principal");
    showLogin("Logged out.");
  }
}

// -- streams --------------------------------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startChanges() {
  if (state.changes) return state.changesReady;
  const deliver = (change) => {
    state.changeCursor = change.changeId;
    for (const fn of state.listeners) fn(change);
  };
  let isReady;
  // Settled once the stream stands at a change id: every change after it is delivered.
  state.changesReady = new Promise((resolve) => { isReady = resolve; });
  state.changes = new ResumingStream(
    "/v1/events/stream",
    {
      ready: (data) => { state.changeCursor = data.changeId; isReady(); },
      created: deliver, status: deliver, progress: deliver, terminal: deliver,
    },
    () => state.changeCursor,
    { failed: (status, message) => notice(message) },
  );
  return state.changesReady;
}

let executionStream = null;

function stopStreams() {
  if (state.changes) state.changes.close();
  state.changes = null;
  state.changeCursor = null;
  if (executionStream) executionStream.close();
  executionStream = null;
  state.listeners.clear();
}

// -- the list -------------------------------------------------------------------------------------

function matches(record, filters) {
  if (filters.status && record.status !== filters.status) return false;
  if (filters.kind && record.executionKind !== filters.kind) return false;
  if (filters.sessionId && record.sessionId !== filters.sessionId) return false;
  if (filters.batchId && record.batchId !== filters.batchId) return false;
  if (filters.q) {
    const hay = [record.executionId, record.command || "", record.code || "",
      record.metadata === null ? "" : JSON.stringify(record.metadata)].join(" ").toLowerCase();
    if (!hay.includes(filters.q.toLowerCase())) return false;
  }
  return true;
}

// A row of the list; its progress is the record's (its latest progress event, kept with it).
function renderRow(tr, record) {
  const progress = record.progress;
  const link = document.createElement("a");
  link.href = "#/x/" + record.executionId;
  link.textContent = record.executionId;
  const idCell = document.createElement("td");
  idCell.appendChild(link);
  const bar = document.createElement("td");
  if (progress && progress.total) {
    const p = document.createElement("progress");
    p.max = progress.total;
    p.value = progress.progress;
    bar.appendChild(p);
  }
  bar.appendChild(text("span", progressText(progress)));
  let summary = record.command;
  if (record.items) summary = `batch of ${record.items.length} item${record.items.length === 1 ? "" : "s"}`;
  else if (summary === null) summary = record.language + ": " + (record.code || "");
  tr.replaceChildren(
    idCell,
    text("td", record.status, "status " + record.status),
    text("td", summary.length > 200 ? summary.slice(0, 200) + "…" : summary, "command"),
    text("td", record.sessionId),
    text("td", new Date(record.createdAt).toLocaleString()),
    bar,
  );
  tr.dataset.id = record.executionId;
  tr.dataset.status = record.status;
}

async function showList(params) {
  $("main").replaceChildren($("list-page").content.cloneNode(true));
  const filters = {
    status: params.get("status") || "", kind: params.get("kind") || "",
    sessionId: params.get("session") || "", q: params.get("q") || "", batchId: params.get("batch") || "",
  };
  const form = $("filters");
  form.elements.status.value = filters.status;
  form.elements.kind.value = filters.kind;
  form.elements.session.value = filters.sessionId;
  form.elements.q.value = filters.q;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = new URLSearchParams(filters.batchId ? { batch: filters.batchId } : {});
    for (const name of ["status", "kind", "session", "q"]) {
      const value = form.elements[name].value.trim();
      if (value) query.set(name, value);
    }
    location.hash = "#/" + (query.toString() ? "?" + query : "");
  });
  setUpStartForm();
  const cursors = [];
  let cursor = params.get("cursor");
  const rows = new Map();
  const tbody = $("rows");
  // Changes that come while a page is being read wait for it, then apply on top of it in their
  // order: the page may have been read before them (its rows would undo them) or after. The
  // first page is read once the changes stream stands at a change id, so none falls between.
  let loading = 1;
  const early = [];

  const load = async () => {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE) });
    for (const [k, v] of Object.entries(filters)) if (v) query.set(k, v);
    if (cursor) query.set("cursor", cursor);
    loading += 1;
    let page;
    try {
      page = await api("GET", "/v1/executions?" + query);
    } finally {
      loading -= 1;
    }
    if (!tbody.isConnected) return; // the page was left meanwhile
    rows.clear();
    const trs = page.executions.map((record) => {
      const tr = document.createElement("tr");
      renderRow(tr, record);
      rows.set(record.executionId, tr);
      return tr;
    });
    tbody.replaceChildren(...trs);
    $("next").disabled = page.nextCursor === null;
    $("prev").disabled = cursors.length === 0;
    $("page-info").textContent = "page " + (cursors.length + 1) +
      (filters.batchId ? ", the items of batch " + filters.batchId : "");
    $("next").onclick = () => { cursors.push(cursor); cursor = page.nextCursor; load(); };
    if (!loading) for (const change of early.splice(0)) apply(change);
  };
  $("prev").onclick = () => { cursor = cursors.pop() || null; load(); };
  $("first").onclick = () => { cursors.length = 0; cursor = null; load(); };

  const apply = (change) => {
    const record = change.execution;
    let tr = rows.get(record.executionId);
    if (tr && !matches(record, filters)) { // it left the filters (a `running` one that ended)
      rows.delete(record.executionId);
      tr.remove();
      return;
    }
    if (!tr) {
      // One not shown goes on the first page only, when the filters let it and it is newer than
      // the page's oldest row (or the page is not full), in its place: newest first. Not only at
      // the top: the stream sends each execution once, at its latest change, so an older one's
      // later change can come after a newer one's `created`.
      if (cursor || !matches(record, filters)) return;
      const oldest = tbody.lastElementChild ? tbody.lastElementChild.dataset.id : "";
      if (tbody.children.length >= PAGE_SIZE && record.executionId < oldest) return;
      tr = document.createElement("tr");
      rows.set(record.executionId, tr);
      let next = tbody.firstElementChild;
      while (next && next.dataset.id > record.executionId) next = next.nextElementSibling;
      tbody.insertBefore(tr, next);
      while (tbody.children.length > PAGE_SIZE) {
        const gone = tbody.lastElementChild;
        rows.delete(gone.dataset.id);
        gone.remove();
      }
    }
    renderRow(tr, record);
  };
  state.listeners.add((change) => (loading ? early.push(change) : apply(change)));
  // The page is not held up more than 2 s for a stream that is slow to come: it is read then, and
  // read again once the stream stands (what changed between the two is in the second).
  const ready = startChanges();
  const inTime = await Promise.race([ready.then(() => true), sleep(2000).then(() => false)]);
  loading -= 1;
  await load();
  if (!inTime) ready.then(() => { if (tbody.isConnected) load(); });
}

async function setUpStartForm() {
  const form = $("start-form");
  const images = await api("GET", "/v1/images").catch(() => ({ images: [] }));
  for (const image of images.images) {
    const option = text("option", image.name + (image.available ? "" : " (unavailable)"));
    option.value = image.name;
    option.disabled = !image.available;
    form.elements.image.appendChild(option);
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { command: form.elements.command.value, background: true };
    if (form.elements.image.value) body.image = form.elements.image.value;
    if (form.elements.session.value.trim()) body.sessionId = form.elements.session.value.trim();
    if (form.elements.timeout.value) body.timeoutMs = Math.round(Number(form.elements.timeout.value) * 1000);
    try {
      const record = await api("POST", "/v1/executions/workbench_bash", body);
      location.hash = "#/x/" + record.executionId;
    } catch (error) {
      $("start-error").textContent = describe(error);
    }
  });
}

// -- an execution ---------------------------------------------------------------------------------

async function showExecution(id) {
  const routed = state.routes; // a page left before its record came draws nothing after
  $("main").replaceChildren($("execution-page").content.cloneNode(true));
  // Changes are taken from before the record is read: one that comes meanwhile is not lost. The
  // record shown is the newest of those (by rowVersion); the execution's own `status` events,
  // newer than it (by lastSequence), move its status on too. Its progress is shown from the
  // record at once, then moved on by its `progress` events, never back (`progressShower`).
  let record = null;
  const showProgress = progressShower();
  const show = (r) => {
    if (record && r.rowVersion < record.rowVersion) return;
    record = r;
    renderRecord(r);
    showProgress(r.progress, r.lastSequence);
  };
  state.listeners.add((change) => {
    if (change.execution.executionId === id) show(change.execution);
  });
  startChanges();
  const first = await api("GET", "/v1/executions/" + encodeURIComponent(id));
  if (routed !== state.routes) return;
  show(first);
  const model = new LogModel();
  const view = new LogView($("log"), model);
  let lastSequence = 0;
  let outputEvents = 0;
  const trace = $("x-trace");
  const info = () => {
    if ($("log-info")) $("log-info").textContent = `${model.lines.length} lines`;
  };
  const reread = () => api("GET", "/v1/executions/" + encodeURIComponent(id)).then(show, () => {});
  const onEvent = (event) => {
    if (event.sequence !== null) {
      if (event.sequence <= lastSequence) return; // already shown: never a line twice
      lastSequence = event.sequence;
    }
    if (event.eventType === "output") {
      outputEvents++;
      model.append(event.stream, event.outputDelta);
      view.render();
      info();
      return;
    }
    if (event.eventType === "progress") showProgress(event, event.sequence);
    trace.appendChild(traceRow(event));
    if (trace.children.length > 1000) trace.firstElementChild.remove();
    if (event.eventType === "status" && event.sequence > record.lastSequence) {
      renderRecord({ ...record, status: event.status });
    }
    if (event.eventType === "status" && TERMINAL.has(event.status)) {
      stream.close();
      if (executionStream === stream) executionStream = null;
      reread();
    }
  };
  const handlers = {};
  for (const type of ["status", "output", "output_truncated", "progress", "artifact", "signal", "item", "ready",
    "input", "resize"]) handlers[type] = onEvent;
  handlers.gap = (data) => trace.appendChild(traceRow({ sequence: "", eventType: "gap", timestamp: "",
    message: `the display missed ${data.missedBytes} bytes (see the artifacts)` }));
  if (executionStream) executionStream.close();
  const stream = new ResumingStream(
    "/v1/executions/" + encodeURIComponent(id) + "/events/stream", handlers, () => lastSequence,
    { ended: reread, failed: (status, message) => notice(message) });
  executionStream = stream;
  $("show-stdout").onchange = (e) => view.setShown("stdout", e.target.checked);
  $("show-stderr").onchange = (e) => view.setShown("stderr", e.target.checked);
  $("follow").onchange = (e) => view.setFollow(e.target.checked);
  view.onFollow = (on) => { if ($("follow")) $("follow").checked = on; };
  $("cancel").onclick = () => act("cancel", { reason: $("cancel-reason").value || undefined });
  $("detach").onclick = () => act("detach");
  $("rerun").onclick = async () => {
    try {
      const again = await api("POST", `/v1/executions/${encodeURIComponent(id)}/rerun`, { background: true });
      location.hash = "#/x/" + again.executionId;
    } catch (error) {
      $("action-result").textContent = describe(error);
    }
  };

  async function act(what, body) {
    try {
      const result = await api("POST", `/v1/executions/${encodeURIComponent(id)}/${what}`, body || {});
      $("action-result").textContent = what === "cancel"
        ? (result.cancelled ? "cancelled" : "already ended: " + result.execution.status)
        : (result.detached ? "detached" : "already ended");
      if (result.execution) show(result.execution);
    } catch (error) {
      $("action-result").textContent = describe(error);
    }
  }
  window.workbench.execution = { model, view, id, lastSequence: () => lastSequence, outputEvents: () => outputEvents };
}

// -- routing --------------------------------------------------------------------------------------

async function route() {
  const hash = location.hash || "#/";
  if (hash.startsWith("#login=")) {
    history.replaceState(null, "", location.pathname + "#/"); // the code is spent: out of history
    try {
      let code;
      try {
        code = decodeURIComponent(hash.slice(7));
      } catch (error) {
        throw new Error("This login link is malformed: open the one `workbench ui` printed.");
      }
      loggedIn(await login({ code }));
    } catch (error) {
      showLogin(error.message);
      return;
    }
  }
  if (!csrf()) {
    showLogin("");
    return;
  }
  notice("");
  $("who").textContent = localStorage.getItem("workbench.principal") || "";
  $("logout").hidden = false;
  if (executionStream) executionStream.close();
  executionStream = null;
  state.listeners.clear();
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  state.routeFailed = false;
  const routed = ++state.routes;
  try {
    if (path.startsWith("/x/")) await showExecution(path.slice(3));
    else await showList(new URLSearchParams(query || ""));
  } catch (error) {
    if (routed !== state.routes) return; // a page since left
    state.routeFailed = true;
    if (error.status !== 401) notice(describe(error));
  }
}

window.workbench = {
  openStreams: () => ResumingStream.open.size,
  execution: null,
};
window.addEventListener("hashchange", route);
// Tabs share the session: a logout in another one shows the login form here too (the daemon
// ends this tab's streams as well), and a login there brings this one back to its page.
window.addEventListener("storage", (event) => {
  if (event.key !== "workbench.csrf") return;
  if (!event.newValue && !$("login-form")) showLogin("Logged out (in another tab).");
  else if (event.newValue && $("login-form")) route();
});
$("logout").addEventListener("click", logout);
route();
})();
