"""Questions about metadata ("Which papers by Ada Marchetti...", "How many ICLR 2026 papers are about speech?")
are answered from the paper records, with citations to the papers listed."""

import pytest

from qa_service.answering.pipeline import Answerer
from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora
from qa_service.corpus.reading import load_corpus
from qa_service.answering.extractive import ExtractiveModel
from qa_service.store.filters import MetadataFilter
from qa_service.answering.metaquestions import read_question
from tests.conftest import ROOT, SEEDS, make_settings

METADATA_PAPERS = ROOT / "tests" / "data" / "metadata_papers.jsonl"


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> Corpora:
    """The default corpus (19 seed papers, no metadata) and `conf` (8 papers with authors, years, venues)."""
    settings = make_settings(tmp_path_factory.mktemp("meta-data"))
    registry = Corpora(settings)
    registry.open(settings.collection).ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    registry.open("conf").ingest(load_corpus([METADATA_PAPERS]))
    return registry


@pytest.fixture(scope="module")
def answerer(corpora) -> Answerer:
    return build_answerer(corpora.settings, ExtractiveModel(), corpora)


def test_papers_by_an_author_are_listed_from_the_records_and_cited(answerer):
    answer = answerer.ask("Which papers by Ada Marchetti are in the corpus?")
    assert answer.model == "records" and answer.grounded and not answer.refusal_reason
    assert [c.paper_id for c in answer.citations] == ["iclr26-102", "nips25-001", "nips25-002"]
    assert {c.corpus for c in answer.citations} == {"conf"} and [s.paper_id for s in answer.sources] == ["iclr26-102", "nips25-001", "nips25-002"]
    assert answer.answer.startswith("These corpora hold 3 papers by Ada Marchetti: Unlearnix: unlearning facts from language models [1],")
    for citation in answer.citations:  # each quote is the abstract's own text, at its offsets
        text = answerer.corpora.open("conf").get_paper(citation.paper_id).text
        assert text[citation.start : citation.end] == citation.quote and citation.quote


def test_how_many_papers_of_a_venue_are_about_a_topic(answerer):
    answer = answerer.ask("How many ICLR 2026 papers are about speech?")
    assert answer.answer == ("These corpora hold 2 papers from ICLR 2026 about speech: Whisperlite: tiny speech models for phones [1] "
                             "and Prosodic: emotion-aware speech synthesis [2].")
    assert all("speech" in c.quote.lower() for c in answer.citations)  # the sentence that names the topic


def test_a_possessive_a_year_and_the_request_filters_combine(answerer, corpora):
    assert [c.paper_id for c in answerer.ask("List Ada Marchetti's papers from 2025").citations] == ["nips25-001", "nips25-002"]
    scoped = corpora.scope(["conf"], MetadataFilter(keyword=("routing",)))
    answer = answerer.ask("Which papers by Ada Marchetti are there?", scope=scoped)
    assert [c.paper_id for c in answer.citations] == ["nips25-002"] and answer.answer.startswith("The corpus holds 1 paper by")
    assert answer.filters == {"keyword": ["routing"]} and answer.corpora == ["conf"]


def test_none_found_is_said_and_cites_nothing(answerer):
    answer = answerer.ask("How many papers by Li Wei are about speech?")
    assert answer.answer == "These corpora hold no paper by Li Wei about speech." and not answer.citations and not answer.refusal_reason


def test_beyond_the_limit_the_rest_are_counted(corpora):
    small = build_answerer(corpora.settings.replace(metadata_list_max=1), ExtractiveModel(), corpora)
    answer = small.ask("Which papers from NeurIPS 2025 are there?")
    assert answer.answer.endswith("Voxtral: streaming speech recognition with sparse attention [1], and 2 more.")
    assert len(answer.citations) == 1


def test_a_question_that_names_no_known_author_venue_or_year_is_answered_as_usual(answerer, corpora):
    scope = corpora.scope()
    assert read_question("Which papers are about speech?", scope) is None
    assert read_question("Which papers by Zorro Unknown are about speech?", scope) is None
    assert read_question("What is Voxtral?", scope) is None  # asks for no list of papers
    assert read_question("Which papers by Ada are there?", scope) is None  # a part of a name is no author
    assert answerer.ask("Which papers are about speech?").model != "records"


def test_the_stream_sends_the_listed_sources_first(answerer):
    events = list(answerer.stream("Which papers by Priya Raman are there?"))
    assert [e.name for e in events] == ["sources", "delta", "final"]
    assert [s.paper_id for s in events[0].sources] == ["iclr26-102", "nips25-003"]
    assert events[-1].answer.answer == events[1].text
