// Building page nodes from text: every string from the model or an abstract becomes a text node.
"use strict";

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

// `text` with every case-insensitive occurrence of `query` wrapped in <mark>.
export function highlighted(text, query) {
  const nodes = [];
  const needle = query.trim().toLowerCase();
  const hay = text.toLowerCase();
  let last = 0;
  if (needle && hay.length === text.length) {
    for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) {
      if (at > last) nodes.push(document.createTextNode(text.slice(last, at)));
      nodes.push(el("mark", { text: text.slice(at, at + needle.length) }));
      last = at + needle.length;
    }
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

// Say something to screen readers without moving focus.
export function announce(message) {
  const region = document.getElementById("announce");
  region.textContent = "";
  requestAnimationFrame(() => { region.textContent = message; });
}

// Is the user typing somewhere (where single-key shortcuts must not fire)?
export function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

const URL_IN_TEXT = /https?:\/\/[^\s<>()[\]"']*[^\s<>()[\]"'.,;:!?]/g;

// `text` as nodes with every http(s) URL in it a link (opened in a new tab).
export function linkified(text) {
  const nodes = [];
  let last = 0;
  for (const m of text.matchAll(URL_IN_TEXT)) {
    if (m.index > last) nodes.push(document.createTextNode(text.slice(last, m.index)));
    nodes.push(el("a", { href: m[0], target: "_blank", rel: "noopener noreferrer nofollow", text: m[0] }));
    last = m.index + m[0].length;
  }
  if (last < text.length || !nodes.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}
