// Taking an answer or a conversation away: Copy (plain text with numbered sources) and Export
// (Markdown with every source and quote).
"use strict";

import { announce, el } from "./dom.js";
import { describeScope } from "./scope.js";

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
  const blob = new Blob([conversationAsMarkdown(conversation)], { type: "text/markdown" });
  const url = URL.createObjectURL(blob);
  const name = (conversation.title || "conversation").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "conversation";
  const link = el("a", { href: url, download: `${name}.md`, class: "offscreen" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  announce("Conversation exported as Markdown.");
}
