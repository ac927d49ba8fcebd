// The LightRAG web UI: documents, graph explorer and query playground over the HTTP API.
// Plain browser JavaScript (no build step); the graph is drawn with the vendored Cytoscape.js.
"use strict";

const KEY_STORAGE = "lightrag.apiKey";
const WORKSPACE_STORAGE = "lightrag.workspace";
const WORKSPACE_HEADER = "LIGHTRAG-WORKSPACE";
const WORKSPACE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const $ = (sel) => document.querySelector(sel);
const state = { page: 1, pageSize: 50, totalDocs: 0, cy: null, pollTimer: null, modes: [] };

// ---------------------------------------------------------------- helpers
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null) node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function banner(message, kind = "error") {
  const box = $("#banner");
  if (!message) { box.classList.add("hidden"); return; }
  box.textContent = message;
  box.className = `banner ${kind === "info" ? "info" : ""}`;
}

// every API call carries the key and the workspace chosen at the top right (both kept in
// this browser's localStorage); no workspace: the server's default one
function headers(extra = {}) {
  const key = localStorage.getItem(KEY_STORAGE);
  const workspace = localStorage.getItem(WORKSPACE_STORAGE);
  const out = key ? { ...extra, "X-API-Key": key } : { ...extra };
  if (workspace) out[WORKSPACE_HEADER] = workspace;
  return out;
}

async function api(path, options = {}) {
  const response = await fetch(path, { ...options, headers: headers(options.headers || {}) });
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail || detail; } catch (e) { /* not JSON */ }
    if (typeof detail !== "string") detail = JSON.stringify(detail);
    if (response.status === 401) detail += " (enter the API key at the top right)";
    const retry = response.headers.get("Retry-After");
    if (retry) detail += ` (retry in ${retry} s)`;
    throw new Error(`${response.status}: ${detail}`);
  }
  return response.status === 204 ? null : response.json();
}

function fmtTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleString();
}

// ---------------------------------------------------------------- tabs and key
function showPage(name) {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.page === name);
  for (const page of document.querySelectorAll(".page")) page.classList.toggle("hidden", page.id !== `page-${name}`);
  if (name === "graph") ensureGraph();
  location.hash = name;
}

function setupKey() {
  $("#api-key").value = localStorage.getItem(KEY_STORAGE) || "";
  $("#save-key").addEventListener("click", () => {
    const key = $("#api-key").value.trim();
    if (key) localStorage.setItem(KEY_STORAGE, key); else localStorage.removeItem(KEY_STORAGE);
    banner("API key saved in this browser.", "info");
    loadInfo();
    loadDocuments();
    loadWorkspaces();
  });
}

async function loadWorkspaces() {
  try {
    const data = await api("/workspaces");
    $("#workspace-list").replaceChildren(...data.workspaces.map((w) => el("option", { value: w.name })));
  } catch (e) { /* an old server or no key yet: the box still takes a name */ }
}

function setupWorkspace() {
  $("#workspace").value = localStorage.getItem(WORKSPACE_STORAGE) || "";
  const use = () => {
    const name = $("#workspace").value.trim();
    if (name && name !== "default" && !WORKSPACE_NAME.test(name)) {
      banner("A workspace name is 1 to 64 letters, digits, _ or -.");
      return;
    }
    if (name && name !== "default") localStorage.setItem(WORKSPACE_STORAGE, name);
    else localStorage.removeItem(WORKSPACE_STORAGE);
    banner(`Workspace: ${name && name !== "default" ? name : "default"}.`, "info");
    state.page = 1;
    if (state.cy) state.cy.elements().remove();
    loadInfo();
    loadDocuments();
    loadWorkspaces();
  };
  $("#use-workspace").addEventListener("click", use);
  $("#workspace").addEventListener("keydown", (e) => { if (e.key === "Enter") use(); });
  loadWorkspaces();
}

// ---------------------------------------------------------------- documents
function progressCell(doc) {
  const p = doc.progress;
  if (doc.status === "processed") return "done";
  if (!p) return doc.status === "pending" ? "queued" : "";
  const total = p.chunks_total || 0;
  const done = p.chunks_done || 0;
  const bar = el("progress", { max: total || 1, value: done });
  return el("span", {}, bar, ` ${p.stage || ""} ${total ? `${done}/${total}` : ""}`);
}

function documentRow(doc) {
  const remove = el("button", { class: "delete", onclick: () => deleteDocument(doc.id, doc.file_path) }, "Delete");
  return el("tr", { "data-id": doc.id, "data-status": doc.status },
    el("td", {}, doc.file_path || ""),
    el("td", { class: "id" }, doc.id),
    el("td", {}, el("span", { class: `status ${doc.status}` }, doc.status)),
    el("td", {}, progressCell(doc)),
    el("td", {}, doc.chunks_count ?? ""),
    el("td", {}, fmtTime(doc.updated_at)),
    el("td", { class: "error" }, doc.error_msg || ""),
    el("td", {}, remove));
}

async function loadDocuments() {
  try {
    const status = $("#status-filter").value;
    const data = await api(`/documents?page=${state.page}&page_size=${state.pageSize}${status ? `&status=${status}` : ""}`);
    state.totalDocs = data.total;
    const body = $("#doc-table tbody");
    body.replaceChildren(...data.documents.map(documentRow));
    if (!data.documents.length) body.append(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No documents yet: upload files above.")));
    const counts = Object.entries(data.counts).filter(([k]) => k !== "queued").map(([k, v]) => `${v} ${k}`);
    const all = Object.entries(data.counts).filter(([k]) => k !== "queued").reduce((n, [, v]) => n + v, 0);
    $("#doc-counts").textContent = `${all} documents${counts.length ? ": " + counts.join(", ") : ""}`;
    $("#retry-failed").classList.toggle("hidden", !data.counts.failed);
    const pages = Math.max(1, Math.ceil(data.total / state.pageSize));
    $("#page-info").textContent = `page ${state.page} of ${pages}`;
    const busy = data.documents.some((d) => d.status === "pending" || d.status === "processing") || data.counts.queued > 0;
    schedulePoll(busy ? 1000 : 0);
  } catch (e) {
    banner(`Documents: ${e.message}`);
    schedulePoll(0);
  }
}

function schedulePoll(ms) {
  clearTimeout(state.pollTimer);
  if (ms) state.pollTimer = setTimeout(loadDocuments, ms);
}

async function uploadFiles() {
  const files = $("#file-input").files;
  if (!files.length) { banner("Choose one or more files first."); return; }
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  try {
    const result = await api("/documents/upload", { method: "POST", body: form });
    banner(`Accepted ${result.doc_ids.length} document(s); processing in the background.`, "info");
    $("#file-input").value = "";
  } catch (e) { banner(`Upload: ${e.message}`); }
  loadDocuments();
}

async function insertText() {
  const text = $("#paste-text").value;
  const name = $("#paste-name").value.trim() || "pasted.txt";
  try {
    await api("/documents", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ texts: [text], file_paths: [name] }) });
    $("#paste-text").value = "";
    banner("Text accepted; processing in the background.", "info");
  } catch (e) { banner(`Insert: ${e.message}`); }
  loadDocuments();
}

async function retryFailed() {
  try {
    const result = await api("/documents/retry", { method: "POST" });
    banner(`Retrying ${result.failed} failed document(s) in the background.`, "info");
  } catch (e) { banner(`Retry: ${e.message}`); }
  loadDocuments();
}

async function deleteDocument(id, name) {
  if (!confirm(`Delete ${name || id}? Entities only it supports go with it.`)) return;
  try {
    // the id in the query string: a path segment "." or ".." is removed by the browser
    await api(`/documents?doc_id=${encodeURIComponent(id)}`, { method: "DELETE" });
    banner(`Deleted ${name || id}.`, "info");
  } catch (e) { banner(`Delete: ${e.message}`); }
  loadDocuments();
}

// ---------------------------------------------------------------- chunks
async function openChunk(chunkId, label) {
  try {
    const chunk = await api(`/chunks/${encodeURIComponent(chunkId)}`);
    $("#chunk-title").textContent = `${label ? label + " · " : ""}${chunk.file_path} · chunk ${chunk.chunk_order_index ?? ""} (${chunk.id})`;
    $("#chunk-content").textContent = chunk.content;
    $("#chunk-dialog").showModal();
  } catch (e) { banner(`Chunk: ${e.message}`); }
}

// ---------------------------------------------------------------- graph explorer
function ensureGraph() {
  if (state.cy || typeof cytoscape === "undefined") return;
  state.cy = cytoscape({
    container: $("#cy"),
    wheelSensitivity: 0.3,
    style: [
      { selector: "node", style: { label: "data(label)", "font-size": 10, "background-color": "#2f6fde",
        width: "mapData(degree, 0, 20, 14, 40)", height: "mapData(degree, 0, 20, 14, 40)",
        "text-valign": "bottom", "text-margin-y": 3, color: "#1d2433" } },
      { selector: "node.selected", style: { "background-color": "#e0662f", "border-width": 3, "border-color": "#1d2433" } },
      { selector: "edge", style: { width: "mapData(weight, 0, 10, 1, 5)", "line-color": "#aab4c6", "curve-style": "bezier" } },
    ],
  });
  state.cy.on("tap", "node", (evt) => selectEntity(evt.target.id()));
  state.cy.on("dbltap", "node", (evt) => expand(evt.target.id()));
}

function addSubgraph(kg) {
  const cy = state.cy;
  const added = [];
  for (const node of kg.nodes) {
    if (cy.getElementById(node.id).empty()) {
      added.push({ group: "nodes", data: { id: node.id, label: node.id, degree: node.properties?.degree ?? 1 } });
    }
  }
  for (const edge of kg.edges) {
    const id = `${edge.source}→${edge.target}`;
    const back = `${edge.target}→${edge.source}`;
    if (cy.getElementById(id).empty() && cy.getElementById(back).empty()) {
      added.push({ group: "edges", data: { id, source: edge.source, target: edge.target, weight: Number(edge.properties?.weight) || 1 } });
    }
  }
  cy.add(added);
  for (const n of cy.nodes()) n.data("degree", n.degree());
  cy.layout({ name: "cose", animate: false, randomize: false, nodeDimensionsIncludeLabels: true }).run();
  return added.length;
}

async function expand(name) {
  ensureGraph();
  try {
    const kg = await api(`/graph?label=${encodeURIComponent(name)}&max_depth=1&max_nodes=60`);
    addSubgraph(kg);
    state.cy.fit(undefined, 30);
    await selectEntity(name);
  } catch (e) { banner(`Graph: ${e.message}`); }
}

async function overview() {
  ensureGraph();
  try {
    state.cy.elements().remove();
    addSubgraph(await api("/graph?label=*&max_nodes=80"));
    state.cy.fit(undefined, 30);
  } catch (e) { banner(`Graph: ${e.message}`); }
}

async function searchEntities() {
  const q = $("#graph-search").value.trim();
  const list = $("#search-results");
  if (!q) { list.replaceChildren(); return; }
  try {
    const names = await api(`/graph/search?q=${encodeURIComponent(q)}&limit=15`);
    list.replaceChildren(...names.map((name) => el("li", { "data-name": name, onclick: () => expand(name) }, name)));
    if (!names.length) list.append(el("li", { class: "muted" }, `no entity matches “${q}”`));
  } catch (e) { banner(`Search: ${e.message}`); }
}

async function selectEntity(name) {
  const panel = $("#entity-detail");
  if (state.cy) {
    state.cy.nodes().removeClass("selected");
    state.cy.getElementById(name).addClass("selected");
  }
  try {
    const entity = await api(`/graph/entity/${encodeURIComponent(name)}`);
    panel.replaceChildren(
      el("h2", { id: "entity-name" }, entity.name),
      entity.entity_type ? el("span", { class: "tag" }, entity.entity_type) : null,
      el("h4", {}, "Descriptions"),
      el("ul", { class: "descriptions" }, entity.descriptions.map((d) => el("li", {}, d))),
      el("h4", {}, `Neighbours (${entity.neighbour_count ?? entity.neighbours.length})`),
      el("ul", { class: "neighbours" }, entity.neighbours.map((n) => el("li", {},
        el("span", { class: "link", onclick: () => expand(n.entity) }, n.entity),
        n.keywords ? ` · ${n.keywords}` : "",
        n.description.length ? el("div", { class: "muted" }, n.description[0]) : null))),
      el("h4", {}, `Source chunks (${entity.source_ids.length})`),
      el("ul", { class: "source-chunks" }, entity.chunks.map((c) => el("li", {},
        el("span", { class: "link chunk-link", "data-chunk": c.id, onclick: () => openChunk(c.id, entity.name) }, c.file_path),
        el("div", { class: "muted" }, c.content.slice(0, 160) + (c.content.length > 160 ? "…" : ""))))),
    );
  } catch (e) { panel.replaceChildren(el("p", { class: "muted" }, e.message)); }
}

// ---------------------------------------------------------------- query playground
async function loadInfo() {
  try {
    const info = await api("/info");
    state.modes = info.modes;
    const select = $("#mode-select");
    const current = select.value || info.query_defaults.mode || "mix";
    select.replaceChildren(...info.modes.map((m) => el("option", { value: m }, m)));
    select.value = info.modes.includes(current) ? current : info.modes[0];
    if (info.query_defaults.top_k) $("#top-k").value = info.query_defaults.top_k;
    if (info.query_defaults.chunk_top_k) $("#chunk-top-k").value = info.query_defaults.chunk_top_k;
    if (info.query_defaults.response_type) $("#response-type").value = info.query_defaults.response_type;
  } catch (e) { banner(`Server info: ${e.message}`); }
}

function showReferences(references, chunks) {
  const list = $("#references");
  list.replaceChildren(...references.map((ref) => {
    const mine = chunks.filter((c) => String(c.reference_id) === String(ref.reference_id));
    return el("li", { "data-reference": ref.reference_id }, `[${ref.reference_id}] ${ref.file_path}`,
      mine.map((c, i) => el("span", { class: "link chunk-link", "data-chunk": c.chunk_id,
        onclick: () => openChunk(c.chunk_id, `[${ref.reference_id}]`) }, `chunk ${i + 1}`)));
  }));
  if (!references.length) list.append(el("li", { class: "muted" }, "no references"));
}

let askController = null;

function stage(text) { $("#query-stage").textContent = text; }

function cancelAsk() {
  if (askController) askController.abort();
}

async function ask() {
  const query = $("#query-input").value.trim();
  if (!query) { banner("Type a question first."); return; }
  banner("");
  const body = { query, mode: $("#mode-select").value, stream: true,
    top_k: Number($("#top-k").value), chunk_top_k: Number($("#chunk-top-k").value),
    response_type: $("#response-type").value || undefined,
    only_need_context: $("#only-context").checked || undefined };
  const answer = $("#answer");
  answer.textContent = "";
  answer.classList.add("streaming");
  $("#references").replaceChildren();
  $("#ask-button").disabled = true;
  $("#cancel-button").classList.remove("hidden");
  askController = new AbortController();
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(1);
  stage("Retrieving ...");
  let firstToken = null;
  try {
    const response = await fetch("/query", { method: "POST", body: JSON.stringify(body),
      signal: askController.signal,
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }) });
    if (!response.ok) {
      let detail = response.statusText;
      try { detail = JSON.stringify((await response.json()).detail); } catch (e) { /* not JSON */ }
      throw new Error(`${response.status}: ${detail}`);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const line = block.split("\n").find((l) => l.startsWith("data: "));
        if (!line) continue;
        const event = JSON.parse(line.slice(6));
        if (event.references) {
          showReferences(event.references, event.chunks || []);
          stage(`Retrieved in ${seconds()} s; answering ...`);
        }
        if (event.response) {
          if (firstToken === null) firstToken = seconds();
          answer.textContent += event.response;
        }
        if (event.error) banner(`Answer: ${event.error}`);
        if (event.done) {
          answer.dataset.done = "true";
          stage(`Answered in ${seconds()} s` + (firstToken ? ` (first words after ${firstToken} s)` : ""));
        }
      }
    }
  } catch (e) {
    if (e.name === "AbortError") stage(`Cancelled after ${seconds()} s.`);
    else { stage(""); banner(`Query: ${e.message}`); }
  } finally {
    askController = null;
    answer.classList.remove("streaming");
    $("#ask-button").disabled = false;
    $("#cancel-button").classList.add("hidden");
  }
}

// ---------------------------------------------------------------- wiring
function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

document.addEventListener("DOMContentLoaded", () => {
  setupKey();
  setupWorkspace();
  for (const tab of document.querySelectorAll(".tab")) tab.addEventListener("click", () => showPage(tab.dataset.page));
  $("#upload-button").addEventListener("click", uploadFiles);
  $("#paste-button").addEventListener("click", insertText);
  $("#refresh-documents").addEventListener("click", loadDocuments);
  $("#retry-failed").addEventListener("click", retryFailed);
  $("#status-filter").addEventListener("change", () => { state.page = 1; loadDocuments(); });
  $("#prev-page").addEventListener("click", () => { if (state.page > 1) { state.page -= 1; loadDocuments(); } });
  $("#next-page").addEventListener("click", () => {
    if (state.page * state.pageSize < state.totalDocs) { state.page += 1; loadDocuments(); }
  });
  $("#graph-search").addEventListener("input", debounce(searchEntities, 250));
  $("#graph-search").addEventListener("keydown", (e) => {
    if (e.key === "Enter") { const first = $("#search-results li[data-name]"); if (first) expand(first.dataset.name); }
  });
  $("#graph-overview").addEventListener("click", overview);
  $("#graph-clear").addEventListener("click", () => { if (state.cy) state.cy.elements().remove(); });
  $("#ask-button").addEventListener("click", ask);
  $("#cancel-button").addEventListener("click", cancelAsk);
  $("#query-input").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) ask(); });
  $("#chunk-close").addEventListener("click", () => $("#chunk-dialog").close());
  const start = (location.hash || "#documents").slice(1);
  showPage(["documents", "graph", "query"].includes(start) ? start : "documents");
  loadInfo();
  loadDocuments();
});
