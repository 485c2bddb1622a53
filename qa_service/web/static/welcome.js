// The first visit: what the page is for, how answers are checked, and example questions drawn
// from the corpus that is loaded (the server picks them from the papers' names or titles).
"use strict";

import { getJSON } from "./api.js";
import { el } from "./dom.js";

// Fill the example questions; `ask(question)` sends one. Shown while the conversation is empty.
export async function showExamples(ask) {
  let listing;
  try {
    listing = await getJSON("/api/examples");
  } catch {
    return;  // no examples: the status line says what is wrong
  }
  const list = document.getElementById("examples");
  list.replaceChildren(...listing.examples.map((example) => el("li", {}, el("button", {
    type: "button", class: "example", text: example.question, onclick: () => ask(example.question),
  }))));
  document.getElementById("examples-box").hidden = !listing.examples.length;
}
