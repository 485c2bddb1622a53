// Taking an answer or a conversation away: Copy (plain text with numbered sources) and Export
// (Markdown with every source and quote).
"use strict";

import { announce, el } from "./dom.js";
import { describeScope } from "./scope.js";
import * as store from "./store.js";
import { summarize } from "./verdicts.js";

const SHARED = "qa-service conversation";  // the `format` of a shared conversation file

// Each cited source once, with every sentence quoted from it.
export function citedSources(final) {
  const byN = new Map();
  for (const c of final.citations) {
    const list = byN.get(c.n) || [];
    if (!list.some((x) => x.quote === c.quote)) list.push(c);
    byN.set(c.n, list);
  }
  return [...byN.entries()].sort((a, b) => a[0] - b[0]).map(([n, citations]) => ({ n, citations }));
}

export function answerAsText(data) {
  const final = data.final;
  if (final.refusal_reason === "no_match") return final.refusal_explanation || "No paper matches these filters.";
  if (final.insufficient_evidence) return `The abstracts don't answer this. ${final.refusal_explanation || ""}`.trim();
  const sources = citedSources(final).map(({ n, citations }) => `[${n}] ${citations[0].label} (${citations[0].paper_id})`);
  return sources.length ? `${final.answer.trim()}\n\nSources:\n${sources.join("\n")}` : final.answer.trim();
}

export async function copyAnswer(data, button) {
  const text = answerAsText(data);
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const area = el("textarea", { class: "offscreen", readonly: true, "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
    button.focus();
  }
  button.textContent = "Copied";
  announce("Answer copied with its sources.");
  setTimeout(() => { button.textContent = "Copy"; }, 2000);
}

// The conversation as Markdown: each question, its answer, and its sources with their quotes.
export function conversationAsMarkdown(conversation) {
  const out = [`# ${conversation.title || "Conversation"}`, "", `Asked the ICLR 2026 abstracts (qa-service), ${new Date(conversation.updated).toISOString().slice(0, 10)}.`];
  for (const data of conversation.turns) {
    out.push("", `## ${data.question.replace(/\s+/g, " ")}`, "");
    if (data.status !== "done") {
      out.push(data.status === "error" ? `_Error: ${data.error}_` : `${data.partial || ""}\n\n_Stopped before the answer was complete._`.trim());
      continue;
    }
    const final = data.final;
    if (final.asked && final.question && final.asked !== final.question) out.push(`_Searched as: ${final.question}_`, "");
    const within = describeScope(final, data.scope);
    if (within) out.push(`_Searched within: ${within}_`, "");
    if (final.refusal_reason === "no_match") {
      out.push(`> ${final.refusal_explanation || "No paper matches these filters."}`);
      continue;
    }
    if (final.insufficient_evidence) {
      out.push(`> The abstracts don't answer this. ${final.refusal_explanation || ""}`.trim());
      continue;
    }
    out.push(final.answer.trim());
    const check = summarize(final.sentences, final.issues);
    if (check) out.push("", `_${check}_`);
    const cited = citedSources(final);
    if (cited.length) {
      out.push("", "Sources:", "");
      for (const { n, citations } of cited) {
        out.push(`${n}. ${citations[0].label} (${citations[0].paper_id})`);
        for (const c of citations) out.push(`   > ${c.quote}`);
      }
    }
  }
  return `${out.join("\n")}\n`;
}

export function exportConversation(conversation) {
  if (!conversation.turns.length) return;
  download(conversation, new Blob([conversationAsMarkdown(conversation)], { type: "text/markdown" }), "md");
  announce("Conversation exported as Markdown.");
}

// The conversation as a file that opens in this page (Past conversations, "Open a shared conversation file").
export function shareConversation(conversation) {
  if (!conversation.turns.length) return;
  const turns = conversation.turns.map(({ question, status, final, partial, error, scope, id, at }) => ({ question, status, final, partial, error, scope, id, at }));
  const body = JSON.stringify({ format: SHARED, version: 1, conversation: { ...conversation, turns } }, null, 1);
  download(conversation, new Blob([body], { type: "application/json" }), "qa.json");
  announce("Conversation saved as a file to share.");
}

// Read a shared file: {conversation} kept in this browser under a new id, or {error} in plain words.
export async function openSharedFile(file) {
  let data;
  try {
    data = JSON.parse(await file.text());
  } catch {
    return { error: "This file is not a shared conversation (it is not JSON)." };
  }
  const conversation = data && data.format === SHARED && data.conversation;
  const turns = conversation && Array.isArray(conversation.turns) ? conversation.turns.filter(validTurn) : [];
  if (!turns.length) return { error: "This file holds no conversation this page can open." };
  const opened = { ...store.newConversation(), title: String(conversation.title || turns[0].question).slice(0, 120),
    updated: Date.now(), turns: turns.map(readTurn) };
  store.restoreConversation(opened);
  return { conversation: opened };
}

function validTurn(t) {
  if (!t || typeof t.question !== "string" || !t.question.trim()) return false;
  return t.status !== "done" || (t.final && typeof t.final.answer === "string");
}

// A turn as the page draws it, whatever the file left out.
function readTurn(t) {
  const turn = { id: store.newTurnId(), at: Number(t.at) || 0, question: t.question, scope: {}, partial: String(t.partial || ""), error: String(t.error || "") };
  if (t.status !== "done") return { ...turn, status: t.status === "error" ? "error" : "stopped" };
  const f = t.final;
  const list = (x) => (Array.isArray(x) ? x.filter((item) => item && typeof item === "object") : []);
  const cited = (c) => Number.isInteger(c.n) && typeof c.quote === "string" && typeof c.paper_id === "string" && typeof c.label === "string";
  return { ...turn, status: "done", final: { ...f, answer: f.answer, citations: list(f.citations).filter(cited),
    sources: list(f.sources).filter((x) => Number.isInteger(x.n) && typeof x.label === "string" && typeof x.paper_id === "string"),
    sentences: list(f.sentences).filter((x) => Number.isInteger(x.start) && Number.isInteger(x.end) && typeof x.text === "string" && Array.isArray(x.cites)),
    warnings: list(f.warnings), issues: list(f.issues), did_you_mean: list(f.did_you_mean), corpora: list(f.corpora),
    filters: f.filters && typeof f.filters === "object" ? f.filters : {}, model: String(f.model || ""),
    timings_ms: { total: Number((f.timings_ms || {}).total) || 0 } } };
}

function download(conversation, blob, extension) {
  const url = URL.createObjectURL(blob);
  const name = (conversation.title || "conversation").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation";
  const link = el("a", { href: url, download: `${name}.${extension}`, class: "offscreen" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
