// Browsing the corpus: the filter searches labels, ids, titles and the abstracts' text (on the
// server), and the matching words are highlighted.
"use strict";

import { getJSON } from "./api.js";
import { el, highlighted } from "./dom.js";

const SHOWN = 500;      // rows drawn at most; the count says how many matched
const TYPING_MS = 150;  // wait for a pause in typing before asking the server

const browse = { total: null, query: null, controller: null, timer: null };

// List the papers matching `query` (all when empty); `open(id, button)` opens one.
export function filterPapers(query, open, delay = false) {
  clearTimeout(browse.timer);
  if (delay) {
    browse.timer = setTimeout(() => filterPapers(query, open), TYPING_MS);
    return;
  }
  if (browse.query === query) return;
  browse.query = query;
  if (browse.controller) browse.controller.abort();
  const controller = (browse.controller = new AbortController());
  const count = document.getElementById("paper-count");
  const url = query.trim() ? `/api/papers?q=${encodeURIComponent(query.trim())}` : "/api/papers";
  load(url, query, controller).then((listing) => render(listing, query.trim(), open), (err) => {
    if (err.name === "AbortError") return;
    browse.query = null;
    count.textContent = `Could not load the papers: ${err.message}`;
  });
}

async function load(url, query, controller) {
  if (browse.total == null && query.trim()) browse.total = (await getJSON("/api/papers", { signal: controller.signal })).total;
  const listing = await getJSON(url, { signal: controller.signal });
  if (!query.trim()) browse.total = listing.total;
  return listing;
}

function render(listing, query, open) {
  const rows = listing.papers.slice(0, SHOWN).map((p) => {
    const button = el("button", { type: "button", class: "paper-open" }, ...highlighted(p.title || p.label, query));
    button.addEventListener("click", () => open(p.id, button));
    return el("li", {}, button, " ", el("span", { class: "paper-id" }, ...highlighted(p.id, query)),
      p.snippet ? el("p", { class: "snippet" }, ...highlighted(p.snippet, query)) : null);
  });
  document.getElementById("paper-list").replaceChildren(...rows);
  const of = browse.total == null ? "" : ` of ${browse.total}`;
  const more = listing.total > SHOWN ? ` (first ${SHOWN} shown)` : "";
  document.getElementById("paper-count").textContent = `${listing.total}${of} papers${more}`;
}

// Forget the listing, so the next view of it asks the server again.
export function resetBrowse() {
  browse.query = null;
}
