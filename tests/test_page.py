"""The chat page in real headless Chromium (Debian's), against a real server on 127.0.0.1: the
basics, and one test for each defect of issue 13 (each failed before its fix)."""

from __future__ import annotations

import re
import threading

import pytest

from qa_service.errors import ModelError
from qa_service.answering.models import FakeModel
from qa_service.web.app import create_app
from tests.conftest import ROOT
from tests.pagekit import (  # noqa: F401 - fixtures
    OUTPUT, TEQUILA, LiveServer, ask, assert_clean, browser, expect, gated, hold_a_long_answer, in_view, page, page_index,
    phone, send, server,
)

pytestmark = pytest.mark.slow  # headless Chromium


def test_ask_read_citations_and_open_the_abstract(server, page):
    page.goto(server.url)
    expect(page.locator("#status")).to_contain_text("Answers quote the abstracts directly — no AI model is configured · 20 papers · indexed")
    with page.expect_response(lambda r: r.url.endswith("/api/ask/stream")) as streamed:
        turn = ask(page, "How much faster is inference with Tequila?")
    assert streamed.value.headers["content-type"].startswith("text/event-stream")
    expect(turn.locator(".answer")).to_contain_text("3.0× inference speedup")
    markers = turn.locator(".answer .cite")
    assert markers.count() >= 1 and markers.first.inner_text() == "[1]"
    expect(turn.locator(".sources > li").first).to_contain_text("Tequila")
    expect(turn.locator(".sources > li").first).to_contain_text("supported by this abstract")

    markers.first.click()
    panel = page.locator("#panel")
    expect(panel).to_be_visible()
    expect(page.locator("#panel-title")).to_have_text("Tequila")
    quote = turn.locator(".quote").first.inner_text().strip("“”")
    expect(page.locator("#panel-text mark")).to_have_text(quote)
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / "answered.png"))

    page.click("#panel-close")
    expect(panel).to_be_hidden()
    turn.locator(".source-open").first.click()  # a source in the list opens it too
    expect(panel).to_be_visible()
    assert_clean(page)


def test_follow_up_question_in_the_same_conversation(server, page):
    page.goto(server.url)
    ask(page, "What is Tequila?")
    with page.expect_request("**/api/ask/stream") as sent:
        second = ask(page, "How much faster is its inference?")
    expect(second.locator(".answer")).to_contain_text("3.0×")
    assert [m["role"] for m in sent.value.post_data_json["history"]] == ["user", "assistant"]
    assert page.locator(".turn").count() == 2
    page.click("#new-conversation")
    assert page.locator(".turn").count() == 0


def test_shift_enter_breaks_the_line_instead_of_sending(server, page):
    page.goto(server.url)
    page.fill("#question", "first line")
    page.press("#question", "Shift+Enter")
    page.keyboard.type("second line")
    assert page.input_value("#question") == "first line\nsecond line" and page.locator(".turn").count() == 0


def test_a_refused_detail_names_the_paper_and_a_typo_offers_did_you_mean(server, page):
    page.goto(server.url)
    turn = ask(page, "What learning rate does Tequila use?")
    expect(turn.locator(".answer.refusal")).to_contain_text("The abstract of Tequila does not state the learning rate.")
    turn = ask(page, "What is RoutrArena?")
    expect(turn.locator(".did-you-mean")).to_have_text("Did you mean RouterArena?")
    assert turn.locator(".sources").count() == 1


def test_server_error_shows_plain_words_and_retry_works(page_index, page):
    settings, index = page_index
    fake = FakeModel([ModelError("the model server failed with HTTP 500, still after retries"), TEQUILA])
    live = LiveServer(create_app(settings, index=index, model=fake))
    try:
        page.goto(live.url)
        turn = ask(page, "What is Tequila?")
        expect(turn.locator(".answer.error")).to_contain_text("the model server failed with HTTP 500")
        turn.locator(".retry").click()
        expect(turn.locator(".answer")).to_contain_text("We propose Tequila", timeout=20_000)
        expect(turn.locator(".meta")).to_be_visible()
        assert turn.locator(".retry").count() == 0
    finally:
        live.stop()


def test_network_failure_is_explained(server, page):
    page.goto(server.url)
    page.route("**/api/ask/stream", lambda route: route.abort())
    turn = ask(page, "What is Tequila?")
    expect(turn.locator(".answer.error")).to_contain_text("Cannot reach the service")


def test_hostile_text_is_shown_as_text_and_never_runs(server, page):
    page.goto(server.url)
    question = "What does XSSBench <img src=x onerror=alert(1)> <script>alert(3)</script> contain?"
    turn = ask(page, question)
    expect(turn.locator(".q")).to_have_text(question)
    expect(turn.locator(".answer")).to_contain_text("XSSBench <img src=x onerror=alert(1)>, a benchmark <script>alert(2)</script>")
    turn.locator(".answer .cite").first.click()
    expect(page.locator("#panel-text")).to_contain_text("<img src=x onerror=alert(1)>")
    expect(page.locator("#panel-text")).to_contain_text("<script>alert(2)</script>")
    page.click("#tab-browse")
    page.fill("#paper-filter", "evil")
    expect(page.locator("#paper-list > li")).to_have_count(1)
    page.fill("#paper-filter", "onerror")  # found in the abstract: the snippet is text too
    expect(page.locator("#paper-list .snippet")).to_contain_text("<img src=x onerror=alert(1)>")
    page.wait_for_timeout(300)
    assert page.locator("img").count() == 0 and page.locator("body script").count() == 0
    assert page.dialogs == []


def test_browse_and_filter_papers(server, page):
    page.goto(server.url)
    page.click("#tab-browse")
    expect(page.locator("#paper-count")).to_have_text("20 of 20 papers")
    page.fill("#paper-filter", "routerarena")
    expect(page.locator("#paper-list > li")).to_have_count(1)
    page.locator("#paper-list button").first.click()
    expect(page.locator("#panel-title")).to_have_text("RouterArena")
    expect(page.locator("#panel-text")).to_contain_text("RouterArena")


def test_readable_on_a_phone(server, phone):
    phone.goto(server.url)
    ask(phone, "What is RouterArena?")
    phone.locator(".turn .cite").first.click()
    expect(phone.locator("#panel-title")).to_have_text("RouterArena")
    assert phone.evaluate("document.documentElement.scrollWidth") <= 391
    OUTPUT.mkdir(exist_ok=True)
    phone.screenshot(path=str(OUTPUT / "phone.png"))
    assert_clean(phone)


def test_page_has_labels_and_live_region(server, page):
    page.goto(server.url)
    assert page.locator("label[for=question]").inner_text() == "Your question"
    assert page.get_attribute("#status", "role") == "status"
    ask(page, "What is RouterArena?")
    assert page.locator(".turn .answer").first.get_attribute("aria-live") == "polite"
    page.focus("#question")
    page.keyboard.press("Tab")  # focus moves on from the question box to the Ask button
    assert page.evaluate("document.activeElement.id") == "ask-button"


def test_page_sends_csp_and_has_no_inline_script(server):
    import urllib.request

    with urllib.request.urlopen(server.url + "/") as response:
        html = response.read().decode()
        headers = response.headers
    assert "script-src 'self'" in headers["Content-Security-Policy"] and "'unsafe-inline'" not in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["X-Frame-Options"] == "DENY"
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html)
    for script in (ROOT / "qa_service" / "web" / "static").glob("*.js"):  # model and abstract text is never parsed as HTML
        source = script.read_text()
        assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|DOMParser|createContextualFragment", source), script


def test_page_asks_for_the_api_key_once(page_index, page):
    settings, index = page_index
    live = LiveServer(create_app(settings.replace(api_key="page-key-1"), index=index))
    try:
        page.goto(live.url)
        expect(page.locator("#key-form")).to_be_visible()
        page.fill("#api-key", "wrong-key")
        page.click("#key-form button")
        send(page, "What is RouterArena?")
        expect(page.locator("#key-error")).to_have_text("That key was not accepted; try again.")
        page.fill("#api-key", "page-key-1")
        page.click("#key-form button")
        turn = page.locator(".turn").last
        expect(turn.locator(".meta")).to_be_visible(timeout=20_000)
        expect(turn.locator(".answer")).to_contain_text("RouterArena")
        expect(page.locator("#key-form")).to_be_hidden()
        ask(page, "What is Tequila?")  # no second prompt: the key is kept for this tab
        expect(page.locator("#key-form")).to_be_hidden()
    finally:
        live.stop()


# --- issue 13, one test per defect -------------------------------------------------------------

def test_1_new_conversation_while_streaming_aborts_it_and_starts_clean(gated, page):
    _, model = gated
    gate = hold_a_long_answer(gated, page)
    page.click("#new-conversation")
    expect(page.locator(".turn")).to_have_count(0)
    expect(page.locator("#ask-button")).to_have_text("Ask")
    expect(page.locator("#ask-button")).to_be_enabled()
    gate.set()
    assert model.closed.wait(10), "the server kept writing the abandoned answer"
    with page.expect_request("**/api/ask/stream") as sent:
        turn = ask(page, "What is Tequila?")  # Enter works again
    assert sent.value.post_data_json["history"] == []
    expect(turn.locator(".answer")).to_have_text("We propose Tequila, a trapping-free quantization optimization method [1].")
    assert page.locator(".turn").count() == 1 and "and more" not in page.locator("#conversation").inner_text()


def test_2_a_rewritten_follow_up_shows_what_was_searched_as_soon_as_it_is_known(gated, page):
    live, model = gated
    gate = threading.Event()
    model.enqueue(TEQUILA)
    model.rewrites.append("How much faster is inference with Tequila?")
    model.enqueue("Tequila reaches a 3.0× inference speedup [1]", gate, ".")
    page.goto(live.url)
    ask(page, "What is Tequila?")
    send(page, "How much faster is its inference?")
    second = page.locator(".turn").nth(1)
    expect(second.locator(".searched")).to_have_text("Searched as: How much faster is inference with Tequila?")
    assert second.locator(".meta").count() == 0  # shown while the answer is still being written
    gate.set()
    expect(second.locator(".meta")).to_be_visible()
    expect(second.locator(".searched")).to_have_count(1)


def test_3_on_a_phone_the_abstract_is_a_sheet_in_view_and_close_returns_to_the_marker(server, phone):
    phone.goto(server.url)
    ask(phone, "What is RouterArena?")
    turn = ask(phone, "How much faster is inference with Tequila?")
    marker = turn.locator(".answer .cite").first
    marker.click()
    expect(phone.locator("#panel-title")).to_have_text("Tequila")
    assert in_view(phone, "#panel-title") and in_view(phone, "#panel-close")
    phone.click("#panel-close")
    expect(phone.locator("#panel")).to_be_hidden()
    assert phone.evaluate("document.activeElement.matches('.turn:last-child .answer .cite')")
    assert in_view(phone, ".turn:last-child .answer .cite")


def test_4_the_question_box_stays_in_view_and_the_answer_is_followed_unless_scrolled_up(gated, page):
    live, model = gated
    page.goto(live.url)
    for _ in range(3):
        model.enqueue(TEQUILA)
        ask(page, "What is Tequila?")
        assert in_view(page, "#question")
        assert page.evaluate("document.activeElement.id") == "question"
    first, second = threading.Event(), threading.Event()
    lines = [f"Tequila line {i} [1].\n\n" for i in range(30)]
    model.enqueue(*lines[:15], first, *lines[15:22], second, *lines[22:])
    send(page, "What is Tequila?")
    answer = page.locator(".turn").last.locator(".answer")
    expect(answer).to_contain_text("Tequila line 14")
    assert in_view(page, ".turn:last-child .answer > :last-child")  # the newest words are followed
    assert in_view(page, "#question")
    page.mouse.move(400, 300)
    page.mouse.wheel(0, -700)  # the reader scrolls up to read
    page.wait_for_function("() => window.scrollY < document.documentElement.scrollHeight - innerHeight - 500")
    held = page.evaluate("window.scrollY")
    first.set()
    expect(answer).to_contain_text("Tequila line 21")
    assert page.evaluate("window.scrollY") == held  # not pulled back down
    page.mouse.wheel(0, 20_000)  # back at the bottom: following resumes
    page.wait_for_function("() => innerHeight + scrollY >= document.documentElement.scrollHeight - 24")
    second.set()
    expect(page.locator(".turn").last.locator(".meta")).to_be_visible(timeout=20_000)
    assert in_view(page, ".turn:last-child .turn-actions")


def test_5_escape_and_close_give_focus_back_to_the_marker_and_the_header_stays(server, page):
    page.goto(server.url)
    turn = ask(page, "What is RouterArena?")
    page.evaluate("window.scrollTo(0, 0)")
    turn.locator(".answer .cite").first.click()
    expect(page.locator("#panel-title")).to_have_text("RouterArena")
    assert in_view(page, ".top h1")  # opening the panel did not scroll the header away
    page.keyboard.press("Escape")
    expect(page.locator("#panel")).to_be_hidden()
    assert page.evaluate("document.activeElement.matches('.answer .cite')")
    page.keyboard.press("Enter")  # the marker has focus: Enter opens it again
    expect(page.locator("#panel")).to_be_visible()
    page.click("#panel-close")
    expect(page.locator("#panel")).to_be_hidden()
    assert page.evaluate("document.activeElement.matches('.answer .cite')")


def test_6_a_refusal_is_said_once_with_its_reason_and_no_supported_claim(server, page):
    page.goto(server.url)
    turn = ask(page, "What is the best sourdough bread recipe?")
    expect(turn.locator(".answer.refusal")).to_contain_text("The abstracts don't answer this")
    assert turn.locator(".error").count() == 0 and turn.locator(".sources").count() == 0
    expect(turn.locator(".answer.refusal")).to_contain_text("No paper in the corpus is about this.")
    assert "do not answer this question" not in turn.locator(".answer").inner_text()
    assert "supported" not in turn.locator(".meta").inner_text()


def test_7_citation_markers_are_buttons_while_the_answer_streams(gated, page):
    live, model = gated
    gate = threading.Event()
    model.enqueue("We propose Tequila [1], a method [", gate, "1].")
    page.goto(live.url)
    send(page, "What is Tequila?")
    answer = page.locator(".turn .answer")
    expect(answer.locator(".cite")).to_have_count(1)
    assert page.locator(".turn .meta").count() == 0  # still streaming
    assert not answer.inner_text().rstrip("▍ ").endswith("[")  # a marker half written is held back
    answer.locator(".cite").click()  # it already opens the source
    expect(page.locator("#panel-title")).to_have_text("Tequila")
    gate.set()
    expect(answer.locator(".cite")).to_have_count(2)


def test_8_a_long_paste_is_kept_and_counted_never_cut_silently(server, page):
    page.goto(server.url)
    page.focus("#question")
    page.keyboard.insert_text("tequila " * 312 + "abcd")  # 2,500 characters, as a paste
    assert len(page.input_value("#question")) == 2500
    expect(page.locator("#question-count")).to_have_text("2,500 / 2,000 characters: 500 too many to send. Shorten the question.")
    page.press("#question", "Enter")
    assert page.locator(".turn").count() == 0 and len(page.input_value("#question")) == 2500
    page.fill("#question", "x" * 1700)
    expect(page.locator("#question-count")).to_have_text("1,700 / 2,000 characters")
    page.fill("#question", "What is Tequila?")
    expect(page.locator("#question-count")).to_be_hidden()


def contrast(first: str, second: str) -> float:
    """WCAG contrast ratio of two CSS rgb() colours."""
    def luminance(color: str) -> float:
        r, g, b = (int(x) / 255 for x in re.findall(r"[\d.]+", color)[:3])
        lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_9_focus_ring_and_field_border_reach_3_to_1_one_main_and_turns_have_headings(server, page):
    page.goto(server.url)
    page.focus("#question")
    page.keyboard.press("Tab")
    page.keyboard.press("Shift+Tab")  # keyboard focus: :focus-visible
    style = page.evaluate("() => { const s = getComputedStyle(document.getElementById('question'));"
                          " return [s.outlineColor, s.outlineStyle, s.borderTopColor,"
                          " getComputedStyle(document.getElementById('ask-form')).backgroundColor]; }")
    outline, outline_style, border, background = style
    assert outline_style != "none" and contrast(outline, background) >= 3
    assert contrast(border, background) >= 3
    assert page.locator("main").count() == 1
    turn = ask(page, "What is RouterArena?")
    expect(turn.get_by_role("heading", name="What is RouterArena?")).to_be_visible()


def test_10_the_browse_filter_searches_abstracts_and_highlights_the_match(server, page):
    page.goto(server.url)
    page.click("#tab-browse")
    page.fill("#paper-filter", "diffusion")
    expect(page.locator("#paper-count")).to_have_text("2 of 20 papers")
    first = page.locator("#paper-list > li").first
    expect(first.locator(".snippet mark").first).to_have_text(re.compile("diffusion", re.I))
    page.fill("#paper-filter", "tequila")
    expect(page.locator("#paper-list > li")).to_have_count(1)
    expect(page.locator("#paper-list > li mark").first).to_have_text("Tequila")


def test_11_the_status_line_says_when_the_service_cannot_be_reached(page_index, page):
    settings, index = page_index
    live = LiveServer(create_app(settings, index=index))
    page.goto(live.url)
    status = page.locator("#status")
    expect(status).to_contain_text("20 papers")
    live.stop()
    turn = ask(page, "What is Tequila?")
    expect(turn.locator(".answer.error")).to_contain_text("Cannot reach the service")
    expect(status).to_contain_text("cannot be reached")
    assert "papers" not in status.inner_text()
    again = LiveServer(create_app(settings, index=index), port=live.port)  # it comes back
    try:
        expect(status).to_contain_text("20 papers", timeout=15_000)
    finally:
        again.stop()
