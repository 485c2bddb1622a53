"""A question that calls a paper by a name no abstract has, and names only things some abstract mentions (GSM8K, A100), is
about a paper the corpus lacks; a name where a question puts a thing ("on SVAMP", "what MSE") is asked of a paper it has.
Papers written for the test."""

import pytest

from qa_service.answering.answerability import _asked_about
from qa_service.records import RefusalReason
from tests.conftest import offline_answerer

PAPERS = [
    "Language models make arithmetic slips in long word problems. We propose Mathlete, which checks every intermediate step "
    "with a small verifier and retries failed steps. Mathlete raises accuracy on GSM8K from 71.2% to 84.5% with a 7B model.",
    "Serving large models is limited by memory bandwidth. We introduce Packrat, a kernel library that fuses attention and "
    "dequantization on A100 GPUs. Packrat serves 2.1x more requests per second than a standard serving stack.",
    "Code assistants often suggest insecure snippets. We present Guardrail, a filter that flags unsafe API calls before a "
    "suggestion is shown. Guardrail blocks 93% of known vulnerabilities while rejecting 4% of safe suggestions.",
]


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return offline_answerer(tmp_path_factory.mktemp("unknown-paper"), PAPERS)


@pytest.mark.parametrize("question,name", [
    ("What accuracy does FlashMath report on GSM8K?", "FlashMath"),
    ("What does the TurboServe paper report about A100 throughput?", "TurboServe"),
    ("FlashMath results on GSM8K?", "FlashMath"),
])
def test_a_paper_no_abstract_names_is_not_in_the_corpus_though_its_benchmark_is(answerer, question, name):
    """Before, GSM8K named Mathlete and the answer was "The abstract of Mathlete does not report results on FlashMath"."""
    result = answerer.ask(question)
    assert result.refusal_reason is RefusalReason.NOT_IN_CORPUS and not result.citations
    assert name in result.refusal_explanation


def test_a_thing_an_abstract_mentions_does_not_make_a_neighbouring_topic_its_paper(answerer):
    """A100 names Packrat's abstract; fraud in bank transfers is in none: before, Packrat's sentence was the answer."""
    result = answerer.ask("How do you detect fraud in bank transfers on A100 GPUs?")
    assert result.refusal_reason is RefusalReason.OFF_TOPIC and not result.citations
    verify = answerer.ask("How do you verify arithmetic steps on GSM8K?")  # GSM8K names Mathlete, and this is its topic
    assert verify.refusal_reason is None and "Mathlete" in verify.answer


def test_a_paper_called_by_its_own_name_is_answered(answerer):
    result = answerer.ask("Mathlete results on GSM8K?")
    assert result.refusal_reason is None and "84.5%" in result.answer


def test_an_unknown_name_in_a_things_place_is_asked_of_the_paper_the_question_describes(answerer):
    result = answerer.ask("What accuracy does the step verifier reach on GSM8K and on SVAMP?")
    assert result.refusal_reason is None and "84.5%" in result.answer
    assert result.answer.startswith("The abstract of Mathlete does not report results on SVAMP.")


@pytest.mark.parametrize("name,question,about", [
    ("FlashMath", "What accuracy does FlashMath report on GSM8K?", True),
    ("TurboServe", "What does the TurboServe paper report?", True),
    ("FlashMath", "FlashMath results?", True),
    ("SVAMP", "What does it reach on SVAMP?", False),
    ("ViT-B/16", "What success rate does the attack reach against ViT-B/16?", False),
    ("MSE", "what MSE does it get?", False),
])
def test_where_a_question_puts_the_paper_it_asks_about(name, question, about):
    assert _asked_about(name, question) is about


@pytest.mark.parametrize("question", [
    "What does the Hydra paper propose for checking arithmetic steps?",
    "How does Hydra verify intermediate steps?",
    "How do Hydra's verifiers check intermediate steps?",
])
def test_a_capitalised_word_no_abstract_uses_where_the_paper_asked_about_stands_is_a_name(answerer, question):
    """"Hydra" is a word of the language, not name-shaped; written with a capital mid-sentence where a question puts the
    paper it asks about, it names one, and no abstract has it. (Before, Mathlete's abstract answered it.)"""
    result = answerer.ask(question)
    assert result.refusal_reason is RefusalReason.NOT_IN_CORPUS and "Hydra" in result.refusal_explanation


def test_a_capitalised_word_an_abstract_uses_or_a_thing_asked_of_a_paper_is_not_refused_so(answerer):
    assert answerer.ask("How does Mathlete handle GSM8K problems?").refusal_reason is None  # the corpus's own word
    assert answerer.ask("Which paper checks arithmetic steps like Hydra does?").refusal_reason is not RefusalReason.NOT_IN_CORPUS
    # a place stands where no paper does: off-topic, not a paper the corpus lacks
    assert answerer.ask("What is the capital of France?").refusal_reason is RefusalReason.OFF_TOPIC


def test_a_paper_called_only_as_what_an_unknown_one_is_compared_with_is_not_the_paper_asked_about(answerer):
    """"What does HydraMath report on GSM8K compared to Mathlete?" asks of HydraMath, which no abstract names; Mathlete
    is what it is compared with. (Before, Mathlete's abstract answered it, "does not report results on HydraMath".)"""
    result = answerer.ask("What does HydraMath report on GSM8K compared to Mathlete?")
    assert result.refusal_reason is RefusalReason.NOT_IN_CORPUS and "HydraMath" in result.refusal_explanation
    asked_of_mathlete = answerer.ask("Does Mathlete beat HydraMath on GSM8K?")
    assert asked_of_mathlete.refusal_reason is None and asked_of_mathlete.answer.startswith("The abstract of Mathlete")
