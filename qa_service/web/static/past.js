// Past conversations: the list kept in this browser, searched by the words of their questions and
// answers; Delete can be undone; a shared conversation file opens here.
"use strict";

import { announce, el, highlighted } from "./dom.js";
import * as store from "./store.js";

const $ = (id) => document.getElementById(id);
const past = { deleted: null };

// Draw the list; `open(conversation)` shows one, `current()` is the open one's id, `forget(id)` drops the open one.
export function renderPast({ open, current, forget }) {
  const query = $("past-filter").value.trim().toLowerCase();
  const all = store.listConversations();
  const shown = query ? all.filter((c) => matches(c, query)) : all;
  const kept = all.length ? `${all.length} kept in this browser.` : "No past conversations yet: ask a question and it is kept here.";
  $("past-count").textContent = query ? `${shown.length} of ${all.length} match “${query}”.` : kept;
  $("past-list").replaceChildren(...shown.map((c) => row(c, current(), query, { open, current, forget })));
  const undo = $("past-undo");
  undo.replaceChildren(...(past.deleted ? undoLine({ open, current, forget }) : []));
  undo.hidden = !past.deleted;
}

function matches(conversation, query) {
  return conversation.turns.some((t) => t.question.toLowerCase().includes(query)
    || ((t.final && t.final.answer) || t.partial || "").toLowerCase().includes(query));
}

function row(c, currentId, query, actions) {
  const when = new Date(c.updated).toLocaleString("en", { dateStyle: "medium", timeStyle: "short" });
  const openButton = el("button", { type: "button", class: "past-open" }, ...highlighted(c.title || "Untitled", query));
  openButton.addEventListener("click", () => actions.open(store.getConversation(c.id) || c));
  const remove = el("button", { type: "button", class: "secondary delete", text: "Delete", "aria-label": `Delete conversation: ${c.title}` });
  remove.addEventListener("click", () => {
    store.deleteConversation(c.id);
    past.deleted = { conversation: c, wasOpen: c.id === currentId };
    if (c.id === currentId) actions.forget();
    renderPast(actions);
    announce("Conversation deleted.");
    $("past-undo").querySelector(".undo").focus();
  });
  const plural = c.turns.length === 1 ? "question" : "questions";
  return el("li", { class: c.id === currentId ? "current" : null }, openButton,
    el("span", { class: "past-meta", text: ` ${c.turns.length} ${plural} · ${when}${c.id === currentId ? " · open now" : ""}` }), " ", remove);
}

function undoLine(actions) {
  const { conversation, wasOpen } = past.deleted;
  const undo = el("button", { type: "button", class: "secondary undo", text: "Undo", "aria-label": `Undo: bring back ${conversation.title}` });
  undo.addEventListener("click", () => {
    past.deleted = null;
    store.restoreConversation(conversation);
    if (wasOpen) actions.open(conversation);
    else renderPast(actions);
    announce("Conversation brought back.");
  });
  return [el("span", { text: `Deleted “${conversation.title}”. ` }), undo];
}

// Forget the deleted one for good (the list was left).
export function dropUndo() {
  past.deleted = null;
}
