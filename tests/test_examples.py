"""The first visit's example questions: drawn from the loaded papers' names or titles, spread over
the corpus, served by GET /api/examples (Flask test client over a real index)."""

from __future__ import annotations

from qa_service.corpus.reading import load_corpus
from qa_service.records import Paper
from qa_service.store.index import Index
from qa_service.web.app import create_app
from qa_service.web.examples import EXAMPLES, example_questions, paper_name
from tests.conftest import ROOT, SEEDS, make_settings


def paper(pid: str, label: str = "", title: str = "") -> Paper:
    return Paper(id=pid, abstract="x", text="x", title=title, label=label)


def test_a_paper_goes_by_its_name_or_the_word_before_its_titles_colon():
    assert paper_name(paper("a", label="RouterArena")) == "RouterArena"
    assert paper_name(paper("b", label="K²-Agent")) == "K²-Agent"
    assert paper_name(paper("c", label="Murmur: Streaming", title="Murmur: Streaming Speech Recognition")) == "Murmur"
    assert paper_name(paper("d", label="Subset-level evaluation framework based on statistical independence")) == ""
    assert paper_name(paper("e", label="survey")) == ""  # an ordinary lower-case word is no name
    assert paper_name(paper("f", label="2024")) == ""


def test_examples_are_spread_over_the_corpus_named_papers_first_then_short_titles():
    named = [("c", paper(f"p{i}", label=f"Name{i}")) for i in range(12)]
    picked = example_questions(named)
    assert len(picked) == EXAMPLES and len({e.paper_id for e in picked}) == EXAMPLES
    assert picked[0].question == "What is Name0?" and picked[1].paper_id == "p3"  # every third of twelve
    titled = [("c", paper("t1", label="a long phrase", title="Learning to Count Vacua")), ("c", paper("t2", title="x" * 200))]
    assert [e.question for e in example_questions(titled)] == ["What does the paper “Learning to Count Vacua” find?"]
    assert example_questions([]) == []


def test_the_route_draws_them_from_the_corpus_that_is_loaded(tmp_path):
    settings = make_settings(tmp_path / "seeds")
    Index(settings).ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    client = create_app(settings).test_client()
    examples = client.get("/api/examples").get_json()["examples"]
    assert examples[0] == {"question": "What is RouterArena?", "paper_id": "000_e3b5a0511f204a83:2", "corpus": "iclr2026"}
    assert len(examples) == EXAMPLES
    assert client.get("/api/examples?corpus=nope").status_code == 404
    other = make_settings(tmp_path / "formats")
    Index(other).ingest(load_corpus([ROOT / "tests" / "data" / "formats"]))
    asked = [e["question"] for e in create_app(other).test_client().get("/api/examples").get_json()["examples"]]
    assert "What is RouterArena?" not in asked and any("Murmur" in q for q in asked)
