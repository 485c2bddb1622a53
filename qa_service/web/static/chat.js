// The conversation: asking, streaming (sources first, then the answer with live citation
// markers), stopping and asking again; kept in this browser across reloads.
"use strict";

import { streamAnswer } from "./api.js";
import { el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { currentScope, describeScope } from "./scope.js";
import { citedSources, copyAnswer } from "./share.js";
import * as store from "./store.js";

const PARTIAL_MARKER = /\[[\d\s,–-]*$/;  // a marker still being written: wait for its "]"
const limits = { historyTurns: 20, historyChars: 4000 };

const chat = { conversation: store.newConversation(), controller: null, seq: 0, follow: true, openPaper: null };

// `openPaper(id, span, findOpener)` is how a citation opens the abstract panel.
export function initChat(openPaper, serverLimits) {
  chat.openPaper = openPaper;
  Object.assign(limits, serverLimits || {});
  window.addEventListener("scroll", followOrNot, { passive: true });
  const saved = store.currentId() && store.getConversation(store.currentId());
  if (saved) {
    showConversation(saved);
    follow();  // back where the conversation ends, as before the reload
  }
}

export function setLimits(serverLimits) {
  Object.assign(limits, serverLimits || {});
}

export function isBusy() {
  return chat.controller !== null;
}

export function currentConversation() {
  return chat.conversation;
}

// --- asking -------------------------------------------------------------------------------
export function ask(question) {
  if (isBusy()) return false;
  const data = { question, status: "pending", scope: currentScope() };
  chat.conversation.turns.push(data);
  store.setCurrentId(chat.conversation.id);
  store.saveConversation(chat.conversation);
  const view = addTurn(data);
  run(chat.conversation, data, view);
  return true;
}

// Earlier finished turns, as the server's `history` (the newest that fit its limits).
function historyBefore(conversation, data) {
  const turns = conversation.turns.slice(0, conversation.turns.indexOf(data)).filter((t) => t.status === "done");
  const messages = turns.flatMap((t) => [{ role: "user", content: t.question }, { role: "assistant", content: t.final.answer }]);
  return messages.slice(-limits.historyTurns).map((m) => ({ ...m, content: m.content.slice(0, limits.historyChars) }));
}

async function run(conversation, data, view) {
  const controller = new AbortController();
  chat.controller = controller;
  setBusy(true);
  Object.assign(data, { status: "pending", final: null, partial: "", error: "", sources: null });
  resetTurn(view);
  const step = el("p", { class: "step", role: "status", text: "Searching the abstracts…" });
  view.answer.before(step);
  chat.follow = true;
  view.turn.scrollIntoView({ block: "nearest" });
  let text = "";
  try {
    const final = await streamAnswer(data.question, historyBefore(conversation, data), {
      sources: (event) => {
        data.sources = event.sources;
        showSearched(view, data.question, event.question);
        showRetrieved(view, data);
        step.textContent = "Writing the answer…";
        follow();
      },
      delta: (piece) => {
        text += piece;
        data.partial = text;
        view.answer.classList.add("streaming");
        renderMarkdown(view.answer, text.replace(PARTIAL_MARKER, ""), markerFor(view, data));
        follow();
      },
    }, controller.signal, data.scope || {});
    data.status = "done";
    data.final = final;
    renderFinal(view, data);
  } catch (err) {
    if (err.name === "AbortError") {
      data.status = "stopped";
      renderStopped(view, data);
    } else {
      data.status = "error";
      data.error = err.message;
      renderError(view, data);
    }
  } finally {
    step.remove();
    view.answer.setAttribute("aria-busy", "false");
    store.saveConversation(conversation);
    if (chat.controller === controller) {
      chat.controller = null;
      setBusy(false);
      refreshActions();
      follow();
    }
  }
}

// Stop the answer being written: the request is aborted, so the server stops working on it.
export function stop() {
  if (chat.controller) chat.controller.abort();
}

// Start clean: stop any answer in flight (it stays in its own, now past, conversation).
export function startNew() {
  if (chat.controller) {
    chat.controller.abort();
    chat.controller = null;
    setBusy(false);
  }
  chat.conversation = store.newConversation();
  store.setCurrentId(chat.conversation.id);
  document.getElementById("conversation").replaceChildren();
  updateExport();
}

export function showConversation(conversation) {
  startNew();
  chat.conversation = conversation;
  store.setCurrentId(conversation.id);
  for (const data of conversation.turns) {
    const view = addTurn(data);
    if (data.status === "done") {
      if (data.final.sources && !data.final.insufficient_evidence) showRetrieved(view, { ...data, sources: data.final.sources });
      renderFinal(view, data);
    } else if (data.status === "error") renderError(view, data);
    else {
      data.status = "stopped";  // a reload cut it short
      renderStopped(view, data);
    }
    view.answer.setAttribute("aria-busy", "false");
  }
  refreshActions();
}

function setBusy(busy) {
  const askButton = document.getElementById("ask-button");
  const stopButton = document.getElementById("stop");
  const focusWasOn = document.activeElement;
  askButton.hidden = busy;
  stopButton.hidden = !busy;
  if (busy && focusWasOn === askButton) stopButton.focus();
  if (!busy && focusWasOn === stopButton) document.getElementById("question").focus();
  updateExport();
}

function updateExport() {
  document.getElementById("export").disabled = !chat.conversation.turns.length;
}

// --- following the answer -----------------------------------------------------------------
// Keep the newest words in view while they stream, unless the user scrolled up to read.
let lastScrollY = window.scrollY;
function followOrNot() {
  const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 24;
  if (window.scrollY < lastScrollY - 2) chat.follow = false;
  if (atBottom) chat.follow = true;
  lastScrollY = window.scrollY;
}

function follow() {
  if (chat.follow && !document.getElementById("view-ask").hidden) window.scrollTo({ top: document.documentElement.scrollHeight, behavior: "instant" });
}

// --- drawing a turn -----------------------------------------------------------------------
function addTurn(data) {
  const id = ++chat.seq;
  const answer = el("div", { class: "answer", "aria-live": "polite", "aria-busy": "true" });
  const turn = el("article", { class: "turn", "data-turn": id, "aria-labelledby": `q-${id}` },
    el("h2", { class: "q", id: `q-${id}`, text: data.question }), answer);
  document.getElementById("conversation").append(turn);
  updateExport();
  return { id, turn, answer, data };
}

function resetTurn(view) {
  view.answer.className = "answer";
  view.answer.replaceChildren();
  view.answer._markdown = null;
  view.answer.setAttribute("aria-busy", "true");
  for (const old of view.turn.querySelectorAll(".searched, .scope-used, .retrieved, .sources, .warnings, .did-you-mean, .meta, .turn-actions, .stopped")) old.remove();
}

function showSearched(view, asked, searched) {
  if (!searched || searched.trim().toLowerCase() === asked.trim().toLowerCase() || view.turn.querySelector(".searched")) return;
  view.turn.querySelector(".q").after(el("p", { class: "searched" }, el("span", { class: "label", text: "Searched as: " }), searched));
}

// The papers retrieved for the question, shown before the answer is written.
function showRetrieved(view, data) {
  if (!data.sources || !data.sources.length) return;
  const items = data.sources.map((s) => el("li", {}, el("button", {
    type: "button", class: "retrieved-open", text: `[${s.n}] ${s.label}`, title: s.paper_id,
    onclick: (event) => openFrom(view, event.currentTarget, s.paper_id, null, `.retrieved-open[data-n="${s.n}"]`),
    "data-n": s.n,
  })));
  const box = el("div", { class: "retrieved" }, el("p", { class: "label", id: `ret-${view.id}`, text: `Searched ${data.sources.length} abstracts:` }),
    el("ol", { "aria-labelledby": `ret-${view.id}` }, ...items));
  view.answer.before(box);
}

// A citation marker: a button that opens the cited abstract at the quoted sentence.
function markerFor(view, data) {
  return (n, k) => {
    const source = sourceOf(data, n);
    if (!source) return document.createTextNode(`[${n}]`);
    const label = `Source ${n}: ${source.label}`;
    return el("button", {
      type: "button", class: "cite", text: `[${n}]`, "aria-label": label, title: label, "data-n": n, "data-k": k,
      onclick: (event) => {
        const citation = citationOf(data, n, k);
        const span = citation && citation.end > citation.start ? [citation.start, citation.end] : null;
        openFrom(view, event.currentTarget, source.paper_id, span, `.answer .cite[data-n="${n}"][data-k="${k}"]`);
      },
    });
  };
}

function sourceOf(data, n) {
  const sources = (data.final && data.final.sources) || data.sources || [];
  return sources.find((s) => s.n === n) || (data.final && data.final.citations.find((c) => c.n === n)) || null;
}

function citationOf(data, n, k) {
  if (!data.final) return null;
  const queue = data.final.citations.filter((c) => c.n === n);
  return queue.length ? queue[Math.min(k, queue.length - 1)] : null;
}

function openFrom(view, button, paperId, span, selector) {
  const turn = view.turn;
  chat.openPaper(paperId, span, () => (button.isConnected ? button : turn.querySelector(selector)));
}

function renderFinal(view, data) {
  const { turn, answer } = view;
  const final = data.final;
  answer.className = "answer";
  if (final.refusal_reason === "no_match") {  // the filters left no paper: not the same as an unanswered question
    answer.classList.add("refusal");
    answer.replaceChildren(el("p", {}, el("strong", { text: "No paper matches these filters." }),
      " Remove a filter or choose another corpus."));
  } else if (final.insufficient_evidence) {
    answer.classList.add("refusal");
    answer.replaceChildren(el("p", {}, el("strong", { text: "The abstracts don't answer this." }),
      final.refusal_explanation ? ` ${final.refusal_explanation}` : null));
  } else {
    const note = serviceNote(final);  // the service's own words ("The abstract of X does not report ..."): no quote, shown apart
    renderMarkdown(answer, final.answer.slice(note.length).trimStart(), markerFor(view, data));
    if (note) answer.prepend(el("p", { class: "service-note", text: note }));
  }
  showSearched(view, final.asked || data.question, final.question);
  const within = describeScope(final, data.scope);
  if (within) answer.before(el("p", { class: "scope-used" }, el("span", { class: "label", text: "Searched within: " }), within));
  const cited = citedSources(final);
  if (cited.length) {
    const list = el("ol", { class: "sources", "aria-label": "Cited sources" });
    const several = (final.corpora || []).length > 1;
    for (const { n, citations } of cited) list.append(sourceEntry(view, n, citations, several));
    turn.append(list);
  }
  if (final.warnings && final.warnings.length) turn.append(el("p", { class: "warnings", text: `Check: ${final.warnings.join("; ")}` }));
  if (final.did_you_mean && final.did_you_mean.length) turn.append(el("p", { class: "did-you-mean", text: `Did you mean ${final.did_you_mean.join(" or ")}?` }));
  const verdict = final.insufficient_evidence ? "no answer given"
    : final.grounded ? "every sentence cited and supported" : "not fully supported by the sources";
  turn.append(el("p", { class: "meta", text: `${final.model} · ${verdict} · ${Math.round(final.timings_ms.total)} ms` }));
  turn.append(actions(view, data));
}

// The answer's opening units that are the service's own (kind "service") and their lead-in ("structure").
function serviceNote(final) {
  const units = final.sentences || [];
  if (!units.length || units[0].kind !== "service") return "";
  let end = 0;
  for (const unit of units) {
    if (unit.kind !== "service" && unit.kind !== "structure") break;
    end = unit.end;
  }
  return final.answer.slice(0, end);
}

function sourceEntry(view, n, citations, several) {
  const first = citations.find((c) => c.supported) || citations[0];
  const allSupported = citations.every((c) => c.supported);
  const mark = allSupported ? el("span", { class: "mark-ok", text: "✓ supported by this abstract" })
    : el("span", { class: "mark-bad", text: citations.some((c) => c.supported) ? "✗ partly not supported by this abstract" : "✗ not supported by this abstract" });
  const open = el("button", { type: "button", class: "source-open", text: `[${n}] ${first.label}`, "data-n": n,
    onclick: (event) => openFrom(view, event.currentTarget, first.paper_id, [first.start, first.end], `.source-open[data-n="${n}"]`) });
  const quotes = el("ul", { class: "quotes" }, ...citations.map((c) => el("li", { class: c.supported ? "quote" : "quote unsupported", text: `“${c.quote}”` })));
  const id = several && first.corpus ? `${first.paper_id} · ${first.corpus}` : first.paper_id;
  return el("li", { id: `src-${view.id}-${n}` }, open, " ", el("span", { class: "paper-id", text: id }), " ", mark, quotes);
}

function renderStopped(view, data) {
  view.answer.classList.remove("streaming");
  if (data.partial) renderMarkdown(view.answer, data.partial.replace(PARTIAL_MARKER, ""), markerFor(view, data));
  view.answer.after(el("p", { class: "stopped", text: data.partial ? "Stopped before the answer was complete." : "Stopped before any answer was written." }));
  view.turn.append(actions(view, data));
}

function renderError(view, data) {
  view.answer.className = "answer error";
  view.answer.replaceChildren(el("p", {}, el("strong", { text: "Something went wrong. " }), data.error));
  view.turn.append(actions(view, data));
}

// Copy and Ask again under a turn (Ask again and Try again only under the newest one).
function actions(view, data) {
  const box = el("div", { class: "turn-actions" });
  if (data.status === "done") {
    const copy = el("button", { type: "button", class: "secondary copy", text: "Copy", "aria-label": "Copy the answer and its sources" });
    copy.addEventListener("click", () => copyAnswer(data, copy));
    box.append(copy);
  }
  const again = el("button", { type: "button", class: data.status === "error" ? "retry" : "secondary again",
    text: data.status === "error" ? "Try again" : "Ask again" });
  again.addEventListener("click", () => {
    if (isBusy()) return;
    run(chat.conversation, data, view);
  });
  box.append(again);
  return box;
}

// Only the newest turn can be asked again: the later turns were asked with its answer.
function refreshActions() {
  const turns = [...document.querySelectorAll("#conversation .turn")];
  turns.forEach((turn, i) => {
    for (const button of turn.querySelectorAll(".again, .retry")) button.hidden = i !== turns.length - 1;
  });
}
