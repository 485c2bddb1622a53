"""The chat page with several corpora: the corpus picker, filter chips, and the filters shown on each answer;
in Debian's Chromium against a real server, with axe-core on every state (desktop and phone, light and dark)."""

from __future__ import annotations

import pytest

from qa_service.store.corpora import Corpora
from qa_service.corpus.reading import load_corpus
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings
from tests.pagekit import (  # noqa: F401 - fixtures
    PHONE, LiveServer, ask, assert_clean, browser, expect, open_page, page, page_index, server,
)

pytestmark = pytest.mark.slow  # headless Chromium

METADATA_PAPERS = ROOT / "tests" / "data" / "metadata_papers.jsonl"


@pytest.fixture(scope="module")
def two_server(tmp_path_factory):
    """The default corpus (19 seed papers) and `conf` (8 papers with years, venues, authors and keywords)."""
    settings = make_settings(tmp_path_factory.mktemp("page-corpora"), rate_limit="", answer_rate_limit="")
    corpora = Corpora(settings)
    corpora.default.ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    corpora.open("conf").ingest(load_corpus([METADATA_PAPERS]))
    live = LiveServer(create_app(settings, index=corpora.default))
    yield live
    live.stop()


def add_filter(page, field: str, value: str, press_enter: bool = True) -> None:
    page.select_option("#filter-field", field)
    page.fill("#filter-value", value)
    if press_enter:
        page.press("#filter-value", "Enter")
    else:
        page.click("#filter-add")


def test_a_corpus_and_filter_chips_scope_the_question_and_the_answer_shows_them(two_server, page):
    page.goto(two_server.url)
    expect(page.locator("#scope")).to_be_visible()
    expect(page.locator("#corpus-picker option")).to_have_text(["All corpora", "iclr2026 (19 papers)", "conf (8 papers)"])
    expect(page.locator("#status")).to_contain_text("27 papers in 2 corpora")
    page.select_option("#corpus-picker", "conf")
    add_filter(page, "year", "2026")
    add_filter(page, "keyword", "speech", press_enter=False)
    expect(page.locator("#filter-chips .chip")).to_have_text(["Year: 2026×", "Keyword: speech×"])
    assert page.locator(".turn").count() == 0  # Enter in the filter box adds a chip; it sends no question
    assert_clean(page)
    with page.expect_request("**/api/ask/stream") as sent:
        turn = ask(page, "Which papers study speech?")
    assert sent.value.post_data_json["corpus"] == "conf"
    assert sent.value.post_data_json["filters"] == {"year": [2026], "keyword": ["speech"]}
    expect(turn.locator(".scope-used")).to_have_text("Searched within: Corpus conf · Year 2026 · Keyword speech")
    cited = turn.locator(".sources .paper-id").all_inner_texts()
    assert cited and set(cited) <= {"iclr26-101", "iclr26-103"}
    assert_clean(page)
    page.get_by_role("button", name="Remove filter Year: 2026").click()
    expect(page.locator("#filter-chips .chip")).to_have_text(["Keyword: speech×"])
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Remove filter Keyword: speech"
    with page.expect_request("**/api/ask/stream") as sent:
        ask(page, "Which papers study speech?")
    assert sent.value.post_data_json["filters"] == {"keyword": ["speech"]}
    assert page.console_errors == [] and page.dialogs == []


def test_the_year_suggestions_follow_the_corpus_and_a_bad_year_is_said(two_server, page):
    page.goto(two_server.url)
    page.select_option("#corpus-picker", "conf")
    suggestions = page.locator("#filter-suggestions option")
    expect(suggestions).to_have_count(2)
    assert sorted(suggestions.evaluate_all("options => options.map(o => o.value)")) == ["2025", "2026"]
    add_filter(page, "year", "20x6")
    expect(page.locator("#filter-error")).to_have_text("A year is a number such as 2026.")
    expect(page.locator("#filter-chips .chip")).to_have_count(0)


def test_a_filter_matching_nothing_says_so_on_a_phone_in_dark_mode(two_server, browser):
    page = open_page(browser, PHONE, color_scheme="dark")
    try:
        page.goto(two_server.url)
        add_filter(page, "venue", "Nowhere 1999")
        turn = ask(page, "What is Voxtral?")
        expect(turn.locator(".answer.refusal")).to_have_text("No paper matches these filters. Remove a filter or choose another corpus.")
        expect(turn.locator(".scope-used")).to_have_text("Searched within: Venue Nowhere 1999")
        assert_clean(page)
    finally:
        page.context.close()


def test_an_answer_across_corpora_names_the_corpus_of_each_source(two_server, page):
    page.goto(two_server.url)
    turn = ask(page, "What is Voxtral?")
    expect(turn.locator(".sources .paper-id").first).to_have_text("nips25-001 · conf")
    expect(turn.locator(".scope-used")).to_have_count(0)  # nothing chosen: every corpus, no filter


def test_one_corpus_without_metadata_shows_no_picker(server, page):
    """Today's page for today's users: the seed corpus alone offers nothing to pick."""
    page.goto(server.url)
    expect(page.locator("#status")).not_to_have_text("Connecting…")
    page.wait_for_load_state("networkidle")
    expect(page.locator("#scope")).to_be_hidden()
