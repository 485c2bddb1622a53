// A small, safe Markdown renderer for model answers: paragraphs, lists, tables, code fences (with a
// copy button), block quotes, headings (shown as bold lines), emphasis, inline code, links and
// citation markers [n]. It only ever creates elements and text nodes: no HTML string is parsed, so
// model text that looks like HTML stays text. Every text node knows where its characters stand in
// the answer (`node._at`), so the sentence marks can be laid over the text as it was written.
"use strict";

import { announce } from "./dom.js";

export const MARKER = /\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]/g;  // at most 4 digits, as citations.MARKER_DIGITS: a longer number is text
const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)\s*$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const HEADING = /^(\s{0,3}#{1,6}\s+)(.*?)\s*#*\s*$/;
const QUOTE = /^(\s{0,3}>\s?)(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/;
// Inline spans, first match wins: code, link, bare URL, strong, emphasis, citation marker.
const INLINE = new RegExp([
  /(`+)([\s\S]*?[^`])\1(?!`)/.source,
  /\[([^\]\n]+)\]\((https?:\/\/[^\s()<>]+)\)/.source,
  /(https?:\/\/[^\s<>()[\]"']*[^\s<>()[\]"'.,;:!?*_])/.source,
  /\*\*(?=\S)([\s\S]*?\S)\*\*/.source,
  /__(?=\S)([\s\S]*?\S)__/.source,
  /\*(?=[^\s*])([\s\S]*?[^\s*])\*/.source,
  /(?<![\p{L}\p{N}_])_(?=\S)([\s\S]*?\S)_(?![\p{L}\p{N}_])/.source,
  /\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]/.source,
].join("|"), "gu");

// The numbers a marker names: "1", "1, 3", "2-4".
export function markerNumbers(marker) {
  const numbers = [];
  for (const part of marker.split(",")) {
    const bounds = part.split(/[-–]/).map((x) => parseInt(x, 10));
    if (bounds.length === 2 && bounds[0] <= bounds[1] && bounds[1] - bounds[0] < 50) {
      for (let n = bounds[0]; n <= bounds[1]; n++) numbers.push(n);
    } else numbers.push(...bounds.filter((n) => !Number.isNaN(n)));
  }
  return numbers;
}

// --- text with its offsets: {text, at}, at[i] the answer offset of text[i] (at[text.length]: its end) ---
function whole(text) {
  return { text, at: Array.from({ length: text.length + 1 }, (_, i) => i) };
}

function cut(src, from, to = src.text.length) {
  return { text: src.text.slice(from, to), at: src.at.slice(from, to + 1) };
}

function joinLines(pieces) {
  let text = "";
  const at = [];
  pieces.forEach((piece, i) => {
    if (i) {
      text += "\n";
      at.push(at.pop());  // the line break stands where the previous line ended
    }
    text += piece.text;
    at.push(...piece.at);
  });
  return { text, at: at.length ? at : [0] };
}

function trimmed(src) {
  const start = src.text.length - src.text.trimStart().length;
  return cut(src, start, Math.max(start, src.text.trimEnd().length));
}

// Split Markdown into blocks, each with the [start, end) of its source, so a caller that
// re-renders a growing text can keep the blocks that did not change.
export function parseBlocks(input) {
  const src = typeof input === "string" ? whole(input) : input;
  const lines = [];
  let offset = 0;
  for (const line of src.text.split("\n")) {
    lines.push({ line, src: cut(src, offset, offset + line.length), start: src.at[offset], end: src.at[offset + line.length] });
    offset += line.length + 1;
  }
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const { line, start } = lines[i];
    if (!line.trim()) { i++; continue; }
    const parsed = fenced(lines, i) || heading(lines, i) || quoted(lines, i) || table(lines, i) || list(lines, i) || paragraph(lines, i);
    blocks.push({ ...parsed.block, start, end: lines[parsed.next - 1].end });
    i = parsed.next;
  }
  return blocks;
}

function fenced(lines, i) {
  const fence = lines[i].line.match(FENCE);
  if (!fence) return null;
  let j = i + 1;
  let closed = false;
  while (j < lines.length) {
    const close = lines[j].line.match(/^\s{0,3}(```+|~~~+)\s*$/);
    if (close && close[1][0] === fence[1][0] && close[1].length >= fence[1].length) { closed = true; break; }
    j++;
  }
  const body = lines.slice(i + 1, j).map((l) => l.line).join("\n");
  return { block: { type: "code", lang: fence[2], text: body, closed }, next: closed ? j + 1 : j };
}

function heading(lines, i) {
  const match = lines[i].line.match(HEADING);
  return match ? { block: { type: "heading", src: cut(lines[i].src, match[1].length, match[1].length + match[2].length) }, next: i + 1 } : null;
}

function quoted(lines, i) {
  if (!QUOTE.test(lines[i].line)) return null;
  const body = [];
  let j = i;
  while (j < lines.length && QUOTE.test(lines[j].line)) {
    body.push(cut(lines[j].src, lines[j].line.match(QUOTE)[1].length));
    j++;
  }
  return { block: { type: "quote", src: joinLines(body) }, next: j };
}

function cells(src) {
  const inner = trimmed(src);
  const text = inner.text;
  const from = text.startsWith("|") ? 1 : 0;
  const to = text.endsWith("|") && text.length > from ? text.length - 1 : text.length;
  const out = [];
  let at = from;
  for (let k = from; k <= to; k++) {
    if (k === to || text[k] === "|") {
      out.push(trimmed(cut(inner, at, k)));
      at = k + 1;
    }
  }
  return out;
}

function table(lines, i) {
  if (!lines[i].line.includes("|") || i + 1 >= lines.length || !TABLE_RULE.test(lines[i + 1].line)) return null;
  const head = cells(lines[i].src);
  const align = cells(lines[i + 1].src).map((c) => (c.text.endsWith(":") ? (c.text.startsWith(":") ? "center" : "right") : null));
  const rows = [];
  let j = i + 2;
  while (j < lines.length && lines[j].line.trim() && lines[j].line.includes("|")) rows.push(cells(lines[j++].src));
  return { block: { type: "table", head, align, rows }, next: j };
}

function list(lines, i) {
  const item = lines[i].line.match(ITEM);
  if (!item) return null;
  const ordered = /\d/.test(item[2]);
  const items = [];
  let j = i;
  while (j < lines.length) {
    const { line, src } = lines[j];
    const next = line.match(ITEM);
    if (next && /\d/.test(next[2]) === ordered && next[1].length <= item[1].length + 1) {
      items.push({ src: cut(src, line.length - next[3].length), rest: [], number: ordered ? parseInt(next[2], 10) : null });
      j++;
    } else if (items.length && line.trim() && /^\s+/.test(line)) {
      items[items.length - 1].rest.push(cut(src, line.match(/^\s{1,4}/)[0].length));  // a wrapped line or a nested list
      j++;
    } else break;
  }
  return { block: { type: ordered ? "ol" : "ul", items }, next: j };
}

function paragraph(lines, i) {
  let j = i;
  while (j < lines.length && lines[j].line.trim() && !FENCE.test(lines[j].line) && !HEADING.test(lines[j].line)
    && !QUOTE.test(lines[j].line) && !(j > i && ITEM.test(lines[j].line)) && !(j > i && table(lines, j))) j++;
  return { block: { type: "p", src: joinLines(lines.slice(i, j).map((l) => l.src)) }, next: j };
}

// Inline Markdown as nodes; `marker(n)` builds the element for one cited number.
export function renderInline(input, marker) {
  const src = typeof input === "string" ? whole(input) : input;
  const text = src.text;
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(textNode(cut(src, last, m.index)));
    if (m[1]) {
      const body = cut(src, m.index + m[1].length, m.index + m[0].length - m[1].length);
      const padded = /^ .* $/s.test(body.text);
      out.push(element("code", textNode(padded ? cut(body, 1, body.text.length - 1) : body)));
    } else if (m[3]) out.push(link(m[4], renderInline(cut(src, m.index + 1, m.index + 1 + m[3].length), marker)));
    else if (m[5]) out.push(link(m[5], [textNode(cut(src, m.index, m.index + m[5].length))]));
    else if (m[6] || m[7]) out.push(element("strong", ...renderInline(cut(src, m.index + 2, m.index + m[0].length - 2), marker)));
    else if (m[8] || m[9]) out.push(element("em", ...renderInline(cut(src, m.index + 1, m.index + m[0].length - 1), marker)));
    else {
      for (const n of markerNumbers(m[10])) {
        const node = marker(n);
        if (node.nodeType === Node.TEXT_NODE) node._at = src.at.slice(m.index, m.index + node.data.length + 1);
        else node._at = [src.at[m.index], src.at[m.index + m[0].length]];
        out.push(node);
      }
    }
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(textNode(cut(src, last)));
  return out;
}

// A text node as written (a line break inside a paragraph shows as a space), with its offsets.
function textNode(src) {
  const node = document.createTextNode(src.text);
  node._at = src.at;
  return node;
}

function link(href, children) {
  const a = element("a", ...children);
  a.href = href;
  a.rel = "noopener noreferrer nofollow";
  a.target = "_blank";
  return a;
}

// One rendered block (an element) for a block from parseBlocks.
export function renderBlock(block, marker) {
  if (block.type === "code") return codeBlock(block);
  if (block.type === "heading") return element("p", element("strong", ...renderInline(block.src, marker)));
  if (block.type === "quote") return element("blockquote", ...blocksOf(block.src, marker));
  if (block.type === "table") return tableBlock(block, marker);
  if (block.type === "ul" || block.type === "ol") {
    const items = block.items.map((item) => element("li", ...renderInline(item.src, marker),
      ...(item.rest.length ? blocksOf(joinLines(item.rest), marker) : [])));
    const list = element(block.type, ...items);
    if (block.type === "ol" && block.items[0].number !== 1) list.setAttribute("start", String(block.items[0].number));
    return list;
  }
  return element("p", ...renderInline(block.src, marker));
}

function codeBlock(block) {
  const code = element("code", document.createTextNode(block.text));
  if (block.lang) code.dataset.lang = block.lang;
  const copy = element("button", document.createTextNode("Copy code"));
  copy.type = "button";
  copy.className = "secondary copy-code";
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(block.text);
      copy.textContent = "Copied";
      announce("Code copied.");
    } catch {
      copy.textContent = "Select the code to copy it";
    }
    setTimeout(() => { copy.textContent = "Copy code"; }, 2000);
  });
  const box = element("div", element("pre", code), copy);
  box.className = "code-block";
  return box;
}

function tableBlock(block, marker) {
  const row = (cellsOf, tag) => element("tr", ...block.head.map((_, k) => {
    const cell = element(tag, ...(cellsOf[k] ? renderInline(cellsOf[k], marker) : []));
    if (tag === "th") cell.setAttribute("scope", "col");
    if (block.align[k]) cell.style.textAlign = block.align[k];
    return cell;
  }));
  const grid = element("table", element("thead", row(block.head, "th")), element("tbody", ...block.rows.map((r) => row(r, "td"))));
  const box = element("div", grid);
  box.className = "table-wrap";
  box.tabIndex = 0;  // a wide table scrolls sideways: the keyboard can scroll it too
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", "Table");
  return box;
}

function blocksOf(src, marker) {
  return parseBlocks(src).map((block) => renderBlock(block, marker));
}

function element(tag, ...children) {
  const node = document.createElement(tag);
  node.append(...children);
  return node;
}

// Render `text` into `container`, keeping the blocks that a previous call already rendered
// from the same source (a streamed answer only grows), so focus and selection survive.
export function renderMarkdown(container, text, marker) {
  const previous = container._markdown || { text: "", nodes: new Map() };
  let common = 0;
  while (common < text.length && common < previous.text.length && text[common] === previous.text[common]) common++;
  const nodes = new Map();
  const wanted = [];
  const ordinals = new Map();  // the k-th marker [n] in the answer is the k-th citation of source n
  let cited = [];
  const counted = (n) => {
    const k = ordinals.get(n) || 0;
    ordinals.set(n, k + 1);
    cited.push(n);
    return marker(n, k);
  };
  for (const block of parseBlocks(text)) {
    const key = `${block.start}:${block.end}`;
    const old = previous.nodes.get(key);
    let node;
    if (old && block.end <= common && block.end < previous.text.length) {
      node = old;  // complete before, unchanged since: keep it, and count its markers
      for (const n of node._cited) ordinals.set(n, (ordinals.get(n) || 0) + 1);
    } else {
      cited = [];
      node = renderBlock(block, counted);
      node._cited = cited;
    }
    nodes.set(key, node);
    wanted.push(node);
  }
  const current = [...container.childNodes];
  if (current.length !== wanted.length || current.some((node, i) => node !== wanted[i])) container.replaceChildren(...wanted);
  container._markdown = { text, nodes };
}
