// "Help it learn": the answers of a graph that nobody has judged yet, the least sure first
// (GET /api/feedback/unsure), each with one-click right / wrong; a wrong one asks for the right answer (typed, with
// the graph's names completed) or "don't know". A judged row goes; each judgement is a feedback like the one beside
// the answer shown (feedback.js: `window.gqaFeedback.post`), a train question of the graph. Above the list: what the
// last `gqa train` learned from the graph's questions, feedback's among them (`taught`).
// Runs after app.js and feedback.js.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const view = window.gqaView;
  const feedback = window.gqaFeedback;
  const panel = $("learn");
  const toggle = $("learn-toggle");
  const LIMIT = 20;
  // graph: whose answers are listed; answers: what the server listed; judged: how many were judged here (tests read it)
  const state = { graph: null, answers: [], taught: null, judged: 0, loaded: 0 };
  window.gqaLearn = state;

  function say(text, error = false) {
    $("learn-status").textContent = text;
    $("learn-status").className = error ? "error" : "";
  }

  const graphShown = () => $("graph").value || (view.retrieval && view.retrieval.graph) || "";

  async function load() {
    const graph = graphShown();
    state.graph = graph || null;
    $("learn-list").replaceChildren();
    $("learn-taught").hidden = true;
    if (!graph) {
      say("Choose a graph above (or ask a question) to see its answers that wait for a judgement.");
      return;
    }
    say(`Loading the answers of ${graph}…`);
    try {
      const params = new URLSearchParams({ graph, limit: String(LIMIT) });
      const response = await fetch(`/api/feedback/unsure?${params}`, { headers: headers() });
      const data = await response.json().catch(() => ({}));
      if (!response.ok) {
        say(`${response.status}: ${typeof data.detail === "string" ? data.detail : response.statusText}`, true);
        return;
      }
      if (graph !== graphShown()) return;  // another graph was chosen meanwhile: its own load shows it
      state.answers = data.answers;
      state.taught = data.taught;
      state.loaded += 1;
      showTaught(data.taught);
      $("learn-list").replaceChildren(...data.answers.map((answer) => row(graph, answer)));
      counted();
    } catch (error) {
      say(`The server did not answer: ${error}`, true);
    }
  }

  function showTaught(taught) {
    const line = $("learn-taught");
    line.hidden = !taught;
    if (!taught) return;
    line.textContent = taught.trained ? `${taught.text} (trained ${taught.trained})` : taught.text;
  }

  function counted() {
    const left = $("learn-list").children.length;
    say(left ? `${left} answer${left === 1 ? "" : "s"} of ${state.graph} wait for a judgement.` :
      `No answer of ${state.graph} waits for a judgement.`);
  }

  function button(text, className, title, onclick) {
    const made = document.createElement("button");
    made.type = "button";
    made.className = className;
    made.textContent = text;
    made.title = title;
    made.onclick = onclick;
    return made;
  }

  function sureness(answer) {
    const span = document.createElement("span");
    span.className = "learn-sure";
    if (answer.confidence != null) span.textContent = `${Math.round(answer.confidence * 100)}% sure`;
    if (answer.unsure) {
      const badge = document.createElement("span");
      badge.className = "badge-unsure";
      badge.textContent = "unsure";
      span.append(span.textContent ? " " : "", badge);
    }
    return span;
  }

  // One answer awaiting judgement: the question, the answer shown, how sure it was, right / wrong.
  function row(graph, answer) {
    const item = document.createElement("li");
    item.dataset.retrieval = answer.retrieval_id;
    const question = document.createElement("div");
    question.className = "learn-question";
    question.textContent = answer.question;
    const shown = document.createElement("div");
    shown.className = "learn-answer";
    const text = document.createElement("span");
    text.className = "name";
    text.textContent = answer.answer_text || (answer.answer_keys || []).join(", ") || "(no answer)";
    shown.append(text, " ", sureness(answer));
    const buttons = document.createElement("div");
    buttons.className = "learn-buttons";
    const status = document.createElement("div");
    status.className = "learn-row-status";
    const judge = async (body) => {
      status.textContent = "Sending…";
      status.className = "learn-row-status";
      try {
        await feedback.post(answer.retrieval_id, body);
        state.judged += 1;
        item.remove();  // judged: it waits no more
        counted();
      } catch (error) {
        status.textContent = error.message;
        status.className = "learn-row-status error";
      }
    };
    if ((answer.answer_keys || []).length) {
      buttons.append(button("right", "learn-right", "the answer shown is right", () => judge({ verdict: "right" })));
    }
    buttons.append(button("wrong", "learn-wrong", "the answer shown is wrong: name the right one", () => {
      form.hidden = false;
      input.focus();
    }));
    const form = document.createElement("form");
    form.className = "learn-form";
    form.hidden = true;
    const input = document.createElement("input");
    input.placeholder = "the answer is …";
    input.autocomplete = "off";
    input.maxLength = 1000;
    const list = document.createElement("datalist");
    list.id = `learn-names-${answer.retrieval_id}`;
    input.setAttribute("list", list.id);
    const names = new Map();
    let typing = null;
    input.addEventListener("input", () => {
      clearTimeout(typing);
      typing = setTimeout(async () => {
        const typed = input.value.trim();
        if (!typed) return;
        const nodes = await feedback.complete(graph, typed).catch(() => []);
        list.replaceChildren(...nodes.map((node) => {
          names.set(node.text, node.key);
          const option = document.createElement("option");
          option.value = node.text;
          if (node.key !== node.text) option.label = node.key;
          return option;
        }));
      }, 200);
    });
    const send = button("Send", "learn-send", "send the right answer", null);
    send.type = "submit";
    const unknown = button("wrong, don't know", "learn-unknown", "it is wrong, and I don't know the answer",
                           () => judge({ verdict: "wrong" }));
    form.append(input, list, send, unknown);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const typed = input.value.trim();
      if (!typed) {
        status.textContent = "Type the answer's name, or press \"wrong, don't know\".";
        status.className = "learn-row-status error";
        return;
      }
      judge({ verdict: "wrong", answer: names.get(typed) || typed });
    });
    item.append(question, shown, buttons, form, status);
    return item;
  }

  function open(shown) {
    panel.hidden = !shown;
    toggle.setAttribute("aria-pressed", String(shown));
    if (shown) load();
  }

  toggle.addEventListener("click", () => open(panel.hidden));
  $("graph").addEventListener("change", () => { if (!panel.hidden) load(); });
  document.addEventListener("gqa:answer", () => { if (!panel.hidden) load(); });  // the new answer waits too
  document.addEventListener("gqa:feedback", (event) => {  // judged beside the answer: it waits no more here
    const judged = $("learn-list").querySelector(`li[data-retrieval="${CSS.escape(event.detail.retrieval_id)}"]`);
    if (judged) { judged.remove(); counted(); }
  });
  if (new URLSearchParams(location.search).get("learn") === "1") open(true);
})();
