"""The offline answerer picks the right sentences, cites them and refuses when it must."""

import pytest

from qa_service.answering import Answerer
from qa_service.citations import is_refusal
from qa_service.evaluation import evaluate_answers, read_questions
from qa_service.extractive import ExtractiveModel
from qa_service.prompting import REFUSAL, Passage, Source
from tests.conftest import DEV_QUESTIONS


@pytest.fixture(scope="module")
def answerer(seed_index, seed_settings):
    return Answerer(seed_index, seed_settings, ExtractiveModel())


def test_default_model_is_extractive_offline(answerer):
    assert isinstance(answerer.model, ExtractiveModel) and answerer.model.name == "extractive"


@pytest.mark.parametrize(
    "question,must_contain",
    [
        ("How much faster is inference with Tequila?", "3.0× inference speedup [1]"),
        ("How many scientific law discovery tasks are in NewtonBench?", "324 scientific law discovery tasks"),
        ("What is RouterArena?", "we introduce RouterArena, the first open platform"),
        ("What average speedup does CUDA-L1 achieve on KernelBench?", "×3.12"),
    ],
)
def test_picks_the_sentence_that_answers(answerer, question, must_contain):
    result = answerer.ask(question)
    assert must_contain in result.answer
    assert result.grounded and not result.insufficient_evidence
    assert all(c.supported for c in result.citations)


def test_every_sentence_is_a_cited_verbatim_quote(answerer, seed_index):
    result = answerer.ask("How can state space models see the whole image at once?")
    for citation in result.citations:
        text = seed_index.get_paper(citation.paper_id).text
        assert text[citation.start : citation.end] == citation.quote


def test_several_papers_for_a_question_about_several(answerer):
    result = answerer.ask("Which papers quantize LLM weights?")
    cited = {c.paper_id for c in result.citations}
    assert {"000_e3b5a0511f204a83:11", "003_94e388001bdf9878:6"} <= cited
    assert len(cited) >= 3


@pytest.mark.parametrize(
    "question",
    ["What learning rate does Tequila use?", "Who are the authors of the NewtonBench paper?", "What dropout rate does SERE use?"],
)
def test_refuses_details_the_named_abstract_does_not_give(answerer, question):
    result = answerer.ask(question)
    assert result.answer == REFUSAL and result.insufficient_evidence and result.citations == []


def test_refuses_without_sources():
    model = ExtractiveModel()
    assert model.answer("anything?", [], lambda term: 1.0) == REFUSAL
    source = Source(1, "p:1", "Tequila", "Tequila quantizes weights.", [Passage(0, 26, "Tequila quantizes weights.")])
    assert is_refusal(model.answer("What is the capital of France?", [source]))


def test_dev_set_answer_targets(answerer):
    """The answer-quality issue's targets for the offline model, on the development set."""
    report = evaluate_answers(
        lambda q: answerer.ask(q),
        lambda q: [h.paper_id for h in answerer.retriever.search(q, 10, floor=False)],
        read_questions(DEV_QUESTIONS),
    )
    single, overall = report["summary"]["single"], report["summary"]["overall"]
    assert single["recall@5"] >= 0.97
    assert overall["citation_precision"] >= 0.9
    assert single["fact_recall"] >= 0.8
    assert report["summary"]["unanswerable"]["refused_unanswerable"] >= 0.9
    assert overall["refused_answerable"] <= 0.05
