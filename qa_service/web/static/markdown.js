// A small, safe Markdown renderer for model answers: paragraphs, lists, code fences, block
// quotes, headings (shown as bold lines), emphasis, inline code and citation markers [n].
// It only ever creates elements and text nodes: no HTML string is parsed, so model text that
// looks like HTML stays text.
"use strict";

export const MARKER = /\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]/g;  // at most 4 digits, as citations.MARKER_DIGITS: a longer number is text
const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)\s*$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;
// Inline spans, first match wins: code, strong, emphasis, citation marker.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__|\*(?=[^\s*])([\s\S]*?[^\s*])\*|(?<![\p{L}\p{N}_])_(?=\S)([\s\S]*?\S)_(?![\p{L}\p{N}_])|\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]/gu;

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

// Split Markdown into blocks, each with the [start, end) of its source, so a caller that
// re-renders a growing text can keep the blocks that did not change.
export function parseBlocks(text) {
  const lines = [];
  let offset = 0;
  for (const line of text.split("\n")) {
    lines.push({ line, start: offset, end: offset + line.length });
    offset += line.length + 1;
  }
  const blocks = [];
  let i = 0;
  while (i < lines.length) {
    const { line, start } = lines[i];
    if (!line.trim()) { i++; continue; }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      let j = i + 1;
      let closed = false;
      while (j < lines.length) {
        const close = lines[j].line.match(/^\s{0,3}(```+|~~~+)\s*$/);
        if (close && close[1][0] === fence[1][0] && close[1].length >= fence[1].length) { closed = true; break; }
        body.push(lines[j].line);
        j++;
      }
      const last = closed ? j : j - 1;
      blocks.push({ type: "code", lang: fence[2], text: body.join("\n"), start, end: lines[Math.max(last, i)].end, closed });
      i = last + 1;
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      blocks.push({ type: "heading", text: heading[1], start, end: lines[i].end });
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      let j = i;
      while (j < lines.length && QUOTE.test(lines[j].line)) body.push(lines[j++].line.match(QUOTE)[1]);
      blocks.push({ type: "quote", text: body.join("\n"), start, end: lines[j - 1].end });
      i = j;
      continue;
    }
    const item = line.match(ITEM);
    if (item) {
      const ordered = /\d/.test(item[2]);
      const items = [];
      let j = i;
      while (j < lines.length) {
        const next = lines[j].line.match(ITEM);
        if (next && /\d/.test(next[2]) === ordered && next[1].length <= item[1].length + 1) {
          items.push({ text: next[3], rest: [], number: ordered ? parseInt(next[2], 10) : null });
          j++;
        } else if (items.length && lines[j].line.trim() && /^\s+/.test(lines[j].line)) {
          items[items.length - 1].rest.push(lines[j].line.replace(/^\s{1,4}/, ""));  // a wrapped line or a nested list
          j++;
        } else break;
      }
      blocks.push({ type: ordered ? "ol" : "ul", items, start, end: lines[j - 1].end });
      i = j;
      continue;
    }
    const body = [];
    let j = i;
    while (j < lines.length && lines[j].line.trim() && !FENCE.test(lines[j].line) && !HEADING.test(lines[j].line)
      && !QUOTE.test(lines[j].line) && !(j > i && ITEM.test(lines[j].line))) body.push(lines[j++].line.trim());
    blocks.push({ type: "p", text: body.join("\n"), start, end: lines[j - 1].end });
    i = j;
  }
  return blocks;
}

// Inline Markdown as nodes; `marker(n)` builds the element for one cited number.
export function renderInline(text, marker) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(...softBreaks(text.slice(last, m.index)));
    if (m[1]) out.push(element("code", document.createTextNode(m[2].replace(/^ (.*) $/s, "$1"))));
    else if (m[3] || m[4]) out.push(element("strong", ...renderInline(m[3] || m[4], marker)));
    else if (m[5] || m[6]) out.push(element("em", ...renderInline(m[5] || m[6], marker)));
    else for (const n of markerNumbers(m[7])) out.push(marker(n));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(...softBreaks(text.slice(last)));
  return out;
}

// One rendered block (an element) for a block from parseBlocks.
export function renderBlock(block, marker) {
  if (block.type === "code") {
    const code = element("code", document.createTextNode(block.text));
    if (block.lang) code.dataset.lang = block.lang;
    return element("pre", code);
  }
  if (block.type === "heading") return element("p", element("strong", ...renderInline(block.text, marker)));
  if (block.type === "quote") return element("blockquote", ...blocksOf(block.text, marker));
  if (block.type === "ul" || block.type === "ol") {
    const list = element(block.type, ...block.items.map((item) => element("li", ...renderInline(item.text, marker),
      ...(item.rest.length ? blocksOf(item.rest.join("\n"), marker) : []))));
    if (block.type === "ol" && block.items[0].number !== 1) list.setAttribute("start", String(block.items[0].number));
    return list;
  }
  return element("p", ...renderInline(block.text, marker));
}

function blocksOf(text, marker) {
  return parseBlocks(text).map((block) => renderBlock(block, marker));
}

// A line break inside a paragraph is a space in Markdown.
function softBreaks(text) {
  return [document.createTextNode(text.replace(/\s*\n\s*/g, " "))];
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
