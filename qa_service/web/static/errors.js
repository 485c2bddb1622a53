// Errors for people: what happened and what to do, in plain words; the server's own message,
// status and code go behind a "Details" disclosure. A wait the server names (429, 503) is counted
// down, and the question is asked again once on its own.
"use strict";

import { el } from "./dom.js";

const DEFAULT_WAIT_S = 3;  // a busy service that names no wait: try again after this long
const MAX_WAIT_S = 120;    // longer than this is not worth watching a countdown for: ask to come back

// An error from the service: `status` (0: not reached), `code`, the server's `message`, and `retryAfter` seconds.
export class ServiceError extends Error {
  constructor(message, { status = 0, code = "", retryAfter = 0, kind = "http" } = {}) {
    super(message);
    Object.assign(this, { status, code, retryAfter, kind });
  }
}

// The error of an HTTP response that is not ok, read from its JSON body and Retry-After.
export async function responseError(response) {
  const body = await response.json().catch(() => null);
  const error = (body && body.error) || {};
  const wait = parseFloat(response.headers.get("Retry-After") || "");
  return new ServiceError(error.message || `HTTP ${response.status}`, {
    status: response.status, code: error.code || "", retryAfter: Number.isFinite(wait) ? Math.ceil(wait) : 0,
  });
}

const WAITS = {
  too_many_requests: "You have asked many questions in a short time.",
  model_busy: "The service is busy answering other questions.",
  store_busy: "The papers are being updated right now.",
};

const PLAIN = {
  network: ["Cannot reach the service.", "Check your connection. The status line at the top says when the service is back; then try again."],
  cut: ["The connection broke before the answer was complete.", "Try again."],
  model_error: ["The AI model could not answer.", "Try again in a moment. If it keeps failing, the model's service may be down."],
  model_timeout: ["The AI model took too long to answer.", "Try again, or ask a shorter question."],
  not_indexed: ["No papers are loaded yet.", "The service has no papers to search. Try again once its papers are loaded."],
  store_damaged: ["The service's copy of the papers needs repair.", "Tell the person who runs this service; the details below say what is wrong."],
  embedding_mismatch: ["The service's copy of the papers needs to be rebuilt.", "Tell the person who runs this service; the details below say what is wrong."],
  not_found: ["The corpus chosen is not there any more.", "Choose another corpus above and ask again."],
  bad_request: ["The question could not be sent as it is.", "Change the question or the filters and send it again."],
  payload_too_large: ["The question is too long to send.", "Shorten it and send it again."],
  unauthorized: ["The API key was not accepted.", "Enter the key again; the page asks for it."],
  invalid_api_key: ["The API key was not accepted.", "Enter the key again; the page asks for it."],
};

// {title, advice, detail, wait}: what the page says about `err`; `wait` in seconds when it will try again itself.
export function explain(err) {
  const code = err.kind === "network" || err.kind === "cut" ? err.kind : err.code || "";
  const detail = err.kind === "network" ? "" : [err.status ? `HTTP ${err.status}` : "", err.code, err.message].filter(Boolean).join(" · ");
  if (WAITS[code] || err.status === 429) {
    const wait = Math.max(1, err.retryAfter || DEFAULT_WAIT_S);
    if (wait <= MAX_WAIT_S) return { title: WAITS[code] || WAITS.too_many_requests, advice: "", detail, wait };
    return { title: WAITS[code] || WAITS.too_many_requests, advice: `Try again in ${minutes(wait)}.`, detail, wait: 0 };
  }
  const [title, advice] = PLAIN[code] || (err.status >= 500 || !err.status
    ? ["Something went wrong on the server.", "Try again. If it happens again, tell the person who runs this service."]
    : ["The service could not answer this.", "Try again, or change the question."]);
  return { title, advice, detail, wait: 0 };
}

function minutes(seconds) {
  const m = Math.ceil(seconds / 60);
  return m === 1 ? "a minute" : `${m} minutes`;
}

// The error as elements: the plain words, then the detail behind "Details".
export function errorNodes(explained) {
  const nodes = [el("p", {}, el("strong", { text: explained.title }), explained.advice ? ` ${explained.advice}` : null)];
  if (explained.detail) {
    nodes.push(el("details", { class: "error-detail" }, el("summary", { text: "Details" }), el("p", { text: explained.detail })));
  }
  return nodes;
}

// Count `seconds` down in `line` ("Asking again in 5 s…"), then call `done`; returns a cancel function.
export function countdown(line, seconds, done) {
  let left = seconds;
  const show = () => { line.textContent = `Asking again in ${left} s…`; };
  show();
  const timer = setInterval(() => {
    left -= 1;
    if (left > 0) return show();
    clearInterval(timer);
    done();
  }, 1000);
  return () => clearInterval(timer);
}
