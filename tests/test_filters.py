"""Metadata filters: parsed with errors that name the field, and one Chroma `where` that selects exactly the
papers the filter means, on the paper records and on the chunks (hypothesis, against a real Chroma)."""

import json

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from qa_service.corpus.reading import load_corpus
from qa_service.errors import BadRequest
from qa_service.store.filters import FIELDS_VERSION, MetadataFilter, normalize, parse_filters, parse_metadata, record_fields
from qa_service.store.index import Index
from qa_service.records import Paper, paper_of
from tests.conftest import ROOT, make_settings

METADATA_PAPERS = ROOT / "tests" / "data" / "metadata_papers.jsonl"


@pytest.fixture(scope="module")
def metadata_index(tmp_path_factory) -> Index:
    index = Index(make_settings(tmp_path_factory.mktemp("filter-data")))
    index.ingest(load_corpus([METADATA_PAPERS]))
    return index


@pytest.fixture(scope="module")
def papers() -> list[Paper]:
    return load_corpus([METADATA_PAPERS])


def test_a_filter_is_parsed_from_one_value_or_a_list(settings):
    parsed = parse_filters({"year": 2026, "venue": ["ICLR 2026", "NeurIPS 2025"], "author": "Ada  Marchetti"}, settings)
    assert parsed == MetadataFilter(year=(2026,), venue=("ICLR 2026", "NeurIPS 2025"), author=("Ada Marchetti",))
    assert parsed.describe() == "year 2026, venue ICLR 2026 or NeurIPS 2025, author Ada Marchetti"
    assert parsed.to_dict() == {"year": [2026], "venue": ["ICLR 2026", "NeurIPS 2025"], "author": ["Ada Marchetti"]}
    assert not parse_filters(None, settings) and not parse_filters({}, settings)


@pytest.mark.parametrize("value, named", [
    ({"yeer": 2026}, "filters.yeer"),
    ({"year": "2026"}, "filters.year"),
    ({"year": True}, "filters.year"),
    ({"year": 0}, "filters.year"),
    ({"year": 10000}, "filters.year"),
    ({"year": [2026, 1.5]}, "filters.year"),
    ({"year": []}, "filters.year"),
    ({"venue": ""}, "filters.venue"),
    ({"venue": " \u200b "}, "filters.venue"),
    ({"author": 7}, "filters.author"),
    ({"keyword": "x" * 201}, "filters.keyword"),
    ({"keyword": ["a"] * 21}, "filters.keyword"),
    ([2026], "filters"),
])
def test_an_unknown_field_or_a_bad_value_is_a_400_naming_it(settings, value, named):
    with pytest.raises(BadRequest) as caught:
        parse_filters(value, settings)
    assert caught.value.status == 400 and f"'{named}'" in caught.value.message and caught.value.param == named


def test_v1_metadata_values_are_strings_as_openai_sends_them(settings):
    assert parse_metadata({"year": "2026", "venue": "ICLR 2026"}, settings) == MetadataFilter(year=(2026,), venue=("ICLR 2026",))
    for bad, named in [({"year": 2026}, "metadata.year"), ({"year": "20x6"}, "metadata.year"), ({"year": "2026\n"}, "metadata.year"),
                       ({"team": "a"}, "metadata.team"), ({"author": ["a"]}, "metadata.author")]:
        with pytest.raises(BadRequest) as caught:
            parse_metadata(bad, settings)
        assert caught.value.param == named


def test_text_matches_ignore_case_accents_and_spacing():
    assert normalize("  Adà   MARCHETTI ") == normalize("ada marchetti") == "ada marchetti"
    paper = Paper("p", "a", "a", authors=["Adà Marchetti"], venue="ICLR 2026", year=2026, keywords=["Speech"])
    assert MetadataFilter(author=("ada marchetti",), venue=("iclr  2026",), keyword=("SPEECH",), year=(2025, 2026)).matches(paper)
    assert not MetadataFilter(author=("ada",)).matches(paper)  # the full name, not a part of it
    assert MetadataFilter(author=("Marchetti, Ada",)).matches(paper)  # "surname, given" is the same author
    assert record_fields(Paper("q", "a", "a", authors=["Lovelace, Ada"]))["f_authors"] == ["ada lovelace"]


def test_empty_fields_are_removed_from_a_record(settings):
    """Chroma merges metadata on upsert and update: a field the paper no longer has must be written as None."""
    fields = record_fields(Paper("p", "a", "a"))
    assert fields["f_v"] == FIELDS_VERSION and all(fields[key] is None for key in ("f_year", "f_venue", "f_authors", "f_keywords"))


VALUES = {
    "year": [2024, 2025, 2026],
    "venue": ["NeurIPS 2025", "iclr 2026", "ICML 2025", "CVPR 2024"],
    "author": ["Ada Marchetti", "jonas berg", "Priya Raman", "Li Wei", "Nobody Here"],
    "keyword": ["speech", "Unlearning", "routing", "llm", "quantum"],
}
filters = st.fixed_dictionaries({}, optional={name: st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True)
                                              for name, values in VALUES.items()})


@given(chosen=filters)
@hsettings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_the_chroma_where_selects_exactly_the_papers_the_filter_means(metadata_index, papers, chosen):
    """The translation is checked against the filter's plain meaning, on both collections it queries."""
    only = MetadataFilter(**{name: tuple(values) for name, values in chosen.items()})
    expected = {p.id for p in papers if only.matches(p)}
    where = only.where()
    if where is None:
        assert expected == {p.id for p in papers}
        return
    assert set(metadata_index.papers.get(where=where, include=[])["ids"]) == expected
    chunks = metadata_index.chunks.get(where=where, include=[])["ids"]
    assert {paper_of(cid) for cid in chunks} == expected
    assert set(chunks) == {cid for pid, ids in metadata_index.chunk_ids_by_paper().items() if pid in expected for cid in ids}


def test_an_edited_paper_loses_a_field_on_its_record_and_its_chunks(tmp_path, papers):
    """Dropping a paper's venue is a metadata-only edit (nothing re-embedded): the filter must stop finding it."""
    index = Index(make_settings(tmp_path / "data"))
    index.ingest(papers)
    edited = [Paper(**{**p.to_dict(), "venue": ""}) if p.id == "iclr26-101" else p for p in papers]
    summary = index.ingest(edited)
    assert summary.chunks == 0 and summary.updated == 1
    where = MetadataFilter(venue=("ICLR 2026",)).where()
    assert "iclr26-101" not in index.papers.get(where=where, include=[])["ids"]
    assert not [cid for cid in index.chunks.get(where=where, include=[])["ids"] if cid.startswith("iclr26-101#")]


def test_a_store_written_before_filters_gets_its_fields_at_the_next_ingest(tmp_path, papers):
    """Records without the filter fields (an older data dir) are filled in by a metadata-only pass, and
    `check` names them until then."""
    from qa_service.store.checking import check_store

    index = Index(make_settings(tmp_path / "data"))
    index.ingest(papers)
    bare = {key: None for key in record_fields(papers[0])}
    index.papers.update(ids=[p.id for p in papers], metadatas=[bare] * len(papers))
    chunk_ids = sorted(cid for ids in index.chunk_ids_by_paper().values() for cid in ids)
    index.chunks.update(ids=chunk_ids, metadatas=[bare] * len(chunk_ids))
    where = MetadataFilter(year=(2026,)).where()
    assert index.papers.get(where=where, include=[])["ids"] == []
    assert any("filter fields" in str(f) for f in check_store(index).findings)
    summary = index.ingest(papers)
    assert summary.chunks == 0 and summary.updated == len(papers)  # nothing re-embedded
    assert sorted(index.papers.get(where=where, include=[])["ids"]) == ["iclr26-101", "iclr26-102", "iclr26-103", "iclr26-104"]
    assert check_store(index).ok


# -- OpenReview's venue strings, and year ranges -----------------------------------------------------

OPENREVIEW = ROOT / "tests" / "data" / "openreview_papers.jsonl"


@pytest.fixture(scope="module")
def openreview_index(tmp_path_factory) -> Index:
    index = Index(make_settings(tmp_path_factory.mktemp("openreview-data")))
    index.ingest(load_corpus([OPENREVIEW]))
    return index


def ids_of(index: Index, only: MetadataFilter) -> set[str]:
    papers = set(index.papers.get(where=only.where(), include=[])["ids"])
    chunks = {paper_of(cid) for cid in index.chunks.get(where=only.where(), include=[])["ids"]}
    assert papers == chunks == {p.id for p in load_corpus([OPENREVIEW]) if only.matches(p)}
    return papers


@pytest.mark.parametrize("venue, expected", [
    ("ICLR 2025", {"or-voxa", "or-gripnet"}),  # "ICLR 2025 Poster", "ICLR 2025 Oral"
    ("iclr 2025 oral", {"or-gripnet"}),
    ("ICLR", {"or-voxa", "or-gripnet"}),
    ("ICLR 2026", {"or-prune"}),  # "Submitted to ICLR 2026": its words end the venue
    ("NeurIPS 2024", {"or-tidal"}),
    ("ICLR 202", set()),  # whole words only
    ("2025", set()),  # neither the start nor the end of a venue ("ICLR 2025 Oral"): a year is the year filter
])
def test_a_venue_matches_openreview_venue_strings_word_by_word(openreview_index, venue, expected):
    assert ids_of(openreview_index, MetadataFilter(venue=(venue,))) == expected


def test_a_year_range_selects_both_ends_and_between(openreview_index, settings):
    ranged = parse_filters({"year": {"from": 2025, "to": 2026}}, settings)
    assert ranged == MetadataFilter(year_from=2025, year_to=2026) and ranged.to_dict() == {"year_from": [2025], "year_to": [2026]}
    assert ranged.describe() == "year from 2025 to 2026"
    assert ids_of(openreview_index, ranged) == {"or-voxa", "or-gripnet", "or-prune"}
    assert ids_of(openreview_index, parse_filters({"year": {"to": 2024}}, settings)) == {"or-tidal"}
    assert ids_of(openreview_index, parse_filters({"year": {"from": 2025}, "venue": "ICLR"}, settings)) == {"or-voxa", "or-gripnet"}


@pytest.mark.parametrize("value, named, words", [
    ({"year": {"since": 2024}}, "filters.year", "'since' is not one of them"),
    ({"year": {}}, "filters.year", "as a range is"),
    ({"year": {"from": "2024"}}, "filters.year.from", "must be a year"),
])
def test_a_bad_year_range_is_a_400_naming_it(settings, value, named, words):
    with pytest.raises(BadRequest, match=words) as caught:
        parse_filters(value, settings)
    assert caught.value.param == named


def test_the_range_in_a_query_string_v1_metadata_and_on_the_command_line(settings):
    from werkzeug.datastructures import MultiDict

    from qa_service.store.filters import filters_from_options, filters_from_query

    wanted = MetadataFilter(year_from=2024, year_to=2026)
    assert filters_from_query(MultiDict({"year_from": "2024", "year_to": "2026"}), settings) == wanted
    assert parse_metadata({"year_from": "2024", "year_to": "2026"}, settings) == wanted
    assert filters_from_options(settings, 2024, 2026) == wanted
    with pytest.raises(BadRequest, match="'metadata.year_to' must be a string"):
        parse_metadata({"year_to": 2026}, settings)
    backwards = filters_from_query(MultiDict({"year_from": "2026", "year_to": "2024"}), settings)
    assert backwards and not backwards.in_range(2025) and not backwards.in_range(2026)  # holds no year: no paper matches


def test_the_http_routes_and_the_cli_take_the_range(openreview_index, tmp_path):
    from click.testing import CliRunner

    from qa_service.cli import main
    from qa_service.web.app import create_app

    web = create_app(openreview_index.settings.replace(rate_limit="", answer_rate_limit=""), index=openreview_index).test_client()
    listed = web.get("/api/papers?year_from=2025&venue=ICLR 2026").get_json()["papers"]
    assert {p["id"] for p in listed} == {"or-prune"}
    searched = web.post("/api/search", json={"question": "speech recognition", "filters": {"year": {"from": 2024, "to": 2024}}}).get_json()
    assert [r["paper_id"] for r in searched["results"]] == ["or-tidal"] and searched["filters"] == {"year_from": [2024], "year_to": [2024]}
    chat = web.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "What success rate does GripNet reach?"}],
                                                  "metadata": {"venue": "ICLR 2025", "year_from": "2025"}}).get_json()
    assert chat["citations"][0]["paper_id"] == "or-gripnet"
    env = {"QA_DATA_DIR": openreview_index.settings.data_dir}
    out = CliRunner().invoke(main, ["papers", "--year-from", "2025", "--year-to", "2025", "--json"], env=env)
    assert out.exit_code == 0, out.output
    assert {p["id"] for p in json.loads(out.stdout)["papers"]} == {"or-voxa", "or-gripnet"}
    bad = CliRunner().invoke(main, ["papers", "--year-from", "0"], env=env)
    assert bad.exit_code == 2 and "'--year-from' must be a year" in bad.output
