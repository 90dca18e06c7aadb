// The dashboard's list: its rows kept up to date from the changes stream, its filters and pages,
// and the start form. `window.WorkbenchList(app)` makes its `showList` from what the rest of the
// dashboard (app.js) shares with it.
(() => {
"use strict";

const { $, text, progressText } = window.WorkbenchLog;
const PAGE_SIZE = 50;

window.WorkbenchList = ({ api, describe, startChanges, state, sleep }) => {

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
    // The next page begins after the last row shown: rows that came live since the page was read
    // pushed others down, off this page, and onto the next one.
    $("next").onclick = () => {
      cursors.push(cursor);
      cursor = tbody.lastElementChild ? tbody.lastElementChild.dataset.id : page.nextCursor;
      load();
    };
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
        $("next").disabled = false; // it is on the next page now
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

return { showList };
};
})();
