"""A corpus of one's own (ten papers, titles and keywords): list questions by topic, what is absent said plainly, venues never asked."""

import pytest

from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora

from qa_service.answering.extractive import ExtractiveModel
from qa_service.records import REFUSAL, RefusalReason, SentenceKind, SentenceVerdict
from tests.conftest import ROOT, ingested

OWN = ROOT / "tests" / "data" / "own_corpus.jsonl"


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    index = ingested(tmp_path_factory.mktemp("own-data"), OWN)
    return build_answerer(index.settings, ExtractiveModel(), Corpora(index.settings, index))


@pytest.mark.parametrize("question,papers", [
    ("Which papers study speech?", {"own:1", "own:2"}),  # "speech" is in their titles and keywords, not in their abstracts
    ("Which papers are about robotics?", {"own:3", "own:4"}),  # keywords only
])
def test_titles_and_keywords_count_as_evidence_on_a_small_corpus(answerer, question, papers):
    result = answerer.ask(question)
    assert result.refusal_reason is None, result.answer
    assert papers <= {c.paper_id for c in result.citations}


def test_a_benchmark_the_abstract_does_not_mention_is_said_first_then_what_it_reports(answerer):
    result = answerer.ask("How does Zorblax do on MMLU?")
    note = "The abstract of Zorblax: Faster Decoding with Draft Trees does not report results on MMLU."
    assert result.answer.startswith(note + " What it does report: ")
    assert "2.7× speedup" in result.answer and result.refusal_reason is None and result.grounded
    first, lead = result.sentences[0], result.sentences[1]
    assert (first.text, first.kind, first.verdict, first.cites) == (note, SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED, [])
    assert lead.kind is SentenceKind.STRUCTURE
    for unit in result.sentences:  # every unit sits where it says, after the service's words were put before it
        assert result.answer[unit.start:unit.end] == unit.text
    assert all(c.paper_id == "own:5" and c.supported for c in result.citations)
    assert not result.warnings  # the service's sentence is no uncited claim


def test_the_stream_says_the_absence_first_too(answerer):
    events = list(answerer.stream("How does Zorblax do on MMLU?"))
    text = "".join(e.text for e in events if type(e).__name__ == "Delta")
    assert text == events[-1].answer.answer and text.startswith("The abstract of Zorblax")


def test_an_absent_detail_with_nothing_close_stays_a_refusal(answerer):
    """Glimmer's abstract reports no result at all: nothing to give in place of MMLU."""
    result = answerer.ask("How does Glimmer do on MMLU?")
    assert result.answer == REFUSAL and result.refusal_reason is RefusalReason.DETAIL_MISSING


@pytest.mark.parametrize("question", ["What does the ICLR 2026 paper Zorblax propose?", "In the NeurIPS abstract, what does Quux distill?"])
def test_a_venue_is_never_an_asked_detail(answerer, question):
    result = answerer.ask(question)
    assert result.refusal_reason is None and result.citations and not result.answer.startswith("The abstract of")


@pytest.mark.parametrize("question", ["Which papers do protein folding?", "Which papers compress images with transformers?"])
def test_a_neighbouring_topic_is_off_topic(answerer, question):
    assert answerer.ask(question).refusal_reason is RefusalReason.OFF_TOPIC
