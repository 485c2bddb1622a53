// The chat page: wiring, the views at their own URLs (#view=browse&q=…, #paper=…&span=…),
// the question box and its counter, past conversations and keyboard shortcuts.
// Every string from the model or an abstract goes into the page as text, never as HTML.
"use strict";

import { loadStatus, watchConnection } from "./api.js";
import { filterPapers, resetBrowse } from "./browse.js";
import * as chat from "./chat.js";
import { announce, isTyping } from "./dom.js";
import { fitToScreen, hidePanel, isPanelOpen, rememberOpener, showPaper } from "./panel.js";
import { initScope } from "./scope.js";
import { exportConversation, openSharedFile, shareConversation } from "./share.js";
import { dropUndo, renderPast as renderPastList } from "./past.js";
import { showExamples } from "./welcome.js";

const COUNT_FROM = 0.8;  // show the character counter from this share of the limit on
const VIEWS = ["ask", "browse", "history"];
const $ = (id) => document.getElementById(id);
const page = { maxChars: 2000, pushedPaper: false };

// --- the URL: which view, which filter, which paper --------------------------------------
function readRoute() {
  const params = new URLSearchParams(location.hash.slice(1));
  const span = (params.get("span") || "").match(/^(\d+)-(\d+)$/);
  const view = VIEWS.includes(params.get("view")) ? params.get("view") : "ask";
  return { view, q: params.get("q") || "", paper: params.get("paper"), span: span ? [+span[1], +span[2]] : null };
}

function routeUrl(route) {
  const params = new URLSearchParams();
  if (route.view !== "ask") params.set("view", route.view);
  if (route.view === "browse" && route.q) params.set("q", route.q);
  if (route.paper) params.set("paper", route.paper);
  if (route.paper && route.span) params.set("span", route.span.join("-"));
  const hash = params.toString();
  return hash ? `#${hash}` : location.pathname + location.search;
}

function go(change, { push = true } = {}) {
  const route = { ...readRoute(), ...change };
  const url = routeUrl(route);
  if (url === routeUrl(readRoute())) return applyRoute();
  history[push ? "pushState" : "replaceState"](null, "", url);
  applyRoute();
}

function applyRoute() {
  const route = readRoute();
  setView(route.view);
  if (route.view === "browse") {
    if ($("paper-filter").value !== route.q) $("paper-filter").value = route.q;
    filterPapers(route.q, openPaperFromList);
  }
  if (route.paper) showPaper(route.paper, route.span);
  else {
    page.pushedPaper = false;
    hidePanel(route.view === "browse" ? $("paper-filter") : $("question"));
  }
  if (route.view === "history") renderPast();
  else dropUndo();
}

function setView(name) {
  for (const view of VIEWS) {
    $(`view-${view}`).hidden = view !== name;
    const tab = $(`tab-${view}`);
    if (view === name) tab.setAttribute("aria-current", "page");
    else tab.removeAttribute("aria-current");
  }
}

// Open a paper in the panel: a new history entry, so Back closes it and the URL can be shared.
function openPaper(id, span, findOpener) {
  rememberOpener(findOpener);
  const push = !isPanelOpen();
  go({ paper: id, span }, { push });
  if (push) page.pushedPaper = true;
}

function openPaperFromList(id, button) {
  openPaper(id, null, () => button);
}

function closePanel() {
  if (!isPanelOpen()) return;
  if (page.pushedPaper) history.back();  // the entry that opened it: Back and Close agree
  else go({ paper: null, span: null }, { push: false });
}

// --- the question box ---------------------------------------------------------------------
function updateCounter() {
  const box = $("question");
  const count = $("question-count");
  const length = box.value.length;
  const over = length - page.maxChars;
  count.hidden = length < page.maxChars * COUNT_FROM;
  count.classList.toggle("over", over > 0);
  box.setAttribute("aria-invalid", String(over > 0));
  const numbers = `${length.toLocaleString("en")} / ${page.maxChars.toLocaleString("en")} characters`;
  count.textContent = over > 0 ? `${numbers}: ${over.toLocaleString("en")} too many to send. Shorten the question.` : numbers;
}

function submit(event) {
  event.preventDefault();
  const box = $("question");
  const question = box.value.trim();
  if (!question || chat.isBusy()) return;
  if (question.length > page.maxChars) {
    updateCounter();
    announce($("question-count").textContent);
    return;
  }
  box.value = "";
  updateCounter();
  chat.ask(question);
}

function newConversation() {
  chat.startNew();
  go({ view: "ask", paper: null, span: null });
  $("question").focus();
  announce("New conversation started.");
}

// --- past conversations -------------------------------------------------------------------
const pastActions = {
  open: (conversation) => {
    chat.showConversation(conversation);
    go({ view: "ask" });
    $("question").focus();
  },
  current: () => chat.currentConversation().id,
  forget: () => chat.startNew(),
};

function renderPast() {
  renderPastList(pastActions);
}

// --- colours: the system's, or light or dark as chosen here ----------------------------------
const THEMES = ["system", "light", "dark"];
function applyTheme(theme) {
  if (theme === "system") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  const button = $("theme");
  button.textContent = `Colours: ${theme}`;
  button.title = "Change the colours: as the system sets them, light or dark";
}

function nextTheme() {
  const now = localStorage.getItem("qa-theme") || "system";
  const next = THEMES[(THEMES.indexOf(now) + 1) % THEMES.length];
  localStorage.setItem("qa-theme", next);
  applyTheme(next);
  announce(`Colours: ${next}.`);
}

function askExample(question) {
  if (chat.isBusy()) return;
  $("question").value = "";
  updateCounter();
  chat.ask(question);
  $("question").focus();
}

// --- keyboard shortcuts -------------------------------------------------------------------
function shortcuts(event) {
  if (event.key === "Escape" && isPanelOpen()) {
    event.preventDefault();
    closePanel();
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target) || !$("single-keys").checked) return;
  if (event.key === "/") {
    event.preventDefault();
    if (readRoute().view !== "ask") go({ view: "ask" });
    $("question").focus();
  } else if (event.key === "n" || event.key === "N") {
    event.preventDefault();
    newConversation();
  }
}

// --- wiring -------------------------------------------------------------------------------
document.addEventListener("DOMContentLoaded", init);
if (document.readyState !== "loading") init();

function init() {
  if (init.done) return;
  init.done = true;
  const box = $("question");
  page.maxChars = parseInt(box.dataset.max, 10) || page.maxChars;
  $("ask-form").addEventListener("submit", submit);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      $("ask-form").requestSubmit();
    }
  });
  box.addEventListener("input", updateCounter);
  $("stop").addEventListener("click", () => { chat.stop(); box.focus(); });
  $("new-conversation").addEventListener("click", newConversation);
  $("export").addEventListener("click", () => exportConversation(chat.currentConversation()));
  $("share").addEventListener("click", () => shareConversation(chat.currentConversation()));
  $("open-shared").addEventListener("change", async () => {
    const file = $("open-shared").files[0];
    $("open-shared").value = "";
    if (!file) return;
    const opened = await openSharedFile(file);
    $("shared-error").textContent = opened.error || "";
    if (opened.conversation) pastActions.open(opened.conversation);
  });
  $("panel-close").addEventListener("click", closePanel);
  for (const view of VIEWS) {
    $(`tab-${view}`).addEventListener("click", (event) => {
      event.preventDefault();
      go({ view, paper: null, span: null });
    });
  }
  $("past-filter").addEventListener("input", renderPast);
  $("paper-filter").addEventListener("input", () => {
    const q = $("paper-filter").value;
    history.replaceState(null, "", routeUrl({ ...readRoute(), q }));
    filterPapers(q, openPaperFromList, true);
  });
  const singleKeys = $("single-keys");
  singleKeys.checked = localStorage.getItem("qa-single-keys") !== "off";
  singleKeys.addEventListener("change", () => localStorage.setItem("qa-single-keys", singleKeys.checked ? "on" : "off"));
  document.addEventListener("keydown", shortcuts);
  window.addEventListener("scroll", fitToScreen, { passive: true });
  window.addEventListener("resize", fitToScreen);
  window.addEventListener("popstate", applyRoute);
  window.addEventListener("hashchange", applyRoute);
  window.addEventListener("storage", (event) => {
    if (!event.key || !event.key.startsWith("qa-conv")) return;
    chat.syncFromOtherTabs();
    if (readRoute().view === "history") renderPast();
  });
  applyTheme(THEMES.includes(localStorage.getItem("qa-theme")) ? localStorage.getItem("qa-theme") : "system");
  $("theme").addEventListener("click", nextTheme);
  watchConnection();
  chat.initChat(openPaper);
  loadStatus().then((info) => {
    if (info && info.limits) {
      page.maxChars = info.limits.question_chars || page.maxChars;
      chat.setLimits({ historyTurns: info.limits.history_turns, historyChars: info.limits.history_chars });
      updateCounter();
    }
    initScope();  // after the status: a service that needs a key has asked for it once
    showExamples(askExample);
  });
  resetBrowse();
  applyRoute();
  if (readRoute().view === "ask" && !readRoute().paper) box.focus();
}
