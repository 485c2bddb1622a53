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

// Save (or replace) one conversation, newest first; an empty one is not kept.
export function saveConversation(conversation) {
  if (!conversation.turns.length) return;
  conversation.updated = Date.now();
  conversation.title = conversation.title || conversation.turns[0].question.slice(0, 120);
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
