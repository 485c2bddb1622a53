// The conversation: asking, streaming (sources first, then the answer with live citation
// markers), stopping and asking again; kept in this browser across reloads.
"use strict";

import { markerFor, renderFinal, showRetrieved, showSearched } from "./answer.js";
import { streamAnswer } from "./api.js";
import { el } from "./dom.js";
import { editQuestion } from "./edit.js";
import { countdown, errorNodes, explain } from "./errors.js";
import { renderMarkdown } from "./markdown.js";
import { currentScope } from "./scope.js";
import { copyAnswer } from "./share.js";
import * as store from "./store.js";

const PARTIAL_MARKER = /\[[\d\s,–-]*$/;  // a marker still being written: wait for its "]"
const limits = { historyTurns: 20, historyChars: 4000 };

const chat = { conversation: store.newConversation(), controller: null, seq: 0, follow: true, openPaper: null, openedMidStream: null, leaving: false };

// `openPaper(id, span, findOpener)` is how a citation opens the abstract panel.
export function initChat(openPaper, serverLimits) {
  chat.openPaper = openPaper;
  Object.assign(limits, serverLimits || {});
  window.addEventListener("scroll", followOrNot, { passive: true });
  window.addEventListener("pagehide", () => {  // a reload keeps what was written, marked as cut on the next load
    chat.leaving = true;
    if (isBusy()) store.saveConversation(chat.conversation);
  });
  window.addEventListener("pageshow", () => { chat.leaving = false; });  // back from the page cache
  const saved = store.currentId() && store.getConversation(store.currentId());
  if (saved) {
    showConversation(saved);
    follow();  // back where the conversation ends, as before the reload
  }
}

// Another tab saved this conversation: show what it added (not while an answer is written here; it is merged on save).
export function syncFromOtherTabs() {
  if (isBusy() || !chat.conversation.turns.length) return;
  const copy = { ...chat.conversation, turns: [...chat.conversation.turns] };
  if (store.mergeFromStorage(copy)) showConversation(copy);
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
  syncFromOtherTabs();  // a question another tab asked here comes first, and goes into the history
  const data = { id: store.newTurnId(), at: Date.now(), question, status: "pending", scope: currentScope() };
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

const SAVE_EVERY_MS = 500;  // a streaming answer is saved this often, so a reload keeps what was written

// Ask (or ask again) the question of `data`; `auto` when the page retries on its own after a wait.
async function run(conversation, data, view, auto = false) {
  const controller = new AbortController();
  chat.controller = controller;
  setBusy(true);
  Object.assign(data, { status: "pending", final: null, partial: "", error: "", problem: null, sources: null, retried: auto });
  store.saveConversation(conversation);  // asked (or edited) and pending: a reload shows it so
  resetTurn(view);
  const step = el("p", { class: "step", role: "status", text: "Searching the abstracts…" });
  view.answer.before(step);
  chat.follow = true;
  view.turn.scrollIntoView({ block: "nearest" });
  let text = "";
  let saving = null;
  try {
    const final = await streamAnswer(data.question, historyBefore(conversation, data), {
      sources: (event) => {
        data.sources = event.sources;
        showSearched(view, data.question, event.question);
        showRetrieved(view, data, openFrom);
        step.textContent = "Writing the answer…";
        follow();
      },
      delta: (piece) => {
        text += piece;
        data.partial = text;
        view.answer.classList.add("streaming");
        renderMarkdown(view.answer, text.replace(PARTIAL_MARKER, ""), markerFor(view, data, openFrom));
        saving = saving || setTimeout(() => { saving = null; store.saveConversation(conversation); }, SAVE_EVERY_MS);
        follow();
      },
    }, controller.signal, data.scope || {});
    data.status = "done";
    data.final = final;
    drawDone(view, data);
    highlightOpened(view, data);
  } catch (err) {
    if (chat.leaving) {
      data.status = "pending";  // the page is going away: not an error of the service
    } else if (err.name === "AbortError") {
      data.status = "stopped";
      renderStopped(view, data);
    } else {
      data.status = "error";
      data.problem = explain(err);
      data.error = `${data.problem.title} ${data.problem.advice}`.trim();
      renderError(view, data, conversation);
    }
  } finally {
    clearTimeout(saving);
    step.remove();
    view.answer.setAttribute("aria-busy", "false");
    store.saveConversation(conversation);
    if (chat.controller === controller) {
      chat.controller = null;
      setBusy(false);
      if (conversation === chat.conversation && document.querySelectorAll("#conversation .turn").length !== conversation.turns.length) {
        showConversation(conversation);  // another tab asked here meanwhile: its questions were merged on save
      }
      refreshActions();
      follow();
    }
  }
}

function drawDone(view, data) {
  renderFinal(view, data, openFrom);
  view.turn.append(actions(view, data));
}

// A citation opened while the answer was still written had no quote to mark: mark it now.
function highlightOpened(view, data) {
  const opened = chat.openedMidStream;
  chat.openedMidStream = null;
  if (!opened || opened.view !== view || !document.getElementById("panel").dataset.paper) return;
  if (document.getElementById("panel").dataset.paper !== opened.paperId) return;
  const cite = view.answer.querySelector(`.cite[data-n="${opened.n}"][data-k="${opened.k}"]`) || view.answer.querySelector(`.cite[data-n="${opened.n}"]`);
  const queue = data.final.citations.filter((c) => c.n === opened.n);
  const citation = queue[Math.min(opened.k, queue.length - 1)];
  if (cite && citation && citation.end > citation.start) chat.openPaper(opened.paperId, [citation.start, citation.end], () => cite);
}

function openFrom(view, button, paperId, span, selector) {
  const turn = view.turn;
  if (!span && button.classList.contains("cite") && !view.data.final) {
    chat.openedMidStream = { view, paperId, n: Number(button.dataset.n), k: Number(button.dataset.k) };
  }
  chat.openPaper(paperId, span, () => (button.isConnected ? button : selector && turn.querySelector(selector)));
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
      if (data.final.sources && !data.final.insufficient_evidence) showRetrieved(view, { ...data, sources: data.final.sources }, openFrom);
      drawDone(view, data);
    } else if (data.status === "error") renderError(view, data, conversation, false);
    else {
      if (data.status === "pending") data.cut = true;  // the page was closed or reloaded while it was written
      data.status = "stopped";
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
  document.getElementById("share").disabled = !chat.conversation.turns.length;
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

function renderStopped(view, data) {
  view.answer.classList.remove("streaming");
  if (data.partial) renderMarkdown(view.answer, data.partial.replace(PARTIAL_MARKER, ""), markerFor(view, data, openFrom));
  const said = data.cut ? "Cut short: the page was closed or reloaded before the answer was complete."
    : data.partial ? "Stopped before the answer was complete." : "Stopped before any answer was written.";
  view.answer.after(el("p", { class: "stopped", text: said }));
  view.turn.append(actions(view, data));
}

// The error in plain words; a wait the server named is counted down, then the question is asked
// again once on its own (`live`: only for an error that just happened, not one shown after a reload).
function renderError(view, data, conversation, live = true) {
  const problem = data.problem || { title: "Something went wrong.", advice: data.error, detail: "", wait: 0 };
  view.answer.className = "answer error";
  view.answer.replaceChildren(...errorNodes(problem));
  if (live && problem.wait && !data.retried) {
    const line = el("p", { class: "wait" });
    const cancel = el("button", { type: "button", class: "secondary", text: "Don't ask again" });
    const box = el("div", { class: "turn-actions waiting" }, line, cancel);
    view.turn.append(box);
    const stopCounting = countdown(line, problem.wait, () => {
      box.remove();
      if (!isBusy() && data.status === "error") run(conversation, data, view, true);
      else view.turn.append(actions(view, data));
    });
    cancel.addEventListener("click", () => {
      stopCounting();
      box.remove();
      data.retried = true;
      view.turn.append(actions(view, data));
      refreshActions();
      view.turn.querySelector(".retry").focus();
    });
    return;
  }
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
  const edit = el("button", { type: "button", class: "secondary edit", text: "Edit question" });
  edit.addEventListener("click", () => editQuestion(view, (question) => {
    if (isBusy()) return;
    data.question = question;
    view.turn.querySelector(".q").textContent = question;
    run(chat.conversation, data, view);
  }));
  box.append(again, edit);
  return box;
}

// Only the newest turn can be asked again: the later turns were asked with its answer.
function refreshActions() {
  const turns = [...document.querySelectorAll("#conversation .turn")];
  turns.forEach((turn, i) => {
    for (const button of turn.querySelectorAll(".again, .retry, .edit")) button.hidden = i !== turns.length - 1;
  });
}
