// Feedback on the answer shown: "right" / "wrong" beside each answer, and "the answer is …", named by typing (the
// names are completed from the graph's nodes, GET /api/nodes) or by clicking a node of the drawing. Each feedback
// (POST /api/feedback) becomes a train question of the graph, which the next `gqa train --graph G` learns from.
// A "wrong" waits for the right answer (or "I don't know"), so that one judgement is one vote.
// An unsure answer (its confidence too low to call it right) asks first: "Not sure: is this right?" above the answers.
// Runs after app.js and uses what it shares: `headers()` (the token), `window.gqaView` (the retrieval and answer
// shown) and its events "gqa:answer" (an answer is shown) and "gqa:drawn" (the drawing was made anew). It shares
// `window.gqaFeedback.post` and `.complete` (learn.js judges other answers with them) and says "gqa:feedback" when a
// feedback was kept.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const view = window.gqaView;
  const box = $("feedback");
  const input = $("feedback-answer");
  // wrong: the keys of the answers marked wrong, not sent yet; picked: the node clicked in the drawing; names: the
  // completions offered, name -> key; last: the question the last feedback stored (read by the browser test)
  const state = { wrong: new Set(), picked: null, names: new Map(), last: null, sent: 0, post, complete: nodeNames };
  window.gqaFeedback = state;
  const home = { parent: box.parentNode, next: box.nextSibling };  // where the box sits when the answer is sure

  // One feedback (POST /api/feedback) on any recorded retrieval: the question it made, or an Error saying why not.
  async function post(retrievalId, body) {
    const response = await fetch("/api/feedback", {
      method: "POST", headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ retrieval_id: retrievalId, ...body }),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const detail = typeof data.detail === "string" ? data.detail :
        (data.detail || []).map((d) => `${(d.loc || []).slice(1).join(".")}: ${d.msg}`).join("; ");
      throw new Error(`${response.status}: ${detail || response.statusText}`);
    }
    document.dispatchEvent(new CustomEvent("gqa:feedback", { detail: { retrieval_id: retrievalId, ...data } }));
    return data.question;
  }

  // The nodes of `graph` whose name starts as typed (GET /api/nodes), best first.
  async function nodeNames(graph, text, limit = 10) {
    const params = new URLSearchParams({ graph, q: text, limit: String(limit) });
    const response = await fetch(`/api/nodes?${params}`, { headers: headers() });
    if (!response.ok) return [];
    return (await response.json()).nodes;
  }

  function say(text, error = false) {
    $("feedback-status").textContent = text;
    $("feedback-status").className = error ? "error" : "";
  }

  function shownKeys() {
    return ((view.answer && view.answer.nodes) || []).map((node) => node.key);
  }

  async function send(body) {
    if (!view.retrieval) return;
    say("Sending…");
    let question;
    try {
      question = await post(view.retrieval.id, body);
    } catch (error) {
      say(error instanceof TypeError ? `The server did not answer: ${error}` : error.message, true);
      return;
    }
    state.last = question;
    state.sent += 1;
    state.wrong.clear();
    $("feedback-unknown").hidden = true;
    const kept = question.answers.length ? `answer: ${question.answers.join(", ")}` :
      "no answer known yet, only what it is not";
    say(`Thank you: kept as a train question of ${question.graph} (${kept}; votes right ` +
        `${question.votes_right}, wrong ${question.votes_wrong}).`);
  }

  function verdictButton(verdict, onclick) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `fb-${verdict}`;
    button.textContent = verdict;
    button.title = `this answer is ${verdict}`;
    button.onclick = onclick;
    return button;
  }

  // The buttons beside one answer of the list (app.js makes the items; they are decorated as they appear).
  function decorate(item) {
    if (item.querySelector(".fb") || !item.dataset.key) return;
    const key = item.dataset.key;
    const buttons = document.createElement("span");
    buttons.className = "fb";
    const right = verdictButton("right", () => {
      item.classList.add("fb-marked-right");
      item.classList.remove("fb-marked-wrong");
      state.wrong.delete(key);
      send({ verdict: "right", answer: key });
    });
    const wrong = verdictButton("wrong", () => {
      const marked = item.classList.toggle("fb-marked-wrong");
      item.classList.remove("fb-marked-right");
      if (marked) state.wrong.add(key); else state.wrong.delete(key);
      $("feedback-unknown").hidden = state.wrong.size === 0;
      if (marked) {
        say("Marked wrong. What is the answer? Type its name, or click its node in the drawing, then Send.");
        input.focus();
      }
    });
    buttons.append(" ", right, " ", wrong);
    item.appendChild(buttons);
  }

  new MutationObserver(() => $("answer-nodes").querySelectorAll("li").forEach(decorate))
    .observe($("answer-nodes"), { childList: true });

  document.addEventListener("gqa:answer", (event) => {
    const answer = event.detail;
    state.wrong.clear();
    state.picked = null;
    input.value = "";
    say("");
    $("feedback-unknown").hidden = true;
    // no answer nodes: judge the answer as a whole; an unsure answer: asked first, above the answers
    const unsure = Boolean(answer.unsure);
    $("feedback-verdict").hidden = (answer.nodes || []).length > 0 && !unsure;
    $("feedback-ask").textContent = unsure ? "Not sure: is this right?" : "Is this answer right?";
    box.classList.toggle("unsure", unsure);
    if (unsure) $("answer-nodes").before(box);
    else if (box.nextSibling !== home.next) home.parent.insertBefore(box, home.next);
    box.hidden = !view.retrieval;
    $("answer-nodes").querySelectorAll("li").forEach(decorate);
  });

  document.addEventListener("gqa:drawn", (event) => {
    if (!view.answer) { box.hidden = true; return; }  // a new question: its answer is not there yet
    event.detail.on("tap", "node", (tap) => pick(tap.target.data("nid")));
  });

  // A node clicked in the drawing is the answer named (sent with Send).
  function pick(nid) {
    const node = view.retrieval && view.retrieval.nodes.find((n) => n.id === nid);
    if (!node || box.hidden) return;
    state.picked = { key: node.key, text: node.text };
    input.value = node.text;
    say(`The answer is ${node.text}? Press Send.`);
  }

  let typing = null;
  input.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(complete, 200);
  });

  async function complete() {
    const text = input.value.trim();
    if (!text || !view.retrieval) return;
    try {
      const nodes = await nodeNames(view.retrieval.graph, text);
      const list = $("feedback-names");
      list.replaceChildren(...nodes.map((node) => {
        state.names.set(node.text, node.key);
        const option = document.createElement("option");
        option.value = node.text;
        if (node.key !== node.text) option.label = node.key;
        return option;
      }));
    } catch (error) { /* typing a name in full still works */ }
  }

  $("feedback-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) {
      say("Type the answer's name, or click its node in the drawing.", true);
      return;
    }
    // the node picked, a completion chosen, else the text as typed (the server finds the node that carries it)
    const answer = state.picked && state.picked.text === text ? state.picked.key : (state.names.get(text) || text);
    if (state.wrong.size) send({ verdict: "wrong", answer, shown: [...state.wrong] });
    else if (shownKeys().includes(answer)) send({ verdict: "right", answer });
    else send({ verdict: "wrong", answer });
  });

  // no answer marked (an answer without nodes judged as a whole): every answer shown is the one judged
  $("feedback-unknown").addEventListener("click",
    () => send({ verdict: "wrong", shown: state.wrong.size ? [...state.wrong] : undefined }));
  box.querySelector("#feedback-verdict .fb-right").addEventListener("click", () => send({ verdict: "right" }));
  box.querySelector("#feedback-verdict .fb-wrong").addEventListener("click", () => {
    say("What is the answer? Type its name, or click its node in the drawing, then Send.");
    $("feedback-unknown").hidden = false;
    input.focus();
  });
})();
