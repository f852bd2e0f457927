// The gqa web page: ask, watch the answer stream in, see the retrieved subgraph with the answer highlighted.
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
      const option = document.createElement("option");
      option.value = info.graph;
      const trained = info.models && info.models.parts ? `; trained: ${info.models.parts.join(", ")}` : "";
      option.textContent = `${info.graph} (${info.nodes.toLocaleString()} nodes${trained})`;
      $("graph").appendChild(option);
    }
  } catch (error) { /* the page still works without the list */ }
}

function drawGraph(retrieval) {
  const elements = [];
  for (const node of retrieval.nodes) {
    elements.push({ data: { id: `n${node.id}`, label: node.text } });
  }
  retrieval.edges.forEach((edge, i) => {
    elements.push({ data: { id: `e${i}`, source: `n${edge.src}`, target: `n${edge.dst}`, label: edge.text,
                            pair: `${edge.src}-${edge.dst}` } });
  });
  if (cy) cy.destroy();
  cy = cytoscape({
    container: $("graph-view"),
    elements,
    style: [
      { selector: "node", style: { label: "data(label)", "background-color": "#9aa5b5", color: "#1d2430",
                                   "font-size": 12, "text-wrap": "ellipsis", "text-max-width": 160, width: 18,
                                   height: 18, "text-valign": "bottom", "text-margin-y": 4 } },
      { selector: "edge", style: { label: "data(label)", "curve-style": "bezier", "target-arrow-shape": "triangle",
                                   width: 1.4, "line-color": "#b8c0cc", "target-arrow-color": "#b8c0cc",
                                   "font-size": 8, color: "#7a8495", "text-rotation": "autorotate",
                                   "text-background-color": "#f6f7f9", "text-background-opacity": 0.8 } },
      { selector: "node.anchor", style: { "background-color": "#3a7bd5", width: 24, height: 24 } },
      { selector: "node.answer", style: { "background-color": "#e8a33d", width: 28, height: 28,
                                          "font-weight": "bold" } },
      { selector: "edge.cited", style: { "line-color": "#c2410c", "target-arrow-color": "#c2410c", width: 3 } },
    ],
    layout: { name: retrieval.nodes.length > 60 ? "concentric" : "cose", animate: false, padding: 40 },
    maxZoom: 1.1, minZoom: 0.1,
  });
  cy.fit(undefined, 40);
  window.gqaGraph = cy;  // for tests and the curious
}

function highlight(answer) {
  if (!cy) return;
  for (const id of answer.anchors || []) cy.$id(`n${id}`).addClass("anchor");
  for (const node of answer.nodes || []) cy.$id(`n${node.id}`).addClass("answer");
  const cited = new Set((answer.citations?.edges || []).flatMap(([a, b]) => [`${a}-${b}`, `${b}-${a}`]));
  cy.edges().forEach((edge) => { if (cited.has(edge.data("pair"))) edge.addClass("cited"); });
  // What the question names in the middle, its answers around it, the rest of the subgraph outside.
  cy.layout({ name: "concentric", animate: false, padding: 40, minNodeSpacing: 90, levelWidth: () => 1,
              concentric: (node) => (node.hasClass("anchor") ? 3 : node.hasClass("answer") ? 2 : 1) }).run();
  cy.fit(undefined, 40);
}

function showRetrieval(retrieval) {
  drawGraph(retrieval);
  const browser = $("browser");
  browser.href = retrieval.browser_url || "#";
  browser.hidden = !retrieval.browser_url;
  $("cypher").textContent = retrieval.browser_statement || "";
  $("cypher-box").hidden = !retrieval.browser_statement;
  const ms = Math.round(retrieval.timings_ms?.total || 0);
  status(`Retrieved ${retrieval.nodes.length} nodes and ${retrieval.edges.length} edges from ${retrieval.graph} ` +
         `in ${ms} ms (${retrieval.retriever_model}). Answering…`);
}

function showAnswer(answer) {
  $("answer").textContent = answer.text || "(no answer)";
  const list = $("answer-nodes");
  list.replaceChildren();
  for (const node of answer.nodes || []) {
    const item = document.createElement("li");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = node.text;
    item.appendChild(name);
    if (node.walk) {
      const walk = document.createElement("span");
      walk.className = "walk";
      walk.textContent = `  ${node.walk}` + (node.probability != null ? `  p=${node.probability.toFixed(2)}` : "");
      item.appendChild(walk);
    }
    list.appendChild(item);
  }
  $("models").textContent = Object.entries(answer.models || {}).map(([k, v]) => `${k}: ${v}`).join(" · ");
  const c = answer.citations;
  $("citations").textContent = c ? `cites nodes ${c.nodes.join(", ") || "none"}; ` +
    `${c.all_valid ? "all citations valid" : "invalid: " + [...c.invalid_nodes, ...c.invalid_edges].join(", ")}` : "";
  highlight(answer);
  status(`Answered in ${Math.round(answer.seconds * 1000)} ms (${answer.mode}).`);
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
  $("answer").textContent = "";
  $("answer-nodes").replaceChildren();
  $("models").textContent = $("citations").textContent = "";
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
const preset = new URLSearchParams(location.search);
loadGraphs().then(() => {
  if (preset.get("graph")) $("graph").value = preset.get("graph");
  if (preset.get("q")) { $("question").value = preset.get("q"); ask(preset.get("q"), $("graph").value); }
});
