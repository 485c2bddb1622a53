"""A paper with a title is called by the name before its colon: "Ember: Stable 4-bit Training" is Ember.

The whole conference comes with titles, so a label is most often a title, not a method's one-word name. The five
papers written for tests/test_versions.py have titles of that shape.
"""

from qa_service.answering.composing import calls, names
from qa_service.corpus.names import own_names
from tests.test_composing import ZORBLAX, source
from tests.test_versions import answerer  # noqa: F401 - the five titled papers, answered offline


def test_a_title_s_name_is_the_word_before_its_colon():
    assert own_names("Ember: Stable 4-bit Training") == ["Ember: Stable 4-bit Training", "Ember"]
    assert own_names("RouterArena") == ["RouterArena"]
    assert own_names("Attention Is All You Need") == ["Attention Is All You Need"]


def test_a_question_calls_a_titled_paper_by_its_name_and_a_sentence_names_it():
    titled = source(1, "p:1", "Zorblax: Drafting Trees for Fast Decoding", ZORBLAX)
    assert calls("Is zorblax faster than Quux?", titled.label) and not calls("Is Quux fast?", titled.label)
    from qa_service.answering.composing import Candidate
    said = Candidate(titled, 0, 10, "We propose Zorblax, a decoding scheme.", 1.0)
    assert names(said) and not names(Candidate(titled, 0, 10, "Decoding is slow.", 1.0))


def test_a_question_naming_a_titled_paper_and_another_paper_s_model_is_answered_from_the_paper_it_names(answerer):
    """Tilde's abstract names Qwen3-1.7B-Base; the question asks it of Ember, whose abstract does not."""
    result = answerer.ask("How does Ember do on Qwen3-1.7B-Base?")
    assert {c.paper_id for c in result.citations} == {"ver:3"}, result.answer
    assert result.answer.startswith("The abstract of Ember does not report results on Qwen3-1.7B-Base."), result.answer


def test_a_comparison_of_titled_papers_names_each_one(answerer):
    """"Ember: Stable 4-bit Training" would be read as holding a figure ("4-bit"): its item opens with its name."""
    result = answerer.ask("How do Ember and Tilde differ?")
    lines = result.answer.split("\n")
    assert {c.paper_id for c in result.citations} == {"ver:3", "ver:4"}
    assert sorted(line.split("**")[1] for line in lines) == ["Ember", "Tilde: Pretraining with Reasoning Rewards"], lines
    assert all(s.verdict.value == "supported" for s in result.sentences if s.kind.value == "claim")


def test_a_one_paper_answer_names_a_titled_paper_s_method_as_it_names_a_one_word_label_s():
    from tests.test_composing import MODEL

    for label in ("Zorblax", "Zorblax: Drafting Trees for Fast Decoding"):
        answer = MODEL.answer("Where is the code?", [source(1, "p:1", label, ZORBLAX)], about=("p:1",))
        assert "We propose Zorblax" in answer and "github.com/zorblax" in answer, (label, answer)


def test_a_long_title_opens_its_list_item_and_the_check_reads_it_as_the_item_s_label():
    """Conference titles run past 80 characters; one closed in bold before its colon is the item's label however long."""
    from qa_service.answering.segments import LABEL_CHARS, is_item_label, split_units
    from tests.test_composing import MODEL, QUUX

    title = "Drafting Trees for Speculative Decoding under Tight Memory Budgets on Commodity Accelerators at Scale"
    assert len(title) > 80 and is_item_label(title) and not is_item_label("x" * (LABEL_CHARS + 1))
    sources = [source(1, "p:1", title, ZORBLAX), source(2, "p:2", "Quux", QUUX)]
    answer = MODEL.answer("Which papers speed up decoding or the reranking of passages?", sources, about=())
    assert f"- **{title}**: " in answer, answer
    labels = [u for u in split_units(answer) if u.structure]
    assert [u.text for u in labels if title in u.text] == [f"- **{title}**:"]


def test_a_thing_absent_from_several_papers_is_said_of_them_together_and_the_stream_is_the_answer(answerer):
    """"The abstracts of Ember and Tilde do not ...", "What they do report:", the list on lines of its own, as streamed."""
    question = "How do Ember and Tilde do on GPT-4.1?"  # Polisher's abstract names GPT-4.1, neither of theirs does
    events = list(answerer.stream(question))
    streamed = "".join(e.text for e in events if type(e).__name__ == "Delta")
    final = events[-1].answer
    assert final.answer.startswith("The abstracts of Ember and Tilde do not report results on GPT-4.1. What they do report:\n- **")
    assert streamed == final.answer
    assert [s.kind.value for s in final.sentences[:2]] == ["service", "structure"]
    one = answerer.ask("How does Ember do on GPT-4.1?").answer
    assert one.startswith("The abstract of Ember does not report results on GPT-4.1. What it does report: On "), one
