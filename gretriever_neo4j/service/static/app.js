// The gqa web page: ask, watch the answer stream in, see each answer with the chain of nodes and relations it
// rests on. The drawing shows the evidence by default (the named entities, the answers and the paths between
// them, laid out in layers from the question's entities to the answers); the whole subgraph is one click away.
"use strict";

const $ = (id) => document.getElementById(id);
const token = (() => {  // a token given once as #token=… is kept for this tab and removed from the address bar
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    sessionStorage.setItem("gqa-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem("gqa-token");
})();
const headers = (extra = {}) => (token ? { ...extra, Authorization: `Bearer ${token}` } : extra);

let cy = null;
const stream = { tokens: 0, events: [] };  // what the last answer streamed (read by the browser test)
window.gqaStream = stream;

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
}

async function loadGraphs() {
  try {
    const response = await fetch("/api/graphs", { headers: headers() });
    if (!response.ok) return;
    const { graphs } = await response.json();
    for (const info of graphs) {
      if (info.kind !== "kg") continue;
      const known = [...$("graph").options].find((o) => o.value === info.graph);
      if (known) known.remove();  // the one a shared address named: replaced by its described entry
      const option = document.createElement("option");
      option.value = info.graph;
      const trained = info.models && info.models.parts ? `; trained: ${info.models.parts.join(", ")}` : "";
      const source = info.source ? `; from ${info.source}` : "";  // where its last ingest read it
      option.textContent = `${info.graph} (${info.nodes.toLocaleString()} nodes${source}${trained})`;
      if (info.source) option.title = info.source_query ? `${info.source}: ${info.source_query}` : info.source;
      $("graph").appendChild(option);
    }
    if (wanted) $("graph").value = wanted;
  } catch (error) { /* the page still works without the list */ }
}

const MAX_DRAWN_ANSWERS = 12;  // the evidence drawing stays legible; the list says how many more there are
const MAX_LISTED_ANSWERS = 20;
const current = { retrieval: null, answer: null, view: "evidence" };
window.gqaView = current;

const edgeKey = (src, text, dst) => `${src}|${text}|${dst}`;

// The nodes and edges of the evidence: named entities, the first answers and the paths between them.
function evidenceSubset(retrieval, answer) {
  const index = new Map(retrieval.edges.map((e, i) => [edgeKey(e.src, e.text, e.dst), i]));
  const nodes = new Set(answer.anchors || []);
  const edges = new Set();
  const drawn = (answer.nodes || []).slice(0, MAX_DRAWN_ANSWERS);
  for (const node of drawn) {
    nodes.add(node.id);
    for (const path of node.evidence_paths || []) {
      path.nodes.forEach((id) => nodes.add(id));
      for (const [src, text, dst] of path.edges) {
        const i = index.get(edgeKey(src, text, dst));
        if (i !== undefined) edges.add(i);
      }
    }
  }
  return { nodes, edges, hidden: Math.max((answer.nodes || []).length - drawn.length, 0) };
}

function drawGraph(retrieval, subset = null) {
  const elements = [];
  for (const node of retrieval.nodes) {
    if (subset && !subset.nodes.has(node.id)) continue;
    elements.push({ data: { id: `n${node.id}`, label: node.text, nid: node.id } });
  }
  retrieval.edges.forEach((edge, i) => {
    if (subset && !subset.edges.has(i)) return;
    elements.push({ data: { id: `e${i}`, source: `n${edge.src}`, target: `n${edge.dst}`, label: edge.text,
                            pair: `${edge.src}-${edge.dst}` } });
  });
  if (cy) cy.destroy();
  const evidence = subset !== null;
  cy = cytoscape({
    container: $("graph-view"),
    elements,
    style: [
      { selector: "node", style: { label: "data(label)", "background-color": "#9aa5b5", color: "#1d2430",
                                   "font-size": evidence ? 14 : 12, "text-wrap": "ellipsis",
                                   "text-max-width": evidence ? 200 : 160, width: 18, height: 18,
                                   "text-valign": "bottom", "text-margin-y": 4,
                                   "text-background-color": "#f6f7f9", "text-background-opacity": 0.85 } },
      { selector: "edge", style: { label: "data(label)", "curve-style": "bezier", "target-arrow-shape": "triangle",
                                   width: 1.4, "line-color": "#b8c0cc", "target-arrow-color": "#b8c0cc",
                                   "font-size": evidence ? 11 : 8, color: "#4a5466", "text-rotation": "autorotate",
                                   "text-background-color": "#f6f7f9", "text-background-opacity": 0.9 } },
      { selector: "node.anchor", style: { "background-color": "#3a7bd5", width: 24, height: 24 } },
      { selector: "node.answer", style: { "background-color": "#e8a33d", width: 28, height: 28,
                                          "font-weight": "bold" } },
      { selector: "edge.cited", style: { "line-color": "#c2410c", "target-arrow-color": "#c2410c", width: 3 } },
      { selector: "node:selected", style: { "border-width": 3, "border-color": "#1d2430" } },
    ],
    layout: { name: retrieval.nodes.length > 60 ? "concentric" : "cose", animate: false, padding: 40 },
    maxZoom: 1.4, minZoom: 0.1,
  });
  cy.on("tap mouseover", "node", (event) => showNode(event.target.data("nid")));
  cy.fit(undefined, 40);
  window.gqaGraph = cy;  // for tests and the curious
  document.dispatchEvent(new CustomEvent("gqa:drawn", { detail: cy }));  // feedback.js picks answers in it
}

// A node's text and every edge it has in the retrieved subgraph.
function showNode(id) {
  const retrieval = current.retrieval;
  if (!retrieval) return;
  const text = new Map(retrieval.nodes.map((n) => [n.id, n.text]));
  const box = $("node-info");
  const title = document.createElement("h3");
  title.textContent = text.get(id) ?? `node ${id}`;
  const list = document.createElement("ul");
  for (const edge of retrieval.edges) {
    if (edge.src !== id && edge.dst !== id) continue;
    const item = document.createElement("li");
    item.textContent = `${text.get(edge.src)} — ${edge.text} → ${text.get(edge.dst)}`;
    list.appendChild(item);
  }
  box.replaceChildren(title, list);
  box.hidden = false;
}

function render() {
  const { retrieval, answer } = current;
  if (!retrieval) return;
  const toggle = $("view-toggle");
  const subset = answer && current.view === "evidence" ? evidenceSubset(retrieval, answer) : null;
  const useEvidence = subset && subset.nodes.size > 0;
  drawGraph(retrieval, useEvidence ? subset : null);
  toggle.hidden = !answer || !(answer.nodes || []).length;
  toggle.setAttribute("aria-pressed", String(!useEvidence));
  toggle.textContent = useEvidence ? `Show the whole subgraph (${retrieval.nodes.length} nodes)` :
    "Show only the evidence";
  $("view-note").textContent = useEvidence && subset.hidden ? `and ${subset.hidden} more answers, in the list` : "";
  if (answer) highlight(answer, useEvidence);
}

function highlight(answer, layered) {
  if (!cy) return;
  for (const id of answer.anchors || []) cy.$id(`n${id}`).addClass("anchor");
  for (const node of answer.nodes || []) cy.$id(`n${node.id}`).addClass("answer");
  const cited = new Set((answer.citations?.edges || []).flatMap(([a, b]) => [`${a}-${b}`, `${b}-${a}`]));
  cy.edges().forEach((edge) => { if (layered || cited.has(edge.data("pair"))) edge.addClass("cited"); });
  const roots = cy.nodes(".anchor");
  if (layered && roots.length) {  // in layers from the question's entities (left) to the answers (right)
    cy.layout({ name: "breadthfirst", roots, directed: false, animate: false, padding: 40, spacingFactor: 1 }).run();
    // Breadth-first stacks a layer side by side; turned on its side, each node of a layer has a line of its own,
    // so the labels (to the right of their nodes) never run into each other.
    const layers = new Map();
    cy.nodes().forEach((node) => {
      const key = Math.round(node.position("y"));
      if (!layers.has(key)) layers.set(key, []);
      layers.get(key).push(node);
    });
    [...layers.keys()].sort((a, b) => a - b).forEach((key, depth) => {
      const nodes = layers.get(key).sort((a, b) => a.position("x") - b.position("x"));
      nodes.forEach((node, i) => node.position({ x: depth * 300, y: (i - (nodes.length - 1) / 2) * 34 }));
    });
    cy.nodes().style({ "text-halign": "right", "text-valign": "center", "text-margin-x": 6, "text-margin-y": 0 });
    cy.edges().style({ "text-rotation": "none" });
  } else {  // what the question names in the middle, its answers around it, the rest outside
    cy.layout({ name: "concentric", animate: false, padding: 40, minNodeSpacing: 90, levelWidth: () => 1,
                concentric: (node) => (node.hasClass("anchor") ? 3 : node.hasClass("answer") ? 2 : 1) }).run();
  }
  cy.fit(undefined, 40);
}

function showRetrieval(retrieval) {
  current.retrieval = retrieval;
  current.answer = null;
  render();
  const browser = $("browser");
  browser.href = retrieval.browser_url || "#";
  browser.hidden = !retrieval.browser_url;
  $("cypher").textContent = retrieval.browser_statement || "";
  $("cypher-box").hidden = !retrieval.browser_statement;
  const ms = Math.round(retrieval.timings_ms?.total || 0);
  status(`Retrieved ${retrieval.nodes.length} nodes and ${retrieval.edges.length} edges from ${retrieval.graph} ` +
         `in ${ms} ms (${retrieval.retriever_model}). Answering…`);
}

function answerItem(node) {
  const item = document.createElement("li");
  item.dataset.key = node.key;  // what feedback on this answer names (feedback.js)
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = node.text;
  item.appendChild(name);
  // the answer's calibrated confidence says how sure it is (showSureness); a node's own walk score is shown only
  // where there is none, as it is 1.00 for every end node of the best walk, right or wrong
  if (node.probability != null && (current.answer == null || current.answer.confidence == null)) {
    const p = document.createElement("span");
    p.className = "walk";
    p.textContent = `  p=${node.probability.toFixed(2)}`;
    item.appendChild(p);
  }
  for (const path of (node.evidence_paths || []).slice(0, 2)) {
    const line = document.createElement("span");
    line.className = "evidence";
    line.textContent = path.text;
    item.appendChild(line);
  }
  return item;
}

// How sure the answer is: its confidence as a percentage, and an "unsure" or a "sure" badge where the answer is
// either; nothing where none was estimated.
function showSureness(answer) {
  const confidence = answer ? answer.confidence : null;
  const unsure = Boolean(answer && answer.unsure);
  $("confidence").textContent = confidence != null ? `${Math.round(confidence * 100)}% sure` : "";
  $("unsure-badge").hidden = !unsure;
  $("sure-badge").hidden = unsure || !(answer && answer.sure);
  $("sureness").hidden = confidence == null && !unsure;
  $("sureness").className = unsure ? "unsure" : "";
}

function showAnswer(answer) {
  current.answer = answer;
  const nodes = answer.nodes || [];
  $("answer-title").textContent = nodes.length ? `${nodes.length} answer${nodes.length === 1 ? "" : "s"}` : "Answer";
  showSureness(answer);
  $("answer").textContent = nodes.length ? "" : (answer.text || "(no answer)");
  const list = $("answer-nodes");
  list.replaceChildren(...nodes.slice(0, MAX_LISTED_ANSWERS).map(answerItem));
  const more = $("more-answers");
  more.hidden = nodes.length <= MAX_LISTED_ANSWERS;
  more.textContent = `Show ${nodes.length - MAX_LISTED_ANSWERS} more`;
  more.onclick = () => { list.replaceChildren(...nodes.map(answerItem)); more.hidden = true; };
  $("models").textContent = Object.entries(answer.models || {}).map(([k, v]) => `${k}: ${v}`).join(" · ");
  const c = answer.citations;
  $("citations").textContent = c ? `cites nodes ${c.nodes.join(", ") || "none"}; ` +
    `${c.all_valid ? "all citations valid" : "invalid: " + [...c.invalid_nodes, ...c.invalid_edges].join(", ")}` : "";
  current.view = "evidence";
  render();
  status(`Answered in ${Math.round(answer.seconds * 1000)} ms (${answer.mode}).`);
  document.dispatchEvent(new CustomEvent("gqa:answer", { detail: answer }));  // feedback.js offers its buttons
  checkModels();
}

// What `gqa train` trained for each graph (GET /ready: graph -> its models' `created` stamp), looked at now and then
// and after each answer: a training run while the page is open says so, as the next answer uses the new models.
const MODELS_POLL_MS = 10_000;
const models = { seen: null, updated: [] };  // read by the browser test
window.gqaModels = models;

async function checkModels() {
  try {
    const response = await fetch("/ready", { headers: headers() });
    if (!response.ok) return;
    const now = (await response.json()).models || {};
    const graph = (current.retrieval && current.retrieval.graph) || $("graph").value;
    if (models.seen !== null && graph && now[graph] && now[graph] !== models.seen[graph]) {
      models.updated.push({ graph, created: now[graph] });
      $("models-note").textContent = `Models updated: gqa train wrote new models for ${graph} ` +
        `(${now[graph]}); the next answer uses them.`;
      $("models-note").hidden = false;
    }
    models.seen = now;
  } catch (error) { /* the next look may find the server */ }
}

// The last questions, kept in this browser; each opens again by its address (?q=…&graph=…).
const HISTORY = "gqa-history";
function remember(question, graph) {
  const past = JSON.parse(localStorage.getItem(HISTORY) || "[]").filter((h) => h.q !== question || h.graph !== graph);
  past.unshift({ q: question, graph });
  localStorage.setItem(HISTORY, JSON.stringify(past.slice(0, 10)));
  showHistory();
}

function addressOf(question, graph) {
  const params = new URLSearchParams({ q: question });
  if (graph) params.set("graph", graph);
  return `${location.pathname}?${params}`;
}

function showHistory() {
  const past = JSON.parse(localStorage.getItem(HISTORY) || "[]");
  $("history").replaceChildren(...past.map(({ q, graph }) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = addressOf(q, graph);
    link.textContent = graph ? `${q} (${graph})` : q;
    item.appendChild(link);
    return item;
  }));
}

// Server-Sent Events over a POST: read the body stream and split it into events.
async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  while (true) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) yield { type, data: JSON.parse(data.join("\n")) };
    }
  }
}

async function ask(question, graph) {
  $("submit").disabled = true;
  history.replaceState(null, "", addressOf(question, graph) + location.hash);  // shareable
  remember(question, graph);
  $("answer").textContent = "";
  $("answer-nodes").replaceChildren();
  $("more-answers").hidden = true;
  $("node-info").hidden = true;
  $("models").textContent = $("citations").textContent = "";
  showSureness(null);
  $("models-note").hidden = true;
  status("Retrieving…");
  try {
    const response = await fetch("/api/ask/stream", {
      method: "POST", headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ question, graph: graph || null, llm_when: preset.get("llm") || "auto" }),
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      const detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      status(`${response.status}: ${detail || response.statusText}`, true);
      return;
    }
    stream.tokens = 0;
    stream.events = [];
    for await (const event of events(response)) {
      stream.events.push(event.type);
      if (event.type === "retrieval") showRetrieval(event.data);
      else if (event.type === "token") { stream.tokens += 1; $("answer").textContent += event.data.text; }
      else if (event.type === "answer") showAnswer(event.data);
      else if (event.type === "error") status(`${event.data.status}: ${event.data.detail}`, true);
    }
  } catch (error) {
    status(`The server did not answer: ${error}`, true);
  } finally {
    $("submit").disabled = false;
  }
}

$("ask").addEventListener("submit", (event) => {
  event.preventDefault();
  ask($("question").value.trim(), $("graph").value);
});
$("view-toggle").addEventListener("click", () => {
  current.view = current.view === "evidence" ? "whole" : "evidence";
  render();
});
const preset = new URLSearchParams(location.search);
showHistory();
// A shared address (?q=…&graph=…) asks at once: the graph list (a scan of the store) may still be loading.
const wanted = preset.get("graph");
if (wanted) {
  const option = document.createElement("option");
  option.value = option.textContent = wanted;
  $("graph").appendChild(option);
  $("graph").value = wanted;
}
if (preset.get("q")) { $("question").value = preset.get("q"); ask(preset.get("q"), $("graph").value); }
loadGraphs();
checkModels();
setInterval(checkModels, MODELS_POLL_MS);
