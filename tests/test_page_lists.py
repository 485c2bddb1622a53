"""A list the model writes is still a list on the page once the final event has replaced the
streamed text with the checked answer (the check keeps the model's text as written)."""

from __future__ import annotations

from tests.pagekit import ask, browser, expect, fake_server, page, page_index, server  # noqa: F401 - fixtures

LIST_ANSWER = (
    "## Tequila\n\n"
    "Its reported results include:\n\n"
    "1. Tequila is a trapping-free quantization optimization method [1].\n"
    "2. It repurposes deadzone-trapped weights as dynamic biases [1].\n"
    "3. It reaches a 3.0× inference speedup [1].\n\n"
    "Let me know if you would like more detail."
)


def test_a_list_answer_reaches_the_page_as_a_list_after_the_final_event(fake_server, page):
    live, model = fake_server
    model.enqueue(LIST_ANSWER)
    page.goto(live.url)
    turn = ask(page, "What is Tequila?")  # returns once the final event has been drawn (the meta line is shown)
    answer = turn.locator(".answer")
    expect(answer.locator("ol > li")).to_have_count(3)
    expect(answer.locator("ol > li").nth(2)).to_contain_text("3.0× inference speedup")
    expect(answer.locator("p strong").filter(has_text="Tequila")).to_have_count(1)  # a heading is drawn as a bold line
    expect(answer.locator("p").filter(has_text="Let me know")).to_have_count(1)
    assert "1." not in answer.locator("p").filter(has_text="Its reported results include:").inner_text()


def test_the_offline_answer_from_several_papers_is_a_list_with_each_paper_s_name_in_bold_and_each_sentence_marked(server, page):
    """The offline model's list ("- **DIVER**: ... [1].") is drawn as a list, one item per paper, the name in bold and
    no mark of its own (structure), each quoted sentence with its check mark."""
    page.goto(server.url)
    turn = ask(page, "Which papers improve exploration in reinforcement learning for LLM reasoning?")
    items = turn.locator(".answer ul > li")
    count = items.count()
    assert count >= 2, turn.locator(".answer").inner_text()
    for i in range(count):
        item = items.nth(i)
        expect(item.locator("strong")).to_have_count(1)
        assert item.locator(".verdict.v-supported").count() >= 1, item.inner_text()
        assert item.locator("strong .verdict").count() == 0  # the label is no claim
