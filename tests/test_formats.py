"""The formats researchers bring (OpenReview notes, arXiv Atom, CSV, plain text), read from fixture
files in each source's documented shape (tests/data/formats/)."""

import json
import shutil

import pytest

from qa_service.corpus.reading import load_corpus
from qa_service.errors import CorpusError
from tests.conftest import ROOT

FORMATS = ROOT / "tests" / "data" / "formats"


def by_id(papers):
    return {p.id: p for p in papers}


def test_openreview_notes_as_the_api_returns_them():
    papers = by_id(load_corpus([FORMATS / "openreview_notes.json"]))
    lantern, tidepool = papers["Zx9aB3kQpL"], papers["Qw7-Er_5tY"]
    assert lantern.title == lantern.label == "Sparse Lantern: Routing Tokens Through Sparse Experts on a Budget"
    assert lantern.authors == ["Grace Hopper", "Edsger W. Dijkstra"]
    assert lantern.keywords == ["mixture of experts", "routing", "efficiency"]
    assert (lantern.venue, lantern.year, lantern.url) == ("ICLR 2026 Poster", 2026, "https://openreview.net/forum?id=Zx9aB3kQpL")
    assert "2.4× fewer FLOPs" in lantern.text and "61%" in lantern.text and "**" not in lantern.text
    assert tidepool.authors == ["Ada Lovelace", "Charles Babbage"] and tidepool.year == 2026


def test_openreview_notes_as_a_bare_list_and_in_api_v1_shape(tmp_path):
    notes = json.loads((FORMATS / "openreview_notes.json").read_text())["notes"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(notes))
    assert [p.id for p in load_corpus([bare])] == ["Zx9aB3kQpL", "Qw7-Er_5tY"]
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps([{"id": "old1", "content": {"title": "Old", "abstract": "An abstract.", "authors": ["A. B"]}}]))
    (old,) = load_corpus([v1])
    assert (old.title, old.authors) == ("Old", ["A. B"])


def refused(path, body: str, message: str) -> None:
    """A corpus file holding `body` is refused by load_corpus with `message` (a regex)."""
    path.write_text(body, encoding="utf-8")
    with pytest.raises(CorpusError, match=message):
        load_corpus([path])


@pytest.mark.parametrize(
    "body,message",
    [
        ('{"notes": []}', "no notes"),
        ('{"count": 0}', "expected OpenReview notes"),
        ('[{"id": "a1", "title": "flat"}]', r"notes\[0\]: not an OpenReview note"),
        ('[{"id": "a1", "content": {"title": {"value": "t"}}}]', r"notes\[0\] \(id 'a1'\): missing or empty 'abstract'"),
        ('[{"content": {"abstract": {"value": "x"}}}]', r"notes\[0\]: missing 'id'"),
        ('{"notes": [\n{"id": ', r"bad\.json:2: invalid JSON"),
    ],
)
def test_bad_openreview_files_name_the_note(tmp_path, body, message):
    refused(tmp_path / "bad.json", body, message)


def test_arxiv_atom_feed():
    papers = by_id(load_corpus([FORMATS / "arxiv_feed.xml"]))
    murmur, bells = papers["2401.01234v2"], papers["hep-th/9901001v1"]
    assert murmur.title == murmur.label == "Murmur: Streaming Speech Recognition with Constant Memory"
    assert murmur.authors == ["Grace Hopper", "Claude Shannon"]
    assert murmur.keywords == ["eess.AS", "cs.CL"] and murmur.year == 2024 and murmur.venue == "arXiv"
    assert murmur.url == "http://arxiv.org/abs/2401.01234v2"
    assert murmur.text.startswith("Streaming speech recognisers keep a growing cache") and "\n" not in murmur.text
    assert bells.venue == "J. Toy Phys. 12 (1999) 1-9" and bells.year == 1999 and bells.authors == ["John von Neumann"]


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1</id><summary>&lol2;</summary></entry></feed>"""
EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1</id><summary>&secret;</summary></entry></feed>"""


@pytest.mark.parametrize(
    "body,message",
    [
        (BILLION_LAUGHS, "declares a DTD or entities"),
        (EXTERNAL_ENTITY, "declares a DTD or entities"),
        ('<feed xmlns="http://www.w3.org/2005/Atom">\n<entry>\n</feed>', r"feed\.xml:3: not well-formed XML"),
        ("<rss><channel/></rss>", "expected an Atom <feed>"),
        ('<feed xmlns="http://www.w3.org/2005/Atom"></feed>', "no <entry>"),
        ('<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/api/errors#incorrect_id_format</id>'
         "<title>Error</title><summary>incorrect id format for 1234</summary></entry></feed>",
         "entry 1: <id> .* is not an arXiv abstract URL .*incorrect id format"),
    ],
)
def test_bad_or_hostile_atom_files_are_refused(tmp_path, body, message):
    refused(tmp_path / "feed.xml", body, message)


def test_csv_with_title_abstract_and_optional_columns():
    quill, ember = load_corpus([FORMATS / "papers.csv"])
    assert (quill.id, ember.id) == ("papers:1", "papers:2")
    assert quill.label == "Quill: Faster Proof Search with Learned Premise Selection"
    assert quill.authors == ["Alan Turing", "Kurt Gödel"] and quill.year == 2025 and quill.url == "https://example.org/quill"
    assert ember.authors == ["Lovelace, Ada"] and ember.url == "" and "23%" in ember.text


@pytest.mark.parametrize(
    "body,message",
    [
        ("name,text\nx,y\n", r"papers\.csv:1: the header row must name the columns title,abstract"),
        ("title,abstract,doi\nx,y,z\n", "got 'title,abstract,doi'"),
        ("title,abstract\nx,An abstract.\ny\n", r"papers\.csv:3: 1 fields where the header names 2"),
        ('title,abstract\nx,"An abstract\nover two lines."\ny,\n', r"papers\.csv:4: missing or empty 'abstract'"),
        ("title,abstract,year\nx,An abstract.,soon\n", r"papers\.csv:2: 'year' must be a number"),
        ("title,abstract\n", "no papers"),
    ],
)
def test_bad_csv_files_name_the_line(tmp_path, body, message):
    refused(tmp_path / "papers.csv", body, message)


def test_plain_text_needs_no_header():
    prism, mirror = load_corpus([FORMATS / "abstracts.txt"])
    assert (prism.id, mirror.id) == ("abstracts:1", "abstracts:2")
    assert prism.text.startswith("Retrieval-augmented generation fails") and "\n" not in prism.text
    assert prism.label == "Prism" and mirror.label == "Mirror Check"


def test_a_folder_of_every_format_reads_each_file_once():
    papers = load_corpus([FORMATS])
    assert len(papers) == 8 and len({p.id for p in papers}) == 8
    assert {p.source for p in papers} == {"abstracts.txt", "arxiv_feed.xml", "openreview_notes.json", "papers.csv"}  # relative, not absolute


def test_a_file_no_reader_takes_in_a_folder_is_skipped_with_a_one_line_notice(tmp_path):
    shutil.copy(FORMATS / "papers.csv", tmp_path / "papers.csv")
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / ".DS_Store").write_bytes(b"\0")
    heard: list[str] = []
    papers = load_corpus([tmp_path], notice=heard.append)
    assert {p.source for p in papers} == {"papers.csv"}
    assert len(heard) == 1 and "\n" not in heard[0]
    assert heard[0].startswith(f"{tmp_path}: skipped 1 file no reader takes (paper.pdf); read are .txt, .jsonl")
    assert [p.source for p in load_corpus([tmp_path / "papers.csv"], notice=heard.append)][0] == "papers.csv" and len(heard) == 1


def test_ingest_says_which_files_it_skipped_and_the_paper_names_its_file_not_a_server_path(tmp_path):
    from click.testing import CliRunner

    from qa_service.cli import main
    from qa_service.web.app import create_app
    from tests.conftest import make_settings

    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(FORMATS / "papers.csv", folder / "papers.csv")
    (folder / "paper.pdf").write_bytes(b"%PDF-1.7")
    result = CliRunner().invoke(main, ["ingest", str(folder.resolve())], env={"QA_DATA_DIR": str(tmp_path / "data")})
    assert result.exit_code == 0, result.output
    assert f"{folder.resolve()}: skipped 1 file no reader takes (paper.pdf)" in result.stderr
    web = create_app(make_settings(tmp_path / "data")).test_client()
    paper_id = web.get("/api/papers").get_json()["papers"][0]["id"]
    assert web.get(f"/api/papers/{paper_id}").get_json()["source"] == "papers.csv"


@pytest.mark.parametrize("name", ["paper.pdf", "notes.docx", "README"])
def test_unsupported_files_are_refused_naming_the_supported_formats(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b"%PDF-1.7 binary")
    with pytest.raises(CorpusError) as info:
        load_corpus([path])
    message = info.value.message
    assert "are not read; supported:" in message and "expected the header" not in message
    for suffix in (".txt", ".jsonl", ".json", ".xml", ".csv"):
        assert suffix in message


def test_a_folder_without_corpus_files_says_what_is_read(tmp_path):
    (tmp_path / "paper.pdf").write_bytes(b"%PDF")
    with pytest.raises(CorpusError, match="no corpus files in this folder; supported: .txt"):
        load_corpus([tmp_path])
