// Where a question is asked: the corpus picker and the metadata filter chips (year, venue, author,
// keyword). Sent with each question, kept with its turn, and shown on each answer.
"use strict";

import { getJSON } from "./api.js";
import { announce, el } from "./dom.js";

const FIELDS = { year: "Year", venue: "Venue", author: "Author", keyword: "Keyword" };
const HINTS = { year: "e.g. 2026", venue: "e.g. ICLR 2026", author: "a full name", keyword: "e.g. speech" };
const MAX_VALUES = 20;  // the server's max_filter_values: more values for one field are refused
const $ = (id) => document.getElementById(id);
const state = { corpus: "", filters: {}, corpora: [] };

// Offer the picker and the chips when there is something to choose: several corpora, or papers with metadata.
export async function initScope() {
  let listing;
  try {
    listing = await getJSON("/api/corpora");
  } catch (err) {
    return;  // the status line says what is wrong
  }
  state.corpora = listing.corpora;
  const described = state.corpora.some((c) => Object.keys(c.years || {}).length || Object.keys(c.venues || {}).length);
  if (state.corpora.length < 2 && !described) return;
  const picker = $("corpus-picker");
  picker.replaceChildren(el("option", { value: "", text: "All corpora" }),
    ...state.corpora.map((c) => el("option", { value: c.name, text: `${c.name} (${c.papers} papers)` })));
  picker.addEventListener("change", () => { state.corpus = picker.value; suggest(); });
  $("filter-field").addEventListener("change", suggest);
  $("filter-add").addEventListener("click", add);
  $("filter-value").addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      event.preventDefault();  // a filter, not the question
      add();
    }
  });
  suggest();
  $("scope").hidden = false;
}

// What the next question is asked within, as the request body's `corpus` and `filters`.
export function currentScope() {
  const scope = {};
  if (state.corpus) scope.corpus = state.corpus;
  const filters = Object.fromEntries(Object.entries(state.filters).filter(([, values]) => values.length));
  if (Object.keys(filters).length) scope.filters = structuredClone(filters);
  return scope;
}

// "Within conf · Year 2026 · Author Ada Marchetti": what an answer was searched within ("" when everything).
export function describeScope(final, asked) {
  const parts = [];
  const corpus = asked && asked.corpus;
  if (corpus) parts.push(`Corpus ${corpus}`);
  for (const [field, values] of Object.entries((final && final.filters) || {})) {
    parts.push(`${FIELDS[field] || field} ${values.join(" or ")}`);
  }
  return parts.join(" · ");
}

function suggest() {
  const field = $("filter-field").value;
  const chosen = state.corpora.filter((c) => !state.corpus || c.name === state.corpus);
  const values = new Set();
  if (field === "year" || field === "venue") {
    for (const corpus of chosen) for (const value of Object.keys(corpus[`${field}s`] || {})) values.add(value);
  }
  $("filter-suggestions").replaceChildren(...[...values].map((value) => el("option", { value })));
  $("filter-value").placeholder = HINTS[field];
}

function add() {
  const field = $("filter-field").value;
  const input = $("filter-value");
  const raw = input.value.trim().replace(/\s+/g, " ");
  const error = $("filter-error");
  error.textContent = "";
  if (!raw) return;
  const value = field === "year" ? Number(raw) : raw;
  if (field === "year" && !(/^\d{1,4}$/.test(raw) && value >= 1)) {
    error.textContent = "A year is a number such as 2026.";
    return;
  }
  const values = (state.filters[field] = state.filters[field] || []);
  if (values.length >= MAX_VALUES) {
    error.textContent = `At most ${MAX_VALUES} values for one filter.`;
    return;
  }
  if (!values.some((v) => String(v).toLowerCase() === String(value).toLowerCase())) values.push(value);
  input.value = "";
  renderChips();
  announce(`Filter added: ${FIELDS[field]} ${value}.`);
}

function renderChips() {
  const chips = [];
  for (const [field, values] of Object.entries(state.filters)) {
    for (const value of values) {
      const name = `${FIELDS[field]}: ${value}`;
      const remove = el("button", { type: "button", class: "chip-remove", text: "×", "aria-label": `Remove filter ${name}` });
      remove.addEventListener("click", () => {
        state.filters[field] = state.filters[field].filter((v) => v !== value);
        renderChips();
        announce(`Filter removed: ${name}.`);
        ($("filter-chips").querySelector(".chip-remove") || $("filter-value")).focus();
      });
      chips.push(el("li", { class: "chip" }, el("span", { text: name }), remove));
    }
  }
  $("filter-chips").replaceChildren(...chips);
}
