"""Authors from the papers' metadata: named in a question, they bring their papers; titles and authors
show in labels, sources and /api/papers. On the fixture corpus of every format (tests/data/formats/)."""

import pytest

from qa_service.corpus.authors import AuthorBook, parse_author
from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, make_settings

FORMATS = ROOT / "tests" / "data" / "formats"
BOOK = AuthorBook({
    "p1": ["Grace Hopper", "Edsger W. Dijkstra"], "p2": ["Grace Hopper", "Claude Shannon"], "p3": ["Lovelace, Ada"],
    "p4": ["J. von Neumann"], "p5": ["Kurt Gödel"], "p6": ["H1 Collaboration"],
})


@pytest.mark.parametrize(
    "question,papers",
    [
        ("Which papers by Grace Hopper are in the corpus?", {"p1", "p2"}),
        ("which papers did grace hopper write", {"p1", "p2"}),
        ("What did G. Hopper publish?", {"p1", "p2"}),
        ("Papers by E. W. Dijkstra?", {"p1"}),
        ("Edsger Dijkstra's work on routing", {"p1"}),
        ("Which papers were written by Ada Lovelace?", {"p3"}),
        ("Anything by John von Neumann?", {"p4"}),
        ("Papers by Kurt Godel", {"p5"}),
        ("Papers by Grace Hopper and Claude Shannon", {"p1", "p2"}),
    ],
)
def test_an_author_is_named_by_full_name_or_initials_and_surname(question, papers):
    assert {pid for match in BOOK.find(question) for pid in match.paper_ids} == papers


@pytest.mark.parametrize("question", [
    "What is Hopper?",                          # a surname alone names no one
    "Which papers by Grace Kelly?",             # another person
    "a hopper for grain",                       # a lower-case initial is the article
    "Which papers by D. Hopper?",               # another initial
    "What does H1 Collaboration report?",       # a collaboration is no person
])
def test_no_author_is_named_by_a_word_or_another_person(question):
    assert BOOK.find(question) == []


def test_parse_author_splits_given_names_and_surname():
    assert parse_author("Lovelace, Ada") == parse_author("Ada  Lovelace")
    assert parse_author("John von Neumann").surname == "neumann" and parse_author("Grace").__class__ is type(None)


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    settings = make_settings(tmp_path_factory.mktemp("formats-data"))
    Index(settings).ingest(load_corpus([FORMATS]))
    return create_app(settings).test_client()


def test_titles_and_authors_show_in_the_listing_and_the_paper(web):
    listing = {p["id"]: p for p in web.get("/api/papers").get_json()["papers"]}
    assert listing["2401.01234v2"]["label"] == listing["2401.01234v2"]["title"] == "Murmur: Streaming Speech Recognition with Constant Memory"
    assert listing["Zx9aB3kQpL"]["year"] == 2026 and listing["papers:1"]["title"].startswith("Quill:")
    paper = web.get("/api/papers/hep-th/9901001v1").get_json()
    assert paper["authors"] == ["John von Neumann"] and paper["venue"] == "J. Toy Phys. 12 (1999) 1-9"
    assert web.get("/api/papers/Qw7-Er_5tY").get_json()["authors"] == ["Ada Lovelace", "Charles Babbage"]


def test_an_answer_labels_its_sources_by_title(web):
    answer = web.post("/api/ask", json={"question": "How does Murmur keep memory constant?"}).get_json()
    assert answer["grounded"] and answer["citations"]
    assert {c["label"] for c in answer["citations"]} == {"Murmur: Streaming Speech Recognition with Constant Memory"}
    assert answer["sources"][0] == {"n": 1, "paper_id": "2401.01234v2", "label": "Murmur: Streaming Speech Recognition with Constant Memory",
                                    "corpus": "iclr2026"}


@pytest.mark.parametrize(
    "question,papers",
    [
        ("Which papers by Grace Hopper are in the corpus?", {"Zx9aB3kQpL", "2401.01234v2"}),
        ("Which papers were written by Ada Lovelace?", {"Qw7-Er_5tY", "papers:2"}),
        ("What did A. Turing publish?", {"papers:1"}),
    ],
)
def test_a_question_about_an_author_is_answered_from_metadata(web, question, papers):
    """Before, "written by" was refused as a detail no abstract states, and the others cited whatever was nearest."""
    answer = web.post("/api/ask", json={"question": question}).get_json()
    assert not answer["insufficient_evidence"] and answer["grounded"], answer
    assert {c["paper_id"] for c in answer["citations"]} == papers
    assert {s["paper_id"] for s in answer["sources"][: len(papers)]} == papers
    search = web.post("/api/search", json={"question": question}).get_json()["results"]
    assert {r["paper_id"] for r in search if r["named"]} == papers


def test_an_unknown_author_is_no_answer(web):
    answer = web.post("/api/ask", json={"question": "Which papers were written by Grace Kelly?"}).get_json()
    assert answer["insufficient_evidence"]


@pytest.mark.parametrize("question", ["Who wrote Murmur?", "who are the authors of murmur", "Murmur: who is the author?"])
def test_who_wrote_a_paper_is_answered_from_its_metadata(web, question):
    """Before, "Who wrote X?" was refused as a detail the abstract does not state, even with the authors in the metadata."""
    answer = web.post("/api/ask", json={"question": question}).get_json()
    assert not answer["insufficient_evidence"] and answer["grounded"] and answer["model"] == "records", answer
    assert answer["answer"] == "Murmur: Streaming Speech Recognition with Constant Memory is by Grace Hopper and Claude Shannon [1]."
    assert [c["paper_id"] for c in answer["citations"]] == ["2401.01234v2"] and answer["citations"][0]["quote"]


def test_who_wrote_a_paper_without_authors_in_its_metadata_is_still_no_answer(web):
    answer = web.post("/api/ask", json={"question": "Who wrote Prism?"}).get_json()  # plain text: no metadata
    assert answer["insufficient_evidence"] and answer["refusal_reason"] == "detail_missing", answer


def test_a_title_names_its_paper_by_the_word_before_its_colon():
    from qa_service.corpus.names import paper_names

    assert "Murmur" in paper_names("Murmur: Streaming Speech Recognition with Constant Memory", [])
    assert "K2-Agent" in paper_names("K2-Agent: co-evolving know-what", [])
    assert not {"Sparse", "Lantern", "Sparse Lantern"} & paper_names("Sparse Lantern: Routing Tokens", [])  # two words: no name


def test_a_saved_bm25_index_from_other_name_rules_is_rebuilt(seed_settings, seed_index, tmp_path):
    """Its name book would lack the title names: loading it must fail so that it is rebuilt."""
    import json
    import shutil

    from qa_service.store.lexical import META, LexicalIndex

    saved = tmp_path / "bm25"
    shutil.copytree(seed_index.bm25_path, saved)
    assert LexicalIndex.load(saved) is not None
    meta = json.loads((saved / META).read_text())
    meta.pop("names_version")
    (saved / META).write_text(json.dumps(meta))
    assert LexicalIndex.load(saved) is None
