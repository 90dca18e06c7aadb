// The dashboard: login, the live list, an execution's page, the start form.
// It holds at most two streams: the changes of every execution (GET /v1/events/stream), and the
// events of the execution on screen. Everything from the daemon is shown as text.
(() => {
"use strict";

const {
  LogModel, LogView, ResumingStream, TERMINAL, $, renderRecord, progressShower, traceRow,
} = window.WorkbenchLog;

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

// The principal first: other tabs come back to their page when the CSRF value changes.
function loggedIn(session) {
  localStorage.setItem("workbench.principal", session.principal);
  localStorage.setItem("workbench.csrf", session.csrfToken);
}

function showLogin(message) {
  stopStreams();
  localStorage.removeItem("workbench.csrf");
  $("who").textContent = "";
  $("logout-error").textContent = "";
  $("logout").hidden = true;
  $("main").replaceChildren($("login-page").content.cloneNode(true));
  $("login-error").textContent = message || "";
  $("login-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const token = event.target.elements.token.value.trim();
    if (!token) {
      $("login-error").textContent = "Paste a token first: the daemon wrote it to the token file of its data dir.";
      return;
    }
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

// A logout the daemon did not answer is not one: the session stays, and the page says so.
async function logout() {
  $("logout-error").textContent = "";
  try {
    await api("POST", "/v1/logout");
  } catch (error) {
    if (error.status !== 401) {
      $("logout-error").textContent = "not logged out: " + describe(error);
      return;
    }
  }
  localStorage.removeItem("workbench.principal");
  showLogin("Logged out.");
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

const { showList } = window.WorkbenchList({ api, describe, startChanges, state, sleep });

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
    if (routed !== state.routes) return; // a read of a page since left (its end's reread) draws nothing
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
  const note = (message) => { model.note(message); view.render(); info(); };
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
    if (event.eventType === "output_truncated") {
      note("[... the journal's output budget is spent here: what follows is shown live only, " +
        "and the artifacts keep every byte ...]");
    }
    if (event.eventType === "progress") showProgress(event, event.sequence);
    if (event.eventType === "item" && event.item && record.items && event.sequence > record.lastSequence) {
      const moved = event.item; // a batch's item moved on since its record was read
      record = { ...record, items: record.items.map((i) => (i.executionId === moved.executionId ? moved : i)) };
      renderRecord(record);
    }
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
  handlers.gap = (data) => {
    note(`[... ${data.missedBytes} bytes not shown here: the artifacts keep every byte ...]`);
    trace.appendChild(traceRow({ sequence: "", eventType: "gap", timestamp: "",
      message: `the display missed ${data.missedBytes} bytes (see the artifacts)` }));
  };
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
      else if (result.detached && routed === state.routes) $("detach").disabled = true; // its record comes later
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
