// The abstract panel: a side column on wide screens, a bottom sheet on narrow ones. It shows one
// paper with a quoted span highlighted; closing it gives focus (and the scroll position) back to
// the marker or button that opened it.
"use strict";

import { paperById } from "./api.js";
import { paperLink } from "./answer.js";
import { el, linkified } from "./dom.js";
import { explain } from "./errors.js";

const panel = { shown: null, opener: null, loading: null };

// Show paper `id` with characters [span[0], span[1]) marked; a no-op when already shown.
export async function showPaper(id, span) {
  const key = `${id}#${span ? span.join("-") : ""}`;
  const box = document.getElementById("panel");
  const title = document.getElementById("panel-title");
  const text = document.getElementById("panel-text");
  if (panel.shown === key && !box.hidden) return;
  panel.shown = key;
  box.hidden = false;
  box.dataset.paper = id;
  fitToScreen();
  const byline = document.getElementById("panel-byline");
  title.textContent = "Loading…";
  text.textContent = "";
  byline.hidden = true;
  const link = document.getElementById("panel-link");
  link.replaceChildren();
  document.getElementById("panel-id").textContent = id;
  box.scrollTop = 0;
  box.focus({ preventScroll: true });  // opening the panel must not scroll the page
  try {
    const paper = await paperById(id);
    if (panel.shown !== key) return;  // another paper was opened meanwhile
    title.textContent = paper.title || paper.label;
    byline.textContent = describe(paper);
    byline.hidden = !byline.textContent;
    const url = paperLink(paper);
    if (url) link.append(url);
    const body = paper.text;
    if (span && span[0] >= 0 && span[0] < span[1] && span[1] <= body.length) {
      const mark = el("mark", {}, ...linkified(body.slice(span[0], span[1])));
      text.replaceChildren(...linkified(body.slice(0, span[0])), mark, ...linkified(body.slice(span[1])));
      box.scrollTop = Math.max(0, mark.offsetTop - box.clientHeight / 3);  // scroll the panel, not the page
    } else {
      text.replaceChildren(...linkified(body));
    }
  } catch (err) {
    if (panel.shown !== key) return;
    const problem = explain(err);
    title.textContent = "Could not open the abstract";
    text.textContent = `${problem.title} ${problem.advice}`.trim();
  }
}

// Beside the conversation (wide screens), the panel ends at the bottom of the screen, however far the page is scrolled.
export function fitToScreen() {
  const box = document.getElementById("panel");
  if (box.hidden || getComputedStyle(box).position !== "sticky") {
    box.style.maxHeight = "";
    return;
  }
  const top = Math.max(box.getBoundingClientRect().top, 0);
  box.style.maxHeight = `${Math.max(200, window.innerHeight - top - 16)}px`;
}

// "Grace Hopper, Claude Shannon · arXiv · 2024": what the corpus file said about the paper, if anything.
function describe(paper) {
  const parts = [(paper.authors || []).join(", "), paper.venue || "", paper.year ? String(paper.year) : ""];
  return parts.filter((part) => part && !(part === parts[2] && parts[1].includes(part))).join(" · ");
}

// Remember what opened the panel: `find` returns it again even if it was re-rendered meanwhile.
export function rememberOpener(find) {
  panel.opener = find;
}

export function isPanelOpen() {
  return !document.getElementById("panel").hidden;
}

// Hide the panel and return focus (and scroll) to what opened it, else to `fallback`.
export function hidePanel(fallback) {
  const box = document.getElementById("panel");
  if (box.hidden) return;
  const hadFocus = box.contains(document.activeElement) || document.activeElement === document.body;
  box.hidden = true;
  delete box.dataset.paper;
  panel.shown = null;
  const opener = panel.opener && panel.opener();
  panel.opener = null;
  const target = opener && opener.isConnected ? opener : fallback;
  if (!target || !hadFocus) return;
  target.focus({ preventScroll: true });
  const rect = target.getBoundingClientRect();
  const form = document.getElementById("ask-form");
  const bottom = form && !form.closest("[hidden]") ? form.getBoundingClientRect().top : window.innerHeight;
  if (rect.top < 0 || rect.bottom > Math.min(bottom, window.innerHeight)) target.scrollIntoView({ block: "center" });
}
