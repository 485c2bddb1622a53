// Each sentence's check, shown on the answer as it was written: the text of every unit the server
// checked (answer.sentences: start, end, kind, verdict, cites, quotes, reason) is wrapped in
// <span class="sent">, and a mark after it says the verdict with an icon and words (the words are
// the mark's accessible name; the reason shows on hover and focus). The service's own sentences
// look like the service speaking, not like a quote. Everything is built as elements and text.
"use strict";

import { el } from "./dom.js";

const VERDICTS = {
  supported: { icon: "✓", label: "Supported", says: "its cited abstract states it" },
  contradicted: { icon: "✗", label: "Contradicted", says: "a cited abstract says otherwise" },
  unverified: { icon: "?", label: "Not confirmed", says: "the cited abstracts do not confirm it" },
  uncited: { icon: "?", label: "Not confirmed", says: "it cites no abstract" },
};
const SERVICE = { icon: "i", label: "Note from the service", says: "the service says this itself; it is not a quote" };
const BLOCKS = new Set(["P", "LI", "UL", "OL", "BLOCKQUOTE", "TABLE", "THEAD", "TBODY", "TR", "TD", "TH", "DIV", "PRE"]);
const QUOTE_CHARS = 180;  // the quote shown with a mark's reason is cut here
const LEAD_IN = /:\s*$/;

// What a sentence is for the reader: "claim" (with a verdict), "service" or "structure" (no mark).
export function role(sentence) {
  if (sentence.kind === "service") return "service";
  if (sentence.kind === "structure" || sentence.verdict === "not_checked") return "structure";
  const words = sentence.text.replace(/\[[\d\s,–-]+\]/g, "").trim();
  if (!sentence.cites.length && (LEAD_IN.test(words) || /^#/.test(words) || !/[\p{L}\p{N}]/u.test(words))) return "structure";
  return "claim";
}

// The sentence's verdict as the page says it: {icon, label, says} (null for structure).
export function describe(sentence) {
  const kind = role(sentence);
  if (kind === "structure") return null;
  const base = kind === "service" ? SERVICE : VERDICTS[sentence.verdict] || VERDICTS.unverified;
  return { ...base, says: kind === "service" ? base.says : sentence.reason || base.says, kind };
}

// Where each sentence stands in `answer`: its own offsets when they hold its text, else its text found in order.
function locate(answer, sentences) {
  let from = 0;
  return sentences.map((s) => {
    if (s.end > s.start && (!s.text || answer.slice(s.start, s.end) === s.text)) {
      from = s.end;
      return [s.start, s.end];
    }
    const at = s.text ? answer.indexOf(s.text, from) : -1;
    if (at < 0) return null;
    from = at + s.text.length;
    return [at, from];
  });
}

// Mark every sentence of the answer rendered in `container` (by renderMarkdown, from `answer`).
// `open(quote)` opens a quote in the abstract panel; `cited(n)` names source n.
export function markSentences(container, answer, sentences, { open, cited } = {}) {
  if (!sentences || !sentences.length) return;
  const ranges = locate(answer, sentences);
  const which = (offset) => ranges.findIndex((r) => r && r[0] <= offset && offset < r[1]);
  wrap(container, which);
  sentences.forEach((sentence, i) => {
    const pieces = [...container.querySelectorAll(`.sent[data-s="${i}"]`)];
    if (!pieces.length) return;
    const seen = describe(sentence);
    const kind = seen ? seen.kind : "structure";
    for (const piece of pieces) piece.classList.add(kind === "claim" ? `s-${sentence.verdict}` : `s-${kind}`);
    nameCitations(pieces, i, cited);
    if (!seen) return;
    const mark = markFor(sentence, i, seen, pieces, open, cited);
    if (kind === "service") outermost(pieces[0], "firstChild").before(mark, " ");
    else outermost(pieces[pieces.length - 1], "lastChild").after(mark);
  });
  for (const block of container.querySelectorAll("p, li")) {
    const own = [...block.querySelectorAll(":scope > .s-service, :scope > strong > .s-service")].map((p) => p.textContent).join("");
    if (own.trim() && own.replace(/\s+/g, "") === block.textContent.replace(/\s+/g, "")) block.classList.add("service-note");
  }
}

// Split the text under `parent` at sentence boundaries and wrap each run of one sentence in a span.
function wrap(parent, which) {
  const units = [];
  for (const child of [...parent.childNodes]) {
    if (child.nodeType === Node.TEXT_NODE) units.push(...splitText(child, which));
    else if (child.nodeType !== Node.ELEMENT_NODE) units.push({ node: child, s: -1 });
    else if (BLOCKS.has(child.tagName)) {
      wrap(child, which);
      units.push({ node: child, s: -1 });
    } else {
      const s = sentenceOf(child, which);
      if (s === null) wrap(child, which);
      units.push({ node: child, s: s === null ? -1 : s });
    }
  }
  let run = null;
  for (const unit of units) {
    if (unit.s < 0) { run = null; continue; }
    if (!run || run.dataset.s !== String(unit.s)) {
      run = el("span", { class: "sent", "data-s": unit.s });
      unit.node.before(run);
    }
    run.append(unit.node);
  }
}

function splitText(node, which) {
  const at = node._at;
  if (!at) return [{ node, s: -1 }];
  const out = [];
  let from = 0;
  for (let k = 1; k <= node.data.length; k++) {
    if (k < node.data.length && which(at[k]) === which(at[from])) continue;
    const piece = document.createTextNode(node.data.slice(from, k));
    piece._at = at.slice(from, k + 1);
    out.push({ node: piece, s: which(at[from]) });
    from = k;
  }
  node.replaceWith(...out.map((u) => u.node));
  return out;
}

// The one sentence an inline element lies in; null when it spans several (or none is known).
function sentenceOf(element, which) {
  const offsets = [];
  if (element._at) offsets.push(element._at[0], element._at[1] - 1);
  const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    if (text._at && text.data.length) offsets.push(text._at[0], text._at[text.data.length - 1]);
  }
  for (const cite of element.querySelectorAll(".cite")) if (cite._at) offsets.push(cite._at[0], cite._at[1] - 1);
  if (!offsets.length) return null;
  const found = new Set(offsets.map(which));
  return found.size === 1 && !found.has(-1) ? [...found][0] : null;
}

// Climb out of inline parents while `node` is their first (or last) child, so a mark is not bold.
function outermost(node, end) {
  let at = node;
  while (at.parentElement && !BLOCKS.has(at.parentElement.tagName) && at.parentElement[end] === at && !at.parentElement.classList.contains("answer")) {
    at = at.parentElement;
  }
  return at;
}

function quoteLine(quote, cited) {
  const text = quote.quote.length > QUOTE_CHARS ? `${quote.quote.slice(0, QUOTE_CHARS).trimEnd()}…` : quote.quote;
  return `[${quote.n}] ${cited ? cited(quote.n) : quote.label}: “${text}”`;
}

function markFor(sentence, i, seen, pieces, open, cited) {
  const quote = (sentence.quotes || []).find((q) => q.supported) || (sentence.quotes || [])[0];
  const words = `${seen.label}: ${seen.says}.`;
  const tip = quote && seen.kind === "claim" ? `${words}\n${quoteLine(quote, cited)}` : words;
  const mark = el("button", {
    type: "button", class: `verdict v-${seen.kind === "claim" ? sentence.verdict : seen.kind}`, "data-icon": seen.icon, "data-tip": tip,
    "aria-label": `Sentence ${i + 1}, ${tip.replace("\n", " ")}`,
  });
  const hot = (on) => { for (const piece of pieces) piece.classList.toggle("hot", on); };
  mark.addEventListener("pointerenter", () => { place(mark); hot(true); });
  mark.addEventListener("pointerleave", () => { hot(false); mark.classList.remove("quiet"); });
  mark.addEventListener("focus", () => { place(mark); hot(true); });
  mark.addEventListener("blur", () => { hot(false); mark.classList.remove("quiet"); });
  mark.addEventListener("keydown", (event) => {  // Esc hides the reason (WCAG 1.4.13), before it closes anything else
    if (event.key !== "Escape" || mark.classList.contains("quiet")) return;
    event.stopPropagation();
    mark.classList.add("quiet");
  });
  if (quote && open && quote.end > quote.start) mark.addEventListener("click", () => open(quote, mark));
  return mark;
}

// Show the reason on the side of the mark that has room, so it never runs off a phone's screen.
function place(mark) {
  const rect = mark.getBoundingClientRect();
  mark.dataset.side = rect.left > window.innerWidth / 2 ? "left" : "right";
}

// Give each citation button the sentence it belongs to: two [1] of one answer open different quotes.
function nameCitations(pieces, i, cited) {
  for (const piece of pieces) {
    for (const cite of piece.querySelectorAll(".cite")) {
      const n = Number(cite.dataset.n);
      cite.setAttribute("aria-label", `Source ${n}${cited ? `: ${cited(n)}` : ""}, cited by sentence ${i + 1}`);
    }
  }
}

// The check of the whole answer in plain words ("" when nothing needs a second look).
export function summarize(sentences, issues = []) {
  const claims = (sentences || []).filter((s) => role(s) === "claim");
  const contradicted = claims.filter((s) => s.verdict === "contradicted").length;
  const unconfirmed = claims.filter((s) => s.verdict === "unverified" || s.verdict === "uncited").length;
  const parts = [];
  const count = (n, one, many) => `${n === 1 ? "1 sentence" : `${n} sentences`} ${n === 1 ? one : many}`;
  if (contradicted) parts.push(`${count(contradicted, "is", "are")} contradicted by the abstract it cites (marked ✗).`);
  if (unconfirmed) parts.push(`${count(unconfirmed, "is", "are")} not confirmed by the cited abstracts (marked ?).`);
  const dropped = (issues || []).filter((x) => x.kind === "unknown_source").map((x) => `[${x.detail}]`);
  if (dropped.length) parts.push(`The model cited ${dropped.join(", ")}, which was not among the sources searched; the page left it out.`);
  return parts.length ? `Check before relying on it: ${parts.join(" ")}` : "";
}
