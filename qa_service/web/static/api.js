// Talking to the service: the API key (asked once, kept for this tab), JSON reads, the answer
// stream, and the status line, which must say so when the service cannot be reached.
"use strict";

import { ServiceError, explain, responseError } from "./errors.js";

const STATUS_EVERY_MS = 10_000;   // re-check what answers now and then, so a dead server shows within seconds
const OFFLINE_RETRY_MS = 3_000;   // while unreachable, look again soon so recovery shows quickly

const auth = { key: sessionStorage.getItem("qa-api-key") || "", waiting: null };
const health = { timer: null, offline: false };

function headers(extra = {}) {
  return auth.key ? { ...extra, Authorization: `Bearer ${auth.key}` } : extra;
}

// Ask for the API key once; resolves when the user has entered one.
function askForKey(message) {
  const form = document.getElementById("key-form");
  document.getElementById("key-error").textContent = message || "";
  form.hidden = false;
  document.getElementById("api-key").focus();
  if (!auth.waiting) {
    auth.waiting = new Promise((resolve) => {
      form.addEventListener("submit", function done(event) {
        event.preventDefault();
        auth.key = document.getElementById("api-key").value.trim();
        sessionStorage.setItem("qa-api-key", auth.key);
        form.hidden = true;
        form.removeEventListener("submit", done);
        auth.waiting = null;
        resolve();
      });
    });
  }
  return auth.waiting;
}

// fetch, asking for the key and trying again when the service answers 401; a network failure
// marks the service unreachable in the status line.
export async function authorizedFetch(url, options = {}) {
  for (let attempt = 0; ; attempt++) {
    const sentKey = auth.key;
    let response;
    try {
      response = await fetch(url, { ...options, headers: headers(options.headers || {}) });
    } catch (err) {
      if (err.name !== "AbortError") markUnreachable();
      throw err;
    }
    if (response.status !== 401 || attempt >= 3) return response;
    if (auth.key !== sentKey) continue;  // another request got a new key meanwhile: try it before asking again
    await askForKey(auth.key ? "That key was not accepted; try again." : "");
  }
}

export async function getJSON(url, options = {}) {
  let response;
  try {
    response = await authorizedFetch(url, { ...options, headers: { Accept: "application/json" } });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ServiceError("Cannot reach the service.", { kind: "network" });
  }
  if (!response.ok) throw await responseError(response);
  return response.json();
}

// One paper (title, authors, year, venue, url, text), fetched once per page load.
const papers = new Map();
export function paperById(id) {
  if (!papers.has(id)) {
    const loading = getJSON(`/api/papers/${encodeURIComponent(id)}`);
    papers.set(id, loading);
    loading.catch(() => papers.delete(id));  // a failure is not remembered: the next look asks again
  }
  return papers.get(id);
}

// --- the status line ----------------------------------------------------------------------
export async function loadStatus() {
  const status = document.getElementById("status");
  let info;
  try {
    info = await getJSON("/api/info");
  } catch (err) {
    markUnreachable();
    return;
  }
  health.offline = false;
  status.classList.remove("offline");
  if (info.auth_required && !auth.key) askForKey();
  if (info.error) {
    status.textContent = `The service is running but cannot answer yet: ${explain(info.error).title}`;
  } else {
    const mode = info.model === "extractive" ? "Answers quote the abstracts directly — no AI model is configured"
      : `Answers written by ${info.model}, each sentence checked against the abstracts`;
    const built = info.index.built_at ? `indexed ${info.index.built_at.replace("T", " ").replace("Z", " UTC")}` : "not indexed yet";
    const corpora = info.corpora && info.corpora.length > 1 ? ` in ${info.corpora.length} corpora` : "";
    status.textContent = `${mode} · ${info.index.papers} papers${corpora} · ${built}`;
  }
  schedule(STATUS_EVERY_MS);
  return info;
}

function markUnreachable() {
  const status = document.getElementById("status");
  if (!health.offline) {
    health.offline = true;
    status.classList.add("offline");
    status.textContent = "The service cannot be reached. Trying again…";
  }
  schedule(OFFLINE_RETRY_MS);
}

function schedule(ms) {
  clearTimeout(health.timer);
  health.timer = setTimeout(() => (document.hidden ? schedule(ms) : loadStatus()), ms);
}

export function watchConnection() {
  window.addEventListener("online", loadStatus);
  window.addEventListener("offline", markUnreachable);
}

// --- the answer stream --------------------------------------------------------------------
// POST the question and call handlers.sources / handlers.delta as events arrive; resolves with
// the final answer, rejects with the server's error, a cut stream, or an AbortError.
export async function streamAnswer(question, history, handlers, signal, scope = {}) {
  let response;
  try {
    response = await authorizedFetch("/api/ask/stream", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ question, history, ...scope }),
      signal,
    });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ServiceError("Cannot reach the service.", { kind: "network" });
  }
  if (!response.ok) throw await responseError(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    let chunk;
    try {
      chunk = await reader.read();
    } catch (err) {
      if (err.name === "AbortError" || (signal && signal.aborted)) throw abortError();
      loadStatus();
      throw new ServiceError("the stream was cut", { kind: "cut" });
    }
    if (chunk.done) break;
    buffer += decoder.decode(chunk.value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = parseEvent(buffer.slice(0, cut));
      buffer = buffer.slice(cut + 2);
      if (signal && signal.aborted) throw abortError();
      if (event.type === "sources") handlers.sources(event.data);
      else if (event.type === "delta") handlers.delta(event.data.text);
      else if (event.type === "final") return event.data;
      else if (event.type === "error") throw new ServiceError(event.data.error.message, { code: event.data.error.code || "" });
    }
  }
  throw new ServiceError("the stream ended before its final event", { kind: "cut" });
}

function abortError() {
  return new DOMException("stopped", "AbortError");
}

function parseEvent(block) {
  let type = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) type = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  return { type, data: JSON.parse(data.join("\n")) };
}
