// Edit and resend: the newest question becomes a small form in place; Send asks the edited question
// in the same turn (its answer is written afresh), Cancel or Esc puts the question back as it was.
"use strict";

import { el } from "./dom.js";

// Open the editor on `view`'s question; `send(question)` is called with the edited text.
export function editQuestion(view, send) {
  const heading = view.turn.querySelector(".q");
  if (view.turn.querySelector(".edit-form")) return;
  const box = el("textarea", { class: "edit-box", rows: 2, "aria-label": "Edit the question" });
  box.value = view.data.question;
  const form = el("form", { class: "edit-form" }, box, el("div", { class: "actions" },
    el("button", { type: "submit", class: "primary", text: "Send" }),
    el("button", { type: "button", class: "secondary edit-cancel", text: "Cancel" })));
  const close = () => {
    form.remove();
    heading.hidden = false;
    const again = view.turn.querySelector(".edit");
    if (again) again.focus();
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const question = box.value.trim();
    if (!question) return;
    form.remove();
    heading.hidden = false;
    send(question);
  });
  form.querySelector(".edit-cancel").addEventListener("click", close);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  heading.hidden = true;
  heading.after(form);
  box.focus();
}
