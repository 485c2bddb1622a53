// Drawing one answer: what was searched, the papers retrieved, the answer as the model wrote it
// with its citation buttons and each sentence's check, the cited sources (title, authors, year,
// venue, a link to the paper) with their quotes, and a plain-words line on what to check.
// `openFrom(view, button, paperId, span, selector)` opens an abstract in the panel.
"use strict";

import { paperById } from "./api.js";
import { el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { describeScope } from "./scope.js";
import { citedSources } from "./share.js";
import { markSentences, role, summarize } from "./verdicts.js";

const AUTHORS_SHOWN = 3;  // more authors than this: the first ones and "et al."

export function showSearched(view, asked, searched) {
  if (!searched || searched.trim().toLowerCase() === asked.trim().toLowerCase() || view.turn.querySelector(".searched")) return;
  view.turn.querySelector(".q").after(el("p", { class: "searched" }, el("span", { class: "label", text: "Searched as: " }), searched));
}

// The papers retrieved for the question, shown before the answer is written.
export function showRetrieved(view, data, openFrom) {
  if (!data.sources || !data.sources.length) return;
  const items = data.sources.map((s) => el("li", {}, el("button", {
    type: "button", class: "retrieved-open", text: `[${s.n}] ${s.label}`, title: s.paper_id,
    onclick: (event) => openFrom(view, event.currentTarget, s.paper_id, null, `.retrieved-open[data-n="${s.n}"]`),
    "data-n": s.n,
  })));
  const count = data.sources.length === 1 ? "1 abstract" : `${data.sources.length} abstracts`;
  const box = el("div", { class: "retrieved" }, el("p", { class: "label", id: `ret-${view.id}`, text: `Searched ${count}:` }),
    el("ol", { "aria-labelledby": `ret-${view.id}` }, ...items));
  view.answer.before(box);
}

// A citation marker: a button that opens the cited abstract at the quoted sentence.
export function markerFor(view, data, openFrom) {
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

export function renderFinal(view, data, openFrom) {
  const { turn, answer } = view;
  const final = data.final;
  answer.className = "answer";
  answer._markdown = null;  // drawn afresh: the sentence marks go over the final text
  if (final.refusal_reason === "no_match") {  // the filters left no paper: not the same as an unanswered question
    answer.classList.add("refusal");
    answer.replaceChildren(el("p", {}, el("strong", { text: "No paper matches these filters." }),
      " Remove a filter or choose another corpus."));
  } else if (final.insufficient_evidence) {
    answer.classList.add("refusal");
    answer.replaceChildren(el("p", {}, el("strong", { text: "The abstracts don't answer this." }),
      final.refusal_explanation ? ` ${final.refusal_explanation}` : null));
  } else {
    renderMarkdown(answer, final.answer, markerFor(view, data, openFrom));
    markSentences(answer, final.answer, final.sentences, {
      open: (quote, mark) => openFrom(view, mark, quote.paper_id, [quote.start, quote.end], null),
      cited: (n) => (sourceOf(data, n) || { label: "" }).label,
    });
  }
  showSearched(view, final.asked || data.question, final.question);
  const within = describeScope(final, data.scope);
  if (within) answer.before(el("p", { class: "scope-used" }, el("span", { class: "label", text: "Searched within: " }), within));
  const cited = citedSources(final);
  if (cited.length) {
    const list = el("ol", { class: "sources", "aria-label": "Cited sources" });
    const several = (final.corpora || []).length > 1;
    for (const { n, citations } of cited) list.append(sourceEntry(view, n, citations, several, openFrom));
    turn.append(list);
  }
  const check = final.insufficient_evidence ? "" : warningText(final);
  if (check) turn.append(el("p", { class: "warnings", text: check }));
  if (final.did_you_mean && final.did_you_mean.length) turn.append(el("p", { class: "did-you-mean", text: `Did you mean ${final.did_you_mean.join(" or ")}?` }));
  turn.append(el("p", { class: "meta", text: metaText(final) }));
}

// What to check, in plain words: from the sentences' verdicts (older answers: their warnings, made readable).
function warningText(final) {
  if (final.sentences && final.sentences.length) return summarize(final.sentences, final.issues);
  const warnings = (final.warnings || []).map((w) => w.replace(/\s+/g, " "));
  return warnings.length ? `Check before relying on it: ${warnings.join("; ")}.` : "";
}

function metaText(final) {
  const who = final.model === "extractive" ? "Quoted from the abstracts" : `Written by ${final.model}`;
  const seconds = `${(final.timings_ms.total / 1000).toFixed(1)} s`;
  if (final.insufficient_evidence) return `${who} · no answer given · ${seconds}`;
  const claims = (final.sentences || []).filter((s) => role(s) === "claim");
  const supported = claims.filter((s) => s.verdict === "supported").length;
  const verdict = !claims.length ? (final.grounded ? "every sentence cited and supported" : "not fully supported by the sources")
    : supported === claims.length ? "every sentence supported by its source"
      : `${supported} of ${claims.length} sentences supported by their sources`;
  return `${who} · ${verdict} · ${seconds}`;
}

function sourceEntry(view, n, citations, several, openFrom) {
  const first = citations.find((c) => c.supported) || citations[0];
  const allSupported = citations.every((c) => c.supported);
  const mark = allSupported ? el("span", { class: "mark-ok", text: "✓ supported by this abstract" })
    : el("span", { class: "mark-bad", text: citations.some((c) => c.supported) ? "✗ partly not supported by this abstract" : "✗ not supported by this abstract" });
  const open = el("button", { type: "button", class: "source-open", text: `[${n}] ${first.label}`, "data-n": n,
    onclick: (event) => openFrom(view, event.currentTarget, first.paper_id, [first.start, first.end], `.source-open[data-n="${n}"]`) });
  const quotes = el("ul", { class: "quotes" }, ...citations.map((c) => el("li", { class: c.supported ? "quote" : "quote unsupported", text: `“${c.quote}”` })));
  const id = several && first.corpus ? `${first.paper_id} · ${first.corpus}` : first.paper_id;
  const byline = el("p", { class: "source-byline", hidden: true });
  const entry = el("li", { id: `src-${view.id}-${n}` }, open, byline, el("span", { class: "paper-id", text: id }), " ", mark, quotes);
  paperById(first.paper_id).then((paper) => describeSource(paper, n, open, byline), () => {});
  return entry;
}

// Fill a source's title, first authors, venue, year and link from its paper record.
function describeSource(paper, n, open, byline) {
  const name = paper.title || paper.label;
  if (name) open.textContent = `[${n}] ${name}`;
  const parts = paperFacts(paper);
  const nodes = parts.length ? [parts.join(" · ")] : [];
  const link = paperLink(paper);
  if (link) nodes.push(nodes.length ? " · " : "", link);
  byline.replaceChildren(...nodes);
  byline.hidden = !nodes.length;
}

// ["Grace Hopper, Claude Shannon et al.", "arXiv", "2024"]: what the corpus says about a paper.
export function paperFacts(paper, shown = AUTHORS_SHOWN) {
  const authors = paper.authors || [];
  const names = authors.length > shown ? `${authors.slice(0, shown).join(", ")} et al.` : authors.join(", ");
  const venue = paper.venue || "";
  const year = paper.year ? String(paper.year) : "";
  return [names, venue, year && !venue.includes(year) ? year : ""].filter(Boolean);
}

export function paperLink(paper) {
  const safe = /^https?:\/\//i.test(paper.url || "");
  if (!safe) return null;
  return el("a", { href: paper.url, class: "paper-link", target: "_blank", rel: "noopener noreferrer",
    text: "Paper page", "aria-label": `Paper page of ${paper.title || paper.label} (opens in a new tab)` });
}
