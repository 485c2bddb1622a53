"""The chat page as a research assistant (issue 27), in Debian's Chromium against a real server on
127.0.0.1, each on a desktop and a phone with axe-core clean: each sentence's check shown, the answer
drawn as written, errors for people, a first visit that says what the page is for, sources a
researcher recognises, and the smaller points."""

from __future__ import annotations

import re
import threading
from pathlib import Path

import pytest

from qa_service.answering.models import FakeModel
from qa_service.errors import ModelBusy
from qa_service.web.app import create_app
from tests.conftest import ROOT
from tests.pagekit import (  # noqa: F401 - fixtures
    DESKTOP,
    PHONE,
    TEQUILA,
    LiveServer,
    ask,
    corpus_server,
    assert_clean,
    browser,
    expect,
    fake_server,
    gated,
    in_view,
    open_page,
    page,
    page_index,
    phone,
    send,
    serve_model,
    server,
)

pytestmark = pytest.mark.slow  # headless Chromium

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
MIXED = "Tequila is a trapping-free quantization optimization method [1]. Tequila is used by fifty companies [1]. It runs on phones."
FORMATTED = ("Tequila offers:\n\n- a trapping-free quantization optimization method [1]\n- a 3.0× inference speedup [1]\n\n"
             "| Method | Speedup |\n|---|---|\n| Tequila | 3.0× [1] |\n\n"
             "Its code is at https://example.org/tequila and installs with `pip install tequila` [1].\n\n```\nprint(1)\n```")


def tip(page, selector: str) -> str:
    """The reason a verdict mark shows on hover or focus (drawn by CSS from its data-tip)."""
    return page.evaluate("(s) => { const after = getComputedStyle(document.querySelector(s), '::after');"
                         " return after.display === 'none' ? 'none' : after.content; }", selector)


@pytest.fixture
def device(browser, request):
    page = open_page(browser, request.param, permissions=["clipboard-read", "clipboard-write"])
    yield page
    page.context.close()


@pytest.fixture(scope="module")
def formats_server(tmp_path_factory):
    """The small corpus of every format: titles, authors, venues, years and URLs."""
    live = corpus_server(tmp_path_factory.mktemp("assistant-formats"), ROOT / "tests" / "data" / "formats")
    yield live
    live.stop()


def model_server(page_index, replies, **overrides):
    settings, index = page_index
    return LiveServer(create_app(settings.replace(**overrides) if overrides else settings, index=index, model=FakeModel(replies)))


# --- item 4: each sentence's check -------------------------------------------------------------

@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"], indirect=True)
def test_each_sentence_shows_its_check_with_words_an_icon_and_its_reason(page_index, device):
    live = model_server(page_index, [MIXED])
    try:
        device.goto(live.url)
        turn = ask(device, "What is Tequila?")
        marks = turn.locator(".answer .verdict")
        expect(marks).to_have_count(3)
        assert [marks.nth(i).get_attribute("data-icon") for i in range(3)] == ["✓", "?", "?"]
        assert re.match(r"Sentence 1, Supported: \w[^.]*\.", marks.nth(0).get_attribute("aria-label"))  # the check's reason
        assert "[1] Tequila: “" in marks.nth(0).get_attribute("aria-label")  # the quote that backs it
        assert re.match(r"Sentence 2, Not confirmed: \w[^.]*\.", marks.nth(1).get_attribute("aria-label"))
        assert marks.nth(2).get_attribute("aria-label") == "Sentence 3, Not confirmed: cites no source."
        expect(turn.locator(".answer .s-unverified")).to_have_text("Tequila is used by fifty companies [1].")
        assert tip(device, ".answer .verdict") == "none"  # the reason shows on hover and on focus only
        marks.nth(1).hover()
        said = marks.nth(1).get_attribute("aria-label").split(", ", 1)[1].split(".")[0]  # "Not confirmed: <the check's reason>"
        assert said.startswith("Not confirmed: ") and said in tip(device, ".answer .verdict:hover")
        marks.nth(2).focus()
        assert "cites no source" in tip(device, ".answer .verdict:focus")
        device.keyboard.press("Escape")  # dismissible without moving focus
        assert tip(device, ".answer .verdict:focus") == "none"
        assert device.evaluate("document.documentElement.scrollWidth") <= device.viewport_size["width"]
        names = [turn.locator(".answer .cite").nth(i).get_attribute("aria-label") for i in range(2)]
        assert names == ["Source 1: Tequila, cited by sentence 1", "Source 1: Tequila, cited by sentence 2"]
        expect(turn.locator(".warnings")).to_have_text(
            "Check before relying on it: 2 sentences are not confirmed by the cited abstracts (marked ?).")
        assert_clean(device)
        if device.viewport_size == PHONE:  # touch targets of at least 24 × 24 px
            for selector in (".answer .cite", ".answer .verdict"):
                box = turn.locator(selector).first.bounding_box()
                assert box["width"] >= 24 and box["height"] >= 24, selector
        with device.expect_download() as download:  # the export says what to check too
            device.click("#export")
        markdown = Path(download.value.path()).read_text(encoding="utf-8")
        assert f"{MIXED}\n\n_Check before relying on it: 2 sentences are not confirmed by the cited abstracts (marked ?)._" in markdown
        marks.nth(0).click()  # a mark opens the quote that backs its sentence
        expect(device.locator("#panel-title")).to_have_text("Tequila")
        expect(device.locator("#panel-text mark")).to_contain_text("we propose Tequila, a trapping-free quantization optimization method")
    finally:
        live.stop()


DRAW = """async (sentences) => {
  const { renderMarkdown } = await import('/static/markdown.js');
  const { markSentences, summarize } = await import('/static/verdicts.js');
  const answer = sentences.answer;
  const turn = document.createElement('article');
  turn.className = 'turn';
  const box = document.createElement('div');
  box.className = 'answer';
  turn.append(box);
  document.getElementById('conversation').append(turn);
  const cite = (n) => { const b = document.createElement('button'); b.type = 'button'; b.className = 'cite';
    b.dataset.n = n; b.textContent = `[${n}]`; b.setAttribute('aria-label', `Source ${n}`); return b; };
  renderMarkdown(box, answer, cite);
  markSentences(box, answer, sentences.units, { cited: () => 'Tequila' });
  const warn = document.createElement('p');
  warn.className = 'warnings';
  warn.textContent = summarize(sentences.units, sentences.issues);
  turn.append(warn);
  return warn.textContent;
}"""


def unit(answer: str, text: str, kind: str, verdict: str, cites=(), reason: str = "") -> dict:
    start = answer.index(text)
    quotes = [{"n": 1, "paper_id": "p", "label": "Tequila", "quote": "Tequila reaches 3.0×.", "start": 0, "end": 5,
               "score": 0.2, "supported": False, "sentence": 0}] if cites else []
    return {"start": start, "end": start + len(text), "text": text, "kind": kind, "verdict": verdict, "cites": list(cites),
            "quotes": quotes, "reason": reason}


@pytest.mark.parametrize("viewport,scheme", [(DESKTOP, "light"), (PHONE, "dark")], ids=["desktop-light", "phone-dark"])
def test_contradicted_structure_and_service_sentences_are_drawn_from_the_contract(server, browser, viewport, scheme):
    """Today's server gives no contradicted, structure or service units: drawn here from sentence objects as the contract has them."""
    answer = ("The abstract of Tequila does not report results on GPUs.\n\n## Speed\n\nTequila offers:\n\n"
              "- a **5.0× speedup** on CPUs [1]\n- ternary weights [1]")
    units = [
        unit(answer, "The abstract of Tequila does not report results on GPUs.", "service", "not_checked"),
        unit(answer, "Speed", "structure", "not_checked"),
        unit(answer, "Tequila offers:", "claim", "uncited"),  # a lead-in, as today's check calls it: no warning
        unit(answer, "a **5.0× speedup** on CPUs [1]", "claim", "contradicted", [1], "the abstract reports 3.0×"),
        unit(answer, "ternary weights [1]", "claim", "supported", [1], "its cited abstract states it"),
    ]
    page = open_page(browser, viewport, color_scheme=scheme)
    try:
        page.goto(server.url)
        warning = page.evaluate(DRAW, {"answer": answer, "units": units, "issues": [{"kind": "unknown_source", "sentence": None, "detail": "7"}]})
        answer_box = page.locator(".turn .answer")
        expect(answer_box.locator(".verdict")).to_have_count(3)
        service = answer_box.locator(".v-service")
        assert service.get_attribute("aria-label") == "Sentence 1, Note from the service: the service says this itself; it is not a quote."
        expect(answer_box.locator("p.service-note")).to_have_text(re.compile(r"^\s*The abstract of Tequila does not report results on GPUs\.$"))
        assert page.evaluate("document.querySelector('.service-note').firstElementChild.classList.contains('v-service')")  # said first
        contradicted = answer_box.locator(".v-contradicted")
        assert contradicted.get_attribute("data-icon") == "✗"
        assert contradicted.get_attribute("aria-label").startswith("Sentence 4, Contradicted: the abstract reports 3.0×.")
        expect(answer_box.locator("li").first.locator(".s-contradicted").first).to_contain_text("a ")
        expect(answer_box.locator("li strong")).to_have_text("5.0× speedup")  # the formatting is kept under the marks
        assert answer_box.locator(".s-structure").count() == 2 and answer_box.locator(".s-uncited").count() == 0
        assert warning == ("Check before relying on it: 1 sentence is contradicted by the abstract it cites (marked ✗). "
                           "The model cited [7], which was not among the sources searched; the page left it out.")
        assert_clean(page)
    finally:
        page.context.close()


# --- item 1: the answer as written ---------------------------------------------------------------

@pytest.mark.parametrize("device", [DESKTOP, PHONE], ids=["desktop", "phone"], indirect=True)
def test_lists_tables_code_and_links_are_drawn_as_the_model_wrote_them(page_index, device):
    live = model_server(page_index, [FORMATTED])
    try:
        device.goto(live.url)
        answer = ask(device, "What is Tequila?").locator(".answer")
        expect(answer.locator("ul > li")).to_have_count(2)
        expect(answer.locator("th")).to_have_text(["Method", "Speedup"])
        expect(answer.locator("td").first).to_have_text("Tequila")
        expect(answer.locator("a")).to_have_attribute("href", "https://example.org/tequila")
        expect(answer.locator("p code")).to_have_text("pip install tequila")
        expect(answer.locator("pre code")).to_have_text("print(1)")
        answer.get_by_role("button", name="Copy code").click()
        assert device.evaluate("navigator.clipboard.readText()") == "print(1)"
        expect(answer.locator(".copy-code")).to_have_text("Copied")
        warnings = device.locator(".turn .warnings").all_inner_texts()
        assert all("\n" not in w and "has no citation" not in w and "sentence 1 is" not in w for w in warnings)
        assert device.evaluate("document.documentElement.scrollWidth") <= device.viewport_size["width"]
        assert_clean(device)
    finally:
        live.stop()


# --- item 2: errors for people -------------------------------------------------------------------

@VIEWPORTS
def test_a_busy_service_is_waited_for_with_a_countdown_and_asked_again_once(page_index, browser, viewport):
    fake = FakeModel([ModelBusy("2 questions are already waiting for the model; try again shortly")] * 2)
    settings, index = page_index
    live = LiveServer(create_app(settings, index=index, model=fake))
    page = open_page(browser, viewport)
    try:
        page.goto(live.url)
        send(page, "What is Tequila?")
        turn = page.locator(".turn").last
        expect(turn.locator(".answer.error")).to_contain_text("The service is busy answering other questions.")
        expect(turn.locator(".wait")).to_have_text(re.compile(r"^Asking again in [1-3] s…$"))
        detail = turn.locator(".error-detail")
        expect(detail.locator("p")).to_be_hidden()  # the operator's words wait behind Details
        detail.locator("summary").click()
        expect(detail.locator("p")).to_have_text("model_busy · 2 questions are already waiting for the model; try again shortly")
        assert_clean(page)
        expect(turn.locator(".retry")).to_be_visible(timeout=20_000)  # asked again once on its own, busy again: no second countdown
        assert len(fake.requests) == 2 and turn.locator(".wait").count() == 0
        fake.enqueue(TEQUILA)
        turn.locator(".retry").click()
        expect(turn.locator(".answer")).to_have_text(TEQUILA)
    finally:
        page.context.close()
        live.stop()


@VIEWPORTS
def test_over_the_budget_shows_the_wait_in_seconds_and_it_can_be_called_off(page_index, browser, viewport):
    live = model_server(page_index, [TEQUILA, TEQUILA], answer_rate_limit="1 per 30 seconds")
    page = open_page(browser, viewport)
    try:
        page.goto(live.url)
        ask(page, "What is Tequila?")
        turn = ask(page, "What is Tequila exactly?")
        expect(turn.locator(".answer.error")).to_contain_text("You have asked many questions in a short time.")
        expect(turn.locator(".wait")).to_have_text(re.compile(r"^Asking again in (30|29|28|27) s…$"))
        expect(turn.locator(".error-detail p")).to_contain_text("HTTP 429 · too_many_requests")
        text = turn.locator(".answer").inner_text()
        assert "Retry-After" not in text and "/api/" not in text and "`" not in text
        page.console_errors[:] = [e for e in page.console_errors if "status of 429" not in e]  # Chromium logs the refused request
        assert_clean(page)
        turn.get_by_role("button", name="Don't ask again").click()
        expect(turn.locator(".wait")).to_have_count(0)
        expect(turn.locator(".retry")).to_be_focused()
    finally:
        page.context.close()
        live.stop()


# --- item 3: the first visit --------------------------------------------------------------------

@VIEWPORTS
def test_a_first_visit_offers_questions_from_the_corpus_and_says_how_answers_are_checked(server, formats_server, browser, viewport):
    page = open_page(browser, viewport)
    try:
        page.goto(server.url)
        expect(page.locator("#status")).to_contain_text("Answers quote the abstracts directly — no AI model is configured")
        welcome = page.locator("#welcome")
        expect(welcome).to_contain_text("every sentence is checked against them")
        examples = page.locator("#examples button")
        expect(examples).to_have_count(4)
        expect(examples.first).to_have_text("What is RouterArena?")
        assert_clean(page)
        examples.first.click()
        turn = page.locator(".turn")
        expect(turn.locator(".q")).to_have_text("What is RouterArena?")
        expect(turn.locator(".meta")).to_be_visible(timeout=20_000)
        expect(welcome).to_be_hidden()
        page.click("#new-conversation")
        expect(welcome).to_be_visible()
        page.goto(formats_server.url)  # another corpus, other examples: drawn from its papers' names
        expect(page.locator("#examples button")).to_have_count(4)
        asked = page.locator("#examples button").all_inner_texts()
        names = [re.search(r"(?:is|does|of) (\w+)", question).group(1) for question in asked]
        assert len(set(names)) == 4 and set(names) <= {"Prism", "Murmur", "Tidepool", "Quill", "Ember"}, asked
    finally:
        page.context.close()


# --- item 5: sources a researcher recognises ----------------------------------------------------

@VIEWPORTS
def test_sources_and_the_panel_show_title_authors_venue_year_and_a_link(formats_server, browser, viewport):
    page = open_page(browser, viewport)
    try:
        page.goto(formats_server.url)
        turn = ask(page, "What is Murmur?")
        entry = turn.locator(".sources > li").filter(has_text="Murmur").first
        expect(entry.locator(".source-open")).to_have_text(re.compile(r"^\[\d\] Murmur: Streaming Speech Recognition with Constant Memory$"))
        expect(entry.locator(".source-byline")).to_have_text("Grace Hopper, Claude Shannon · arXiv · 2024 · Paper page")
        expect(entry.locator(".source-byline a")).to_have_attribute("href", "http://arxiv.org/abs/2401.01234v2")
        entry.locator(".source-open").click()
        expect(page.locator("#panel-title")).to_have_text("Murmur: Streaming Speech Recognition with Constant Memory")
        expect(page.locator("#panel-link a")).to_have_attribute("href", "http://arxiv.org/abs/2401.01234v2")
        assert_clean(page)
    finally:
        page.context.close()


# --- item 6: the smaller points -----------------------------------------------------------------

def test_a_citation_opened_mid_stream_gets_its_quote_marked_when_the_answer_ends(gated, page):
    live, model = gated
    gate = threading.Event()
    model.enqueue("We propose Tequila, a trapping-free quantization optimization method [1]", gate, ".")
    page.goto(live.url)
    send(page, "What is Tequila?")
    page.locator(".turn .answer .cite").first.click()
    expect(page.locator("#panel-title")).to_have_text("Tequila")
    assert page.locator("#panel-text mark").count() == 0  # nothing to mark yet
    gate.set()
    expect(page.locator("#panel-text mark")).to_contain_text("we propose Tequila, a trapping-free quantization optimization method")


def test_a_reload_mid_stream_keeps_the_partial_answer_marked_as_cut(gated, page):
    live, model = gated
    gate = threading.Event()
    model.enqueue("We propose Tequila [1]", *[" and more"] * 5, gate, ".")
    page.goto(live.url)
    send(page, "What is Tequila?")
    expect(page.locator(".turn .answer")).to_contain_text("and more and more")
    page.wait_for_function("() => (localStorage.getItem('qa-conversations') || '').includes('and more')")
    page.reload()
    turn = page.locator(".turn")
    expect(turn.locator(".answer")).to_contain_text("We propose Tequila")
    expect(turn.locator(".stopped")).to_have_text("Cut short: the page was closed or reloaded before the answer was complete.")
    gate.set()


def test_the_desktop_panel_ends_on_screen_with_the_quote_in_view_and_abstract_urls_are_links(server, page):
    page.goto(server.url)
    turn = ask(page, "What is RouterArena?")
    page.evaluate("window.scrollTo(0, 0)")
    turn.locator(".answer .cite").first.click()
    expect(page.locator("#panel-text mark")).to_be_visible()
    assert page.evaluate("document.getElementById('panel').getBoundingClientRect().bottom <= innerHeight")
    assert page.evaluate("(() => { const p = document.getElementById('panel').getBoundingClientRect();"
                         " const m = document.querySelector('#panel-text mark').getBoundingClientRect();"
                         " return m.top >= p.top && m.top < p.bottom; })()")
    link = page.locator("#panel-text a").first
    expect(link).to_have_attribute("href", re.compile(r"^https://anonymous\.4open\.science/r/RouterArena"))
    assert link.get_attribute("rel") == "noopener noreferrer nofollow"
    page.goto(f"{server.url}/#paper=000_e3b5a0511f204a83%3A11")  # Tequila's abstract has LaTeX: shown as the Unicode the ingest made
    expect(page.locator("#panel-text")).to_contain_text("3.0×")
    assert "\\" not in page.locator("#panel-text").inner_text() and "$" not in page.locator("#panel-text").inner_text()


def test_the_colours_can_be_chosen_beside_the_system_setting(server, browser):
    page = open_page(browser, PHONE, color_scheme="light")
    try:
        page.goto(server.url)
        theme = page.locator("#theme")
        expect(theme).to_have_text("Colours: system")
        theme.click()
        expect(theme).to_have_text("Colours: light")
        theme.click()
        expect(theme).to_have_text("Colours: dark")
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert sum(int(x) for x in re.findall(r"\d+", background)[:3]) < 120  # dark, though the system is light
        page.reload()
        expect(theme).to_have_text("Colours: dark")  # kept
        assert_clean(page)
    finally:
        page.context.close()


def test_two_tabs_on_one_conversation_keep_both_questions(fake_server, browser):
    live, model = fake_server
    model.enqueue(TEQUILA, TEQUILA, TEQUILA)
    context = browser.new_context(viewport=DESKTOP)
    try:
        first = context.new_page()
        first.goto(live.url)
        ask(first, "What is Tequila?")
        second = context.new_page()  # the same conversation, open in a second tab
        second.goto(live.url)
        expect(second.locator(".turn")).to_have_count(1)
        ask(first, "How fast is Tequila?")
        expect(second.locator(".turn")).to_have_count(2)  # the other tab's question shows here
        with second.expect_request("**/api/ask/stream") as sent:
            ask(second, "Who wrote Tequila?")
        assert [m["content"] for m in sent.value.post_data_json["history"] if m["role"] == "user"] == ["What is Tequila?", "How fast is Tequila?"]
        expect(first.locator(".turn .q")).to_have_text(["What is Tequila?", "How fast is Tequila?", "Who wrote Tequila?"])
        first.reload()
        expect(first.locator(".turn")).to_have_count(3)  # nothing was lost in storage
    finally:
        context.close()


@VIEWPORTS
def test_past_conversations_are_searched_and_a_delete_can_be_undone(server, browser, viewport):
    page = open_page(browser, viewport)
    try:
        page.goto(server.url)
        ask(page, "What is RouterArena?")
        page.click("#new-conversation")
        ask(page, "How much faster is inference with Tequila?")
        page.click("#tab-history")
        page.fill("#past-filter", "speedup")  # a word of an answer, not of its question
        expect(page.locator("#past-list > li")).to_have_count(1)
        expect(page.locator("#past-list .past-open")).to_have_text("How much faster is inference with Tequila?")
        expect(page.locator("#past-count")).to_have_text("1 of 2 match “speedup”.")
        page.fill("#past-filter", "")
        page.get_by_role("button", name="Delete conversation: What is RouterArena?").click()
        expect(page.locator("#past-list > li")).to_have_count(1)
        expect(page.locator("#past-undo")).to_contain_text("Deleted “What is RouterArena?”.")
        expect(page.locator("#past-undo .undo")).to_be_focused()
        assert_clean(page)
        page.locator("#past-undo .undo").click()
        expect(page.locator("#past-list > li")).to_have_count(2)
        expect(page.locator("#past-undo")).to_be_hidden()
        page.reload()
        expect(page.locator("#past-list > li")).to_have_count(2)  # brought back in storage too
    finally:
        page.context.close()


@VIEWPORTS
def test_the_newest_question_can_be_edited_and_resent(page_index, browser, viewport):
    live = model_server(page_index, ["Tequila is a method [1].", TEQUILA])
    page = open_page(browser, viewport)
    try:
        page.goto(live.url)
        turn = ask(page, "What is Tequlia?")
        turn.get_by_role("button", name="Edit question").click()
        box = turn.get_by_role("textbox", name="Edit the question")
        expect(box).to_be_focused()
        assert_clean(page)
        box.fill("What is Tequila?")
        box.press("Enter")
        expect(turn.locator(".q")).to_have_text("What is Tequila?")
        expect(turn.locator(".answer")).to_have_text(TEQUILA)
        assert page.locator(".turn").count() == 1
        page.click("#tab-history")
        expect(page.locator("#past-list .past-open")).to_have_text("What is Tequila?")
    finally:
        page.context.close()
        live.stop()


def test_a_conversation_shared_as_a_file_opens_in_another_browser(server, browser, tmp_path):
    page = open_page(browser)
    other = open_page(browser, PHONE)
    try:
        page.goto(server.url)
        ask(page, "What is RouterArena?")
        with page.expect_download() as download:
            page.click("#share")
        assert download.value.suggested_filename == "what-is-routerarena.qa.json"
        shared = tmp_path / "shared.qa.json"
        download.value.save_as(shared)
        other.goto(server.url)
        other.click("#tab-history")
        other.set_input_files("#open-shared", str(shared))
        expect(other.locator("#view-ask")).to_be_visible()
        turn = other.locator(".turn")
        expect(turn.locator(".q")).to_have_text("What is RouterArena?")
        expect(turn.locator(".answer .verdict").first).to_be_visible()
        turn.locator(".answer .cite").first.click()
        expect(other.locator("#panel-title")).to_have_text("RouterArena")
        bad = tmp_path / "bad.json"
        bad.write_text('{"format": "something else"}')
        other.keyboard.press("Escape")
        other.click("#tab-history")
        other.set_input_files("#open-shared", str(bad))
        expect(other.locator("#shared-error")).to_have_text("This file holds no conversation this page can open.")
        assert_clean(other)
    finally:
        page.context.close()
        other.context.close()


def test_a_dead_server_shows_in_a_status_line_that_stays_in_view(page_index, browser):
    settings, index = page_index
    live = LiveServer(create_app(settings, index=index))
    page = open_page(browser, PHONE)
    try:
        page.goto(live.url)
        for question in ("What is RouterArena?", "What is Tequila?"):
            ask(page, question)
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert not in_view(page, "#status") or page.evaluate("scrollY") == 0
        live.stop()
        turn = ask(page, "What is GlobeDiff?")
        expect(turn.locator(".answer.error")).to_contain_text("Cannot reach the service.")
        expect(page.locator("#status")).to_have_text("The service cannot be reached. Trying again…")
        assert in_view(page, "#status")  # pinned to the top of the screen while it cannot be reached
    finally:
        page.context.close()
