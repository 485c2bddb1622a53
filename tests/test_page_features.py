"""What people expect of a chat page (issue 13), each used as a person would, in Debian's Chromium
against a real server on 127.0.0.1; and axe-core on every state, desktop and phone, light and dark."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.pagekit import (  # noqa: F401 - fixtures
    DESKTOP, OUTPUT, PHONE, TEQUILA, LiveServer, ask, assert_clean, corpus_server, browser, expect, fake_server, gated,
    hold_a_long_answer, open_page, page, page_index, phone, send, server,
)

pytestmark = pytest.mark.slow  # headless Chromium

ROUTER_QUOTES = (
    "In this work, we introduce RouterArena, the first open platform enabling comprehensive comparison of LLM routers.",
    "RouterArena has (1) a principally constructed dataset with broad knowledge domain coverage,",  # a definition: then its main result
)


def test_stop_aborts_the_request_the_server_stops_and_nothing_arrives_later(gated, page):
    _, model = gated
    gate = hold_a_long_answer(gated, page)
    turn = page.locator(".turn").last
    expect(page.locator("#ask-button")).to_be_hidden()
    with page.expect_event("requestfailed", lambda r: r.url.endswith("/api/ask/stream")) as failed:
        page.click("#stop")
    assert "ABORTED" in failed.value.failure.upper()  # the fetch itself was aborted
    expect(turn.locator(".stopped")).to_have_text("Stopped before the answer was complete.")
    expect(page.locator("#ask-button")).to_be_visible()
    gate.set()
    assert model.closed.wait(10), "the server kept writing after the page stopped reading"
    assert "and more" not in turn.inner_text() and turn.locator(".meta").count() == 0
    assert page.evaluate("document.activeElement.id") == "question"
    second = ask(page, "What is Tequila?")  # the page is usable at once
    expect(second.locator(".answer")).to_have_text(TEQUILA)
    assert "and more" not in page.locator("#conversation").inner_text()


def test_copy_puts_the_answer_and_its_numbered_sources_on_the_clipboard(server, browser):
    page = open_page(browser, permissions=["clipboard-read", "clipboard-write"])
    try:
        page.goto(server.url)
        turn = ask(page, "What is RouterArena?")
        turn.get_by_role("button", name="Copy the answer and its sources").click()
        expect(turn.locator(".copy")).to_have_text("Copied")
        copied = page.evaluate("navigator.clipboard.readText()")
        answer, sources = copied.split("\n\nSources:\n")
        assert answer.startswith("In this work, we introduce RouterArena") and "[1]" in answer
        assert sources == "[1] RouterArena (000_e3b5a0511f204a83:2)"
    finally:
        page.context.close()


def test_ask_again_writes_a_new_answer_for_the_newest_question(fake_server, page):
    live, model = fake_server
    model.enqueue("Tequila is a method [1].", TEQUILA)
    page.goto(live.url)
    turn = ask(page, "What is Tequila?")
    expect(turn.locator(".answer")).to_have_text("Tequila is a method [1].")
    turn.get_by_role("button", name="Ask again").click()
    expect(turn.locator(".answer")).to_have_text(TEQUILA)
    expect(turn.locator(".meta")).to_have_count(1)
    assert page.locator(".turn").count() == 1 and model.requests[1].question == "What is Tequila?"
    model.enqueue(TEQUILA)
    ask(page, "What is Tequila exactly?")
    expect(page.locator(".turn").first.get_by_role("button", name="Ask again")).to_be_hidden()  # only the newest


def test_conversations_survive_a_reload_and_past_ones_reopen_and_delete(server, page):
    page.goto(server.url)
    ask(page, "What is RouterArena?")
    ask(page, "How much faster is inference with Tequila?")
    page.reload()
    expect(page.locator(".turn")).to_have_count(2)
    expect(page.locator(".turn .q").first).to_have_text("What is RouterArena?")
    page.locator(".turn").last.locator(".answer .cite").first.click()  # markers work after a reload
    expect(page.locator("#panel-title")).to_have_text("Tequila")
    page.keyboard.press("Escape")
    page.click("#new-conversation")
    ask(page, "What is GlobeDiff?")
    page.click("#tab-history")
    items = page.locator("#past-list > li")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("What is GlobeDiff?")
    expect(items.first).to_contain_text("open now")
    items.nth(1).get_by_role("button", name="What is RouterArena?", exact=True).click()
    expect(page.locator("#view-ask")).to_be_visible()
    expect(page.locator(".turn")).to_have_count(2)
    page.click("#tab-history")
    page.get_by_role("button", name="Delete conversation: What is GlobeDiff?").click()
    expect(items).to_have_count(1)
    page.reload()
    expect(page.locator(".turn .q").first).to_have_text("What is RouterArena?")  # the open one, still
    page.click("#tab-history")
    expect(page.locator("#past-list > li")).to_have_count(1)


def test_dark_mode_follows_the_system_setting(server, browser):
    page = open_page(browser, color_scheme="dark")
    try:
        page.goto(server.url)
        turn = ask(page, "What is RouterArena?")
        turn.locator(".answer .cite").first.click()
        expect(page.locator("#panel-title")).to_have_text("RouterArena")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert sum(int(x) for x in re.findall(r"\d+", background)[:3]) < 120  # dark
        OUTPUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUTPUT / "dark.png"))
        assert_clean(page)
    finally:
        page.context.close()


def test_export_downloads_the_conversation_as_markdown_with_its_sources(server, page):
    page.goto(server.url)
    expect(page.locator("#export")).to_be_disabled()
    ask(page, "What is RouterArena?")
    ask(page, "What is the best sourdough bread recipe?")
    with page.expect_download() as download:
        page.click("#export")
    assert download.value.suggested_filename == "what-is-routerarena.md"
    markdown = Path(download.value.path()).read_text(encoding="utf-8")
    assert markdown.startswith("# What is RouterArena?\n")
    assert "## What is RouterArena?\n\nIn this work, we introduce RouterArena" in markdown
    assert "Sources:\n\n1. RouterArena (000_e3b5a0511f204a83:2)\n   > " + ROUTER_QUOTES[0] in markdown
    assert "## What is the best sourdough bread recipe?\n\n> The abstracts don't answer this." in markdown


def test_keyboard_shortcuts_are_listed_and_work(server, page):
    page.goto(server.url)
    ask(page, "What is RouterArena?")
    page.locator(".turn .q").click()  # focus leaves the question box
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "question" and page.input_value("#question") == ""
    page.keyboard.type("n")  # typing in the box is typing, not a shortcut
    expect(page.locator(".turn")).to_have_count(1)
    page.fill("#question", "")
    page.locator(".turn .q").click()
    page.keyboard.press("n")
    expect(page.locator(".turn")).to_have_count(0)
    assert page.evaluate("document.activeElement.id") == "question"
    page.click(".foot summary")
    keys = page.locator(".keys")
    expect(keys).to_contain_text("Go to the question box")
    expect(keys).to_contain_text("Start a new conversation")
    page.get_by_label("Use the single-key shortcuts").uncheck()  # they can be turned off (WCAG 2.1.4)
    page.locator(".foot summary").click()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") != "question"


def test_sources_are_shown_before_the_answer_after_a_searching_step(gated, page):
    live, model = gated
    gate = threading.Event()
    model.enqueue(gate, TEQUILA)
    page.add_init_script("""
      window.__steps = [];
      new MutationObserver(() => {
        const step = document.querySelector('.step');
        const text = step ? step.textContent : null;
        if (text && window.__steps[window.__steps.length - 1] !== text) window.__steps.push(text);
      }).observe(document, {subtree: true, childList: true, characterData: true});
    """)
    page.goto(live.url)
    send(page, "What is Tequila?")
    turn = page.locator(".turn")
    expect(turn.locator(".retrieved-open").first).to_have_text("[1] Tequila")
    expect(turn.locator(".step")).to_have_text("Writing the answer…")
    assert turn.locator(".answer").inner_text().strip() == ""  # not a word yet, the papers already
    turn.locator(".retrieved-open").first.click()
    expect(page.locator("#panel-title")).to_have_text("Tequila")
    gate.set()
    expect(turn.locator(".meta")).to_be_visible()
    assert page.evaluate("window.__steps") == ["Searching the abstracts…", "Writing the answer…"]
    expect(turn.locator(".step")).to_have_count(0)


def test_model_markdown_is_drawn_as_elements_and_html_in_it_stays_text(fake_server, page):
    live, model = fake_server
    model.enqueue("**Tequila** is a trapping-free quantization optimization method [1].\n\n"
                  "- It reaches a *3.0× inference speedup* [1].\n- It uses `ternary` weights <img src=x onerror=alert(1)> [1].\n\n"
                  "```\nx = <b>1</b>\n```")
    page.goto(live.url)
    answer = ask(page, "What is Tequila?").locator(".answer")
    expect(answer.locator("strong")).to_have_text("Tequila")
    expect(answer.locator("li")).to_have_count(2)
    expect(answer.locator("li em")).to_have_text("3.0× inference speedup")
    expect(answer.locator("li code")).to_have_text("ternary")
    expect(answer.locator("pre code")).to_have_text("x = <b>1</b>")
    expect(answer.locator("li").nth(1)).to_contain_text("<img src=x onerror=alert(1)>")
    expect(answer.locator(".cite")).to_have_count(3)
    assert "**" not in answer.inner_text() and "```" not in answer.inner_text()
    assert answer.locator("b, img").count() == 0 and page.dialogs == []


def test_a_source_quoted_by_several_sentences_lists_every_quote(server, page):
    page.goto(server.url)
    turn = ask(page, "What is RouterArena?")
    entries = turn.locator(".sources > li")
    expect(entries).to_have_count(1)
    quotes = entries.first.locator(".quote")
    expect(quotes).to_have_count(2)
    expect(quotes.first).to_contain_text(ROUTER_QUOTES[0])
    expect(quotes.nth(1)).to_contain_text(ROUTER_QUOTES[1])
    turn.locator(".answer .cite").nth(1).click()  # the second marker opens the second quote
    expect(page.locator("#panel-text mark")).to_contain_text(ROUTER_QUOTES[1])


def test_browse_and_papers_have_their_own_urls(server, browser):
    page = open_page(browser)
    try:
        page.goto(server.url)
        turn = ask(page, "What is Tequila?")
        page.click("#tab-browse")
        assert page.url.endswith("#view=browse")
        page.fill("#paper-filter", "diffusion")
        expect(page.locator("#paper-count")).to_have_text("2 of 20 papers")
        expect(page).to_have_url(re.compile(r"#view=browse&q=diffusion$"))
        page.reload()  # reload keeps the view and the filter
        expect(page.locator("#view-browse")).to_be_visible()
        expect(page.locator("#paper-filter")).to_have_value("diffusion")
        expect(page.locator("#paper-count")).to_have_text("2 of 20 papers")
        page.go_back()  # Back returns to the conversation
        expect(page.locator("#view-ask")).to_be_visible()
        expect(page.locator(".turn")).to_have_count(1)

        turn.locator(".answer .cite").first.click()
        expect(page.locator("#panel-title")).to_have_text("Tequila")
        expect(page).to_have_url(re.compile(r"#paper=000_e3b5a0511f204a83%3A11&span=\d+-\d+$"))
        shared, quote = page.url, page.locator("#panel-text mark").inner_text()
        page.go_back()  # Back closes the abstract
        expect(page.locator("#panel")).to_be_hidden()
        other = open_page(browser)  # someone opens the shared link
        try:
            other.goto(shared)
            expect(other.locator("#panel-title")).to_have_text("Tequila")
            expect(other.locator("#panel-text mark")).to_have_text(quote)
            other.click("#panel-close")
            expect(other.locator("#panel")).to_be_hidden()
            expect(other).to_have_url(re.compile(r"/$"))
        finally:
            other.context.close()
    finally:
        page.context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violation_in_any_state(server, browser, viewport, scheme):
    page = open_page(browser, viewport, color_scheme=scheme)
    try:
        page.goto(server.url)
        assert_clean(page)  # empty
        ask(page, "What is RouterArena?")
        ask(page, "What is the best sourdough bread recipe?")
        page.locator(".turn").first.locator(".answer .cite").first.click()
        expect(page.locator("#panel-title")).to_have_text("RouterArena")
        assert_clean(page)  # an answer, a refusal and the abstract
        page.keyboard.press("Escape")
        page.fill("#question", "x" * 2100)
        expect(page.locator("#question-count")).to_be_visible()
        assert_clean(page)  # over the limit
        page.click("#tab-browse")
        page.fill("#paper-filter", "diffusion")
        expect(page.locator("#paper-list .snippet mark").first).to_be_visible()
        assert_clean(page)
        page.click("#tab-history")
        expect(page.locator("#past-list > li")).to_have_count(1)
        page.click(".foot summary")
        assert_clean(page)
    finally:
        page.context.close()


def test_a_paper_with_metadata_shows_its_title_and_authors(browser, tmp_path_factory):
    """Papers from OpenReview, arXiv or CSV files: the abstract panel names the title, authors, venue and year."""
    live = corpus_server(tmp_path_factory.mktemp("formats-page"), ROOT / "tests" / "data" / "formats")
    page = open_page(browser)
    try:
        page.goto(f"{live.url}/#paper=2401.01234v2")
        expect(page.locator("#panel-title")).to_have_text("Murmur: Streaming Speech Recognition with Constant Memory")
        expect(page.locator("#panel-byline")).to_have_text("Grace Hopper, Claude Shannon · arXiv · 2024")
        page.goto(f"{live.url}/#paper=Zx9aB3kQpL")  # the venue already says the year
        expect(page.locator("#panel-byline")).to_have_text("Grace Hopper, Edsger W. Dijkstra · ICLR 2026 Poster")
        page.goto(f"{live.url}/#paper=abstracts%3A1")  # plain text: no metadata, no byline
        expect(page.locator("#panel-title")).to_have_text("Prism")
        expect(page.locator("#panel-byline")).to_be_hidden()
        assert_clean(page)
    finally:
        page.context.close()
        live.stop()


def test_the_services_own_sentence_is_shown_apart_from_the_quotes(browser, tmp_path_factory):
    """'The abstract of X does not report results on Y.' is no quote: it stands before the answer, not in it."""
    live = corpus_server(tmp_path_factory.mktemp("absence-page"), ROOT / "tests" / "data" / "own_corpus.jsonl")
    page = open_page(browser)
    try:
        page.goto(live.url)
        turn = ask(page, "How does Zorblax do on MMLU?")
        note = turn.locator(".answer .s-service")  # the service's own words, marked as its note, not as a quote
        expect(note).to_contain_text("does not report results on MMLU.")
        expect(turn.locator(".answer .verdict").first).to_have_attribute("aria-label", re.compile("Note from the service"))
        expect(turn.locator(".answer .cite")).not_to_have_count(0)
        assert not turn.locator(".answer .s-service .cite").count()  # the note cites nothing
        assert_clean(page)
    finally:
        page.context.close()
        live.stop()
