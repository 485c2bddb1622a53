// Conversations kept in this browser (localStorage), so a reload keeps them and past ones can be
// reopened or deleted. Nothing leaves the browser.
"use strict";

const KEY = "qa-conversations";
const CURRENT = "qa-current-conversation";
const KEEP = 30;  // conversations kept; the oldest go first (localStorage holds ~5 MB)

export function listConversations() {
  try {
    const all = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(all) ? all.filter((c) => c && c.id && Array.isArray(c.turns)) : [];
  } catch {
    return [];
  }
}

export function getConversation(id) {
  return listConversations().find((c) => c.id === id) || null;
}

export function newConversation() {
  return { id: `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`, title: "", updated: Date.now(), turns: [] };
}

// A new turn's identity, so two tabs on one conversation can merge their questions.
export function newTurnId() {
  return `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
}

// Questions another tab added to this conversation since we read it go in too, in the order asked;
// true when there were any (the caller redraws).
export function mergeFromStorage(conversation) {
  const stored = getConversation(conversation.id);
  if (!stored) return false;
  const byId = new Map(stored.turns.filter((t) => t.id).map((t) => [t.id, t]));
  let changed = false;
  const turns = conversation.turns.map((t) => {
    const other = byId.get(t.id);
    byId.delete(t.id);
    if (other && other.status === "done" && t.status !== "done" && t.status !== "pending") {
      changed = true;
      return other;  // the other tab finished the answer this copy saw cut
    }
    return t;
  });
  if (!byId.size && !changed) return false;
  conversation.turns = [...turns, ...byId.values()].sort((a, b) => (a.at || 0) - (b.at || 0));
  return true;
}

// Save (or replace) one conversation, newest first; an empty one is not kept.
export function saveConversation(conversation) {
  if (!conversation.turns.length) return;
  mergeFromStorage(conversation);
  conversation.updated = Date.now();
  conversation.title = conversation.turns[0].question.slice(0, 120);  // the first question, as edited
  let all = [conversation, ...listConversations().filter((c) => c.id !== conversation.id)].slice(0, KEEP);
  for (;;) {
    try {
      localStorage.setItem(KEY, JSON.stringify(all));
      return;
    } catch {
      if (all.length <= 1) return;  // storage full or off: the page still works, it just forgets
      all = all.slice(0, -1);
    }
  }
}

export function deleteConversation(id) {
  localStorage.setItem(KEY, JSON.stringify(listConversations().filter((c) => c.id !== id)));
  if (currentId() === id) localStorage.removeItem(CURRENT);
}

export function currentId() {
  try {
    return localStorage.getItem(CURRENT);
  } catch {
    return null;
  }
}

export function setCurrentId(id) {
  try {
    localStorage.setItem(CURRENT, id);
  } catch { /* storage off: nothing to remember */ }
}

// Put back a conversation as it was (Undo of Delete, or a shared file opened here).
export function restoreConversation(conversation) {
  const all = [conversation, ...listConversations().filter((c) => c.id !== conversation.id)]
    .sort((a, b) => (b.updated || 0) - (a.updated || 0)).slice(0, KEEP);
  try {
    localStorage.setItem(KEY, JSON.stringify(all));
  } catch { /* storage full or off */ }
}
