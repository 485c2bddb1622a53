// The chat page. Every string from the model or an abstract goes into the page as text
// (textContent, createTextNode), never as HTML; citation markers are built as elements.
"use strict";

const MARKER = /\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]/g;  // as citations.py: a source number has at most 4 digits
const state = { history: [], papers: null, busy: false, key: sessionStorage.getItem("qa-api-key") || "", waitingForKey: null };

function headers(extra = {}) {
  return state.key ? { ...extra, Authorization: `Bearer ${state.key}` } : extra;
}

// Ask for the API key once (kept for this tab only); resolves when the user has entered one.
function askForKey(message) {
  const form = document.getElementById("key-form");
  document.getElementById("key-error").textContent = message || "";
  form.hidden = false;
  document.getElementById("api-key").focus();
  if (!state.waitingForKey) {
    state.waitingForKey = new Promise((resolve) => {
      form.addEventListener("submit", function done(event) {
        event.preventDefault();
        state.key = document.getElementById("api-key").value.trim();
        sessionStorage.setItem("qa-api-key", state.key);
        form.hidden = true;
        form.removeEventListener("submit", done);
        state.waitingForKey = null;
        resolve();
      });
    });
  }
  return state.waitingForKey;
}

// fetch, asking for the key and trying again when the service answers 401.
async function authorizedFetch(url, options = {}) {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(url, { ...options, headers: headers(options.headers || {}) });
    if (response.status !== 401 || attempt >= 3) return response;
    await askForKey(state.key ? "That key was not accepted; try again." : "");
  }
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function markerNumbers(marker) {
  const numbers = [];
  for (const part of marker.split(",")) {
    const bounds = part.split(/[-–]/).map((x) => parseInt(x, 10));
    if (bounds.length === 2 && bounds[0] <= bounds[1] && bounds[1] - bounds[0] < 50) {
      for (let n = bounds[0]; n <= bounds[1]; n++) numbers.push(n);
    } else numbers.push(...bounds);
  }
  return numbers;
}

// --- status line: what answers, and over which corpus -----------------------------------
async function loadStatus() {
  const status = document.getElementById("status");
  try {
    const info = await getJSON("/api/info");
    if (info.auth_required && !state.key) askForKey();
    const mode = info.model === "extractive" ? "offline extractive mode" : `model: ${info.model}`;
    const built = info.index.built_at ? `indexed ${info.index.built_at.replace("T", " ").replace("Z", " UTC")}` : "not indexed yet";
    status.textContent = `${mode} · ${info.index.papers} papers · ${built}`;
  } catch (err) {
    status.textContent = `Service status unavailable: ${err.message}`;
  }
}

async function getJSON(url) {
  let response;
  try {
    response = await authorizedFetch(url, { headers: { Accept: "application/json" } });
  } catch (err) {
    throw new Error("cannot reach the service; check that it is running");
  }
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new Error((body && body.error && body.error.message) || `HTTP ${response.status}`);
  return body;
}

// --- asking -------------------------------------------------------------------------------
function newTurn(question) {
  const answer = el("p", { class: "answer streaming", "aria-live": "polite", "aria-busy": "true" });
  const turn = el("article", { class: "turn" }, el("p", { class: "q", text: question }), answer);
  document.getElementById("conversation").append(turn);
  turn.scrollIntoView({ block: "nearest" });
  return { turn, answer };
}

async function ask(question, historyAtAsk, existing) {
  const { turn, answer } = existing || newTurn(question);
  setBusy(true);
  answer.textContent = "";
  answer.className = "answer streaming";
  answer.setAttribute("aria-busy", "true");
  for (const old of turn.querySelectorAll(".sources, .warnings, .meta, .retry")) old.remove();
  try {
    const final = await streamAnswer(question, historyAtAsk, (text) => answer.append(document.createTextNode(text)));
    renderFinal(turn, answer, final);
    state.history.push({ role: "user", content: question }, { role: "assistant", content: final.answer });
  } catch (err) {
    renderError(turn, answer, err, () => ask(question, historyAtAsk, { turn, answer }));
  } finally {
    answer.setAttribute("aria-busy", "false");
    setBusy(false);
  }
}

async function streamAnswer(question, history, onDelta) {
  let response;
  try {
    response = await authorizedFetch("/api/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question, history }),
    });
  } catch (err) {
    throw new Error("Cannot reach the service. Check your connection and that the server is running.");
  }
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new Error((body && body.error && body.error.message) || `The server answered HTTP ${response.status}.`);
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
      const event = parseEvent(block);
      if (event.type === "delta") onDelta(event.data.text);
      else if (event.type === "final") return event.data;
      else if (event.type === "error") throw new Error(event.data.error.message);
    }
  }
  throw new Error("The answer stopped before it was complete. Try again.");
}

function parseEvent(block) {
  let type = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  return { type, data: JSON.parse(data.join("\n")) };
}

function renderFinal(turn, answer, final) {
  answer.className = "answer";
  answer.textContent = "";
  if (final.insufficient_evidence) {
    answer.classList.add("refusal");
    answer.append(el("strong", { text: "The abstracts don't answer this. " }),
      document.createTextNode(final.refusal_explanation || final.answer));
  } else {
    appendWithMarkers(answer, final.answer, final);
  }
  const bySource = new Map();
  for (const c of final.citations) if (!bySource.has(c.n) || (c.supported && !bySource.get(c.n).supported)) bySource.set(c.n, c);
  if (bySource.size) {
    const list = el("ol", { class: "sources", "aria-label": "Sources" });
    for (const [n, c] of [...bySource.entries()].sort((a, b) => a[0] - b[0])) {
      const mark = c.supported
        ? el("span", { class: "mark-ok", text: "✓ supported by this abstract" })
        : el("span", { class: "mark-bad", text: "✗ not supported by this abstract" });
      const open = el("button", { type: "button", class: "source-open", text: `[${n}] ${c.label}`, onclick: () => openPaper(c.paper_id, c) });
      list.append(el("li", { id: `src-${turn.dataset.turn}-${n}` }, open, " ", el("span", { class: "paper-id", text: c.paper_id }), " ", mark, el("p", { class: "quote", text: `“${c.quote}”` })));
    }
    turn.append(list);
  }
  if (final.warnings && final.warnings.length) {
    turn.append(el("p", { class: "warnings", text: `Check: ${final.warnings.join("; ")}` }));
  }
  if (final.did_you_mean && final.did_you_mean.length) {
    turn.append(el("p", { class: "did-you-mean", text: `Did you mean ${final.did_you_mean.join(" or ")}?` }));
  }
  if (final.asked && final.question && final.asked !== final.question) {
    turn.append(el("p", { class: "searched", text: `Searched as: ${final.question}` }));
  }
  const grounded = final.insufficient_evidence ? "no answer given"
    : final.grounded ? "every sentence cited and supported" : "not fully supported by the sources";
  turn.append(el("p", { class: "meta", text: `${final.model} · ${grounded} · ${Math.round(final.timings_ms.total)} ms` }));
}

function appendWithMarkers(container, text, final) {
  // Citations come in answer order, so the k-th marker [n] is the k-th citation of source n.
  const queues = new Map();
  for (const c of final.citations) queues.set(c.n, [...(queues.get(c.n) || []), c]);
  const used = new Map();
  let last = 0;
  for (const match of text.matchAll(MARKER)) {
    container.append(document.createTextNode(text.slice(last, match.index)));
    for (const n of markerNumbers(match[1])) {
      const queue = queues.get(n) || [];
      const c = queue[Math.min(used.get(n) || 0, queue.length - 1)];
      used.set(n, (used.get(n) || 0) + 1);
      const label = c ? `Source ${n}: ${c.label}` : `Source ${n}`;
      container.append(el("button", { type: "button", class: "cite", text: `[${n}]`, "aria-label": label, title: label, onclick: () => c && openPaper(c.paper_id, c) }));
    }
    last = match.index + match[0].length;
  }
  container.append(document.createTextNode(text.slice(last)));
}

function renderError(turn, answer, err, retry) {
  answer.className = "answer error";
  answer.textContent = "";
  answer.append(el("strong", { text: "Something went wrong. " }), document.createTextNode(err.message));
  turn.append(el("button", { type: "button", class: "retry", text: "Try again", onclick: retry }));
}

function setBusy(busy) {
  state.busy = busy;
  const button = document.getElementById("ask-button");
  button.disabled = busy;
  button.textContent = busy ? "Answering…" : "Ask";
}

// --- the abstract panel -------------------------------------------------------------------
async function openPaper(paperId, citation) {
  const panel = document.getElementById("panel");
  const title = document.getElementById("panel-title");
  const text = document.getElementById("panel-text");
  panel.hidden = false;
  title.textContent = "Loading…";
  text.textContent = "";
  document.getElementById("panel-id").textContent = paperId;
  try {
    const paper = await getJSON(`/api/papers/${encodeURIComponent(paperId)}`);
    title.textContent = paper.title || paper.label;
    const body = paper.text;
    if (citation && citation.end > citation.start && body.slice(citation.start, citation.end) === citation.quote) {
      const mark = el("mark", { text: body.slice(citation.start, citation.end) });
      text.append(document.createTextNode(body.slice(0, citation.start)), mark, document.createTextNode(body.slice(citation.end)));
      mark.scrollIntoView({ block: "nearest" });
    } else {
      text.textContent = body;
    }
  } catch (err) {
    title.textContent = "Could not open the abstract";
    text.textContent = err.message;
  }
  panel.focus();
}

// --- browsing -----------------------------------------------------------------------------
async function showBrowse() {
  setView("browse");
  if (!state.papers) {
    try {
      state.papers = (await getJSON("/api/papers")).papers;
    } catch (err) {
      document.getElementById("paper-count").textContent = `Could not load the papers: ${err.message}`;
      return;
    }
  }
  renderPapers();
}

function renderPapers() {
  const filter = document.getElementById("paper-filter").value.trim().toLowerCase();
  const shown = state.papers.filter((p) => `${p.id} ${p.label} ${p.title}`.toLowerCase().includes(filter));
  const list = document.getElementById("paper-list");
  list.replaceChildren(...shown.slice(0, 500).map((p) => el("li", {}, el("button", { type: "button", text: p.title || p.label, onclick: () => openPaper(p.id) }), " ", el("span", { class: "paper-id", text: p.id }))));
  document.getElementById("paper-count").textContent = `${shown.length} of ${state.papers.length} papers${shown.length > 500 ? " (first 500 shown)" : ""}`;
}

function setView(name) {
  document.getElementById("view-ask").hidden = name !== "ask";
  document.getElementById("view-browse").hidden = name !== "browse";
  document.getElementById("tab-ask").setAttribute("aria-pressed", String(name === "ask"));
  document.getElementById("tab-browse").setAttribute("aria-pressed", String(name === "browse"));
}

// --- wiring -------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("ask-form");
  const box = document.getElementById("question");
  let turns = 0;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = box.value.trim();
    if (!question || state.busy) return;
    box.value = "";
    const history = state.history.slice(-20);
    const created = newTurn(question);
    created.turn.dataset.turn = String(++turns);
    ask(question, history, created);
  });
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  document.getElementById("new-conversation").addEventListener("click", () => {
    state.history = [];
    document.getElementById("conversation").replaceChildren();
    box.focus();
  });
  document.getElementById("panel-close").addEventListener("click", () => { document.getElementById("panel").hidden = true; });
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") document.getElementById("panel").hidden = true; });
  document.getElementById("tab-ask").addEventListener("click", () => setView("ask"));
  document.getElementById("tab-browse").addEventListener("click", showBrowse);
  document.getElementById("paper-filter").addEventListener("input", renderPapers);
  loadStatus();
  box.focus();
});
