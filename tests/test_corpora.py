"""Several corpora side by side, and metadata filters applied inside retrieval, over HTTP and the command line."""

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from qa_service.cli import main
from qa_service.store.index import Index
from qa_service.records import NO_MATCH, REFUSAL, Reading, paper_of
from qa_service.store.scope import NAMES_TTL
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings
from tests.serverkit import until

METADATA_PAPERS = ROOT / "tests" / "data" / "metadata_papers.jsonl"
SEED_FILE = SEEDS / "000_e3b5a0511f204a83.txt"
YEAR_2026 = {"iclr26-101", "iclr26-102", "iclr26-103", "iclr26-104"}


def ingest(settings, paths, corpus=None):
    args = ["ingest", *map(str, paths)] + (["--corpus", corpus] if corpus else [])
    env = {"QA_DATA_DIR": settings.data_dir, "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    return CliRunner().invoke(main, args, env=env)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """The default corpus (19 seed papers) and `conf` (8 papers with authors, years, venues, keywords)."""
    settings = make_settings(tmp_path_factory.mktemp("two-corpora"), rate_limit="", answer_rate_limit="", candidate_chunks=4)
    assert ingest(settings, [SEED_FILE]).exit_code == 0
    done = ingest(settings, [METADATA_PAPERS], "conf")
    assert done.exit_code == 0, done.output
    return settings


@pytest.fixture(scope="module")
def client(two):
    return create_app(two, index=Index(two)).test_client()


def test_corpora_are_listed_with_papers_version_and_model(two, client):
    listed = CliRunner().invoke(main, ["corpora", "--json"], env={"QA_DATA_DIR": two.data_dir})
    rows = json.loads(listed.output)["corpora"]
    assert [(r["name"], r["papers"], r["default"]) for r in rows] == [("iclr2026", 19, True), ("conf", 8, False)]
    assert all(r["version"] and r["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8" for r in rows)
    api = client.get("/api/corpora").get_json()["corpora"]
    assert [c["name"] for c in api] == ["iclr2026", "conf"]
    assert api[1]["years"] == {"2026": 4, "2025": 4} and api[1]["venues"] == {"ICLR 2026": 4, "ICML 2025": 1, "NeurIPS 2025": 3}


def test_health_and_papers_report_per_corpus(client):
    assert client.get("/healthz").get_json() == {"status": "ok", "papers": 27, "corpora": {"iclr2026": 19, "conf": 8}}
    assert client.get("/readyz").get_json()["corpora"] == {"iclr2026": 19, "conf": 8}
    listing = client.get("/api/papers").get_json()
    assert listing["total"] == 27 and listing["corpora"] == {"iclr2026": 19, "conf": 8}
    assert {p["corpus"] for p in listing["papers"] if p["id"].startswith("iclr26")} == {"conf"}
    only = client.get("/api/papers?corpus=conf&year=2026").get_json()
    assert {p["id"] for p in only["papers"]} == YEAR_2026 and only["corpora"] == {"conf": 4}
    assert client.get("/api/papers/iclr26-101").get_json()["corpus"] == "conf"
    assert client.get("/api/papers/iclr26-101?corpus=iclr2026").status_code == 404
    assert client.get("/api/info?corpus=conf").get_json()["index"]["papers"] == 8


def test_every_route_takes_a_corpus_and_an_unknown_one_is_named(client):
    search = client.post("/api/search", json={"question": "speech recognition on phones", "corpus": "conf", "k": 3}).get_json()
    assert search["corpora"] == ["conf"] and {r["corpus"] for r in search["results"]} == {"conf"}
    both = client.post("/api/search", json={"question": "speech recognition on phones", "corpus": ["conf", "iclr2026"], "k": 30})
    assert {r["corpus"] for r in both.get_json()["results"]} == {"conf", "iclr2026"}
    missing = client.post("/api/ask", json={"question": "What is Voxtral?", "corpus": ["conf", "nope"]})
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "unknown_corpus"
    assert "'nope'" in missing.get_json()["error"]["message"] and "iclr2026, conf" in missing.get_json()["error"]["message"]
    bad = client.post("/api/search", json={"question": "x", "corpus": "Bad Name"})
    assert bad.status_code == 400 and "'corpus'" in bad.get_json()["error"]["message"]
    assert client.post("/api/search", json={"question": "x", "corpus": []}).status_code == 400
    assert client.get("/readyz?corpus=nope").status_code == 404


def test_citations_carry_their_corpus(client):
    answer = client.post("/api/ask", json={"question": "What is Voxtral?"}).get_json()
    assert answer["citations"] and {c["corpus"] for c in answer["citations"]} == {"conf"}
    assert {s["corpus"] for s in answer["sources"]} <= {"conf", "iclr2026"} and answer["corpora"] == ["iclr2026", "conf"]
    seed = client.post("/api/ask", json={"question": "What is RouterArena?", "corpus": "iclr2026"}).get_json()
    assert seed["citations"] and {c["corpus"] for c in seed["citations"]} == {"iclr2026"}


def test_a_filter_applies_inside_retrieval_so_k_papers_come_back_when_k_match(two, client):
    """With 16 chunks per side (candidate_chunks 4, k 2), retrieving first and filtering after would leave fewer
    than two papers from 2026 for a question about LLM routers; inside the search both sides return them."""
    question = "Which benchmark compares LLM routers on accuracy and cost?"
    services = client.application.extensions["qa"]
    retriever = services.answerer.retriever
    dense, sparse, *_ = retriever._gather(Reading(question), 16, "hybrid", services.corpora.scope())  # what k 2 searches unfiltered
    pooled = {paper_of(cid) for cid, _ in dense + sparse}
    assert len(pooled & YEAR_2026) < 2  # so filtering after retrieval would come back short: the test tells the two apart
    found = client.post("/api/search", json={"question": question, "k": 2, "filters": {"year": 2026}}).get_json()
    assert len(found["results"]) == 2 and {r["paper_id"] for r in found["results"]} <= YEAR_2026
    assert found["filters"] == {"year": [2026]}
    every = client.post("/api/search", json={"question": question, "k": 10, "filters": {"year": 2026}}).get_json()["results"]
    assert {r["paper_id"] for r in every} == YEAR_2026  # all four, and nothing else, when k is larger


def test_filters_combine_fields_and_values(client):
    found = client.post("/api/search", json={"question": "speech", "k": 10, "filters": {
        "venue": ["iclr 2026", "NeurIPS 2025"], "keyword": "speech"}}).get_json()["results"]
    assert {r["paper_id"] for r in found} == {"nips25-001", "iclr26-101", "iclr26-103"}
    by = client.post("/api/search", json={"question": "language models", "k": 10, "filters": {"author": "ADA MARCHETTI"}})
    assert {r["paper_id"] for r in by.get_json()["results"]} == {"nips25-001", "nips25-002", "iclr26-102"}


def test_a_filter_matching_nothing_is_its_own_refusal(client):
    search = client.post("/api/search", json={"question": "speech", "filters": {"year": 1999}})
    assert search.status_code == 200 and search.get_json()["results"] == []
    answer = client.post("/api/ask", json={"question": "What is Voxtral?", "filters": {"year": 1999, "author": "Ada Marchetti"}}).get_json()
    assert answer["answer"] == NO_MATCH != REFUSAL and answer["refusal_reason"] == "no_match"
    assert answer["refusal_explanation"] == "No paper matches these filters (year 1999, author Ada Marchetti)."
    assert answer["filters"] == {"year": [1999], "author": ["Ada Marchetti"]} and answer["citations"] == []
    off_topic = client.post("/api/ask", json={"question": "What is the best pizza topping?", "filters": {"year": 2026}}).get_json()
    assert off_topic["refusal_reason"] == "off_topic" and off_topic["answer"] == REFUSAL
    stream = client.post("/api/ask/stream", json={"question": "What is Voxtral?", "filters": {"venue": "Nowhere"}})
    assert NO_MATCH in stream.get_data(as_text=True) and '"refusal_reason": "no_match"' in stream.get_data(as_text=True)


def test_an_answer_shows_its_filters_and_keeps_to_them(client):
    answer = client.post("/api/ask", json={"question": "Which papers study speech?", "filters": {"year": 2026}}).get_json()
    assert answer["filters"] == {"year": [2026]} and answer["citations"]
    assert {c["paper_id"] for c in answer["citations"]} <= YEAR_2026
    assert {s["paper_id"] for s in answer["sources"]} <= YEAR_2026


def test_bad_filters_are_400s_naming_the_field(client):
    for body, named in [({"filters": {"yeer": 2026}}, "filters.yeer"), ({"filters": {"year": "2026"}}, "filters.year"),
                        ({"filters": "year=2026"}, "filters")]:
        response = client.post("/api/ask", json={"question": "What is Voxtral?", **body})
        assert response.status_code == 400 and f"'{named}'" in response.get_json()["error"]["message"]
    assert client.get("/api/papers?year=twenty").status_code == 400
    assert client.get("/api/papers?color=red").status_code == 200  # an unknown query parameter is no filter


def test_the_facade_selects_a_corpus_by_model_and_filters_by_metadata(client):
    models = [m["id"] for m in client.get("/v1/models").get_json()["data"]]
    assert models == ["qa-service", "qa-service:iclr2026", "qa-service:conf"]
    assert client.get("/v1/models/qa-service:conf").status_code == 200
    assert client.get("/v1/models/qa-service:nope").status_code == 404
    body = {"model": "qa-service:conf", "messages": [{"role": "user", "content": "Which papers study speech?"}],
            "metadata": {"year": "2026", "keyword": "speech"}}
    reply = client.post("/v1/chat/completions", json=body).get_json()
    assert reply["model"] == "qa-service:conf" and reply["citations"]
    assert {c["paper_id"] for c in reply["citations"]} <= {"iclr26-101", "iclr26-103"} and {c["corpus"] for c in reply["citations"]} == {"conf"}
    nothing = client.post("/v1/chat/completions", json={**body, "metadata": {"year": "1999"}}).get_json()
    assert nothing["choices"][0]["message"]["content"] == NO_MATCH
    for bad, param, status in [({"metadata": {"team": "x"}}, "metadata", 400), ({"metadata": {"year": 2026}}, "metadata", 400),
                               ({"model": "qa-service:nope"}, "model", 404)]:  # an unknown model: 404, as OpenAI answers it
        refused = client.post("/v1/chat/completions", json={**body, **bad})
        assert refused.status_code == status and refused.get_json()["error"]["param"] == param


def test_the_sources_list_names_the_corpus_when_an_answer_spans_several(client):
    reply = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "What is Voxtral?"}]}).get_json()
    assert "(nips25-001, conf)" in reply["choices"][0]["message"]["content"]
    one = client.post("/v1/chat/completions", json={"model": "qa-service:conf", "messages": [{"role": "user", "content": "What is Voxtral?"}]})
    assert "(nips25-001)" in one.get_json()["choices"][0]["message"]["content"]


def test_paper_ids_are_unique_across_corpora_and_a_refused_ingest_leaves_no_corpus(two):
    refused = ingest(two, [SEED_FILE], "copy")
    assert refused.exit_code == 1 and "already in corpus 'iclr2026'" in refused.output
    listed = CliRunner().invoke(main, ["corpora"], env={"QA_DATA_DIR": two.data_dir}).output
    assert "copy" not in listed


def test_the_command_line_takes_corpora_and_filters(two):
    env = {"QA_DATA_DIR": two.data_dir}
    found = CliRunner().invoke(main, ["search", "speech", "--corpus", "conf", "--year", "2026", "--keyword", "speech", "--json"], env=env)
    assert found.exit_code == 0 and {r["paper_id"] for r in json.loads(found.output)["results"]} == {"iclr26-101", "iclr26-103"}
    asked = CliRunner().invoke(main, ["ask", "What is Voxtral?", "--venue", "ICLR 1999"], env=env)
    assert asked.exit_code == 3 and NO_MATCH in asked.output and "Filters: venue ICLR 1999" in asked.output
    bad = CliRunner().invoke(main, ["search", "speech", "--year", "0"], env=env)
    assert bad.exit_code == 2 and "'--year'" in bad.output
    unknown = CliRunner().invoke(main, ["search", "speech", "--corpus", "nope"], env=env)
    assert unknown.exit_code == 1 and "there is no corpus 'nope'" in unknown.output


def test_drop_asks_first_then_removes_everything_of_the_corpus(tmp_path):
    settings = make_settings(tmp_path / "data")
    assert ingest(settings, [METADATA_PAPERS], "gone").exit_code == 0
    env = {"QA_DATA_DIR": settings.data_dir}
    kept = CliRunner().invoke(main, ["drop", "gone"], input="n\n", env=env)
    assert kept.exit_code == 1 and "gone" in CliRunner().invoke(main, ["corpora"], env=env).output
    dropped = CliRunner().invoke(main, ["drop", "gone", "--yes"], env=env)
    assert dropped.exit_code == 0 and "dropped corpus gone (8 papers, 8 chunks)" in dropped.output
    assert "gone" not in CliRunner().invoke(main, ["corpora"], env=env).output
    assert not list((tmp_path / "data").glob("gone*"))  # manifest, ledger and BM25 went too
    assert CliRunner().invoke(main, ["drop", "gone", "--yes"], env=env).exit_code == 1
    again = ingest(settings, [METADATA_PAPERS], "gone")  # the name is free again, and the ids
    assert again.exit_code == 0 and "8 added" in again.output


@pytest.mark.slow
def test_a_server_sees_a_corpus_another_process_adds_and_drops(tmp_path):
    """Embedded mode: every corpus shares one client, reopened once for all after another process wrote."""
    settings = make_settings(tmp_path / "data", rate_limit="", answer_rate_limit="")
    assert ingest(settings, [SEED_FILE]).exit_code == 0
    client = create_app(settings).test_client()
    assert client.post("/api/search", json={"question": "RouterArena"}).get_json()["results"][0]["corpus"] == "iclr2026"
    env = {**os.environ, "QA_DATA_DIR": settings.data_dir, "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    command = [sys.executable, "-m", "qa_service.cli"]
    subprocess.run([*command, "ingest", str(METADATA_PAPERS), "--corpus", "conf"], env=env, check=True, capture_output=True, timeout=300)
    # another process's change shows within NAMES_TTL (the list of corpora is trusted that long): wait it out, bounded
    assert until(lambda: "conf" in client.get("/healthz").get_json()["corpora"], NAMES_TTL + 5)
    found = client.post("/api/search", json={"question": "Voxtral streaming speech recognition", "corpus": "conf"}).get_json()
    assert found["results"][0]["paper_id"] == "nips25-001"
    assert client.post("/api/search", json={"question": "RouterArena"}).get_json()["results"][0]["label"] == "RouterArena"
    subprocess.run([*command, "drop", "conf", "--yes"], env=env, check=True, capture_output=True, timeout=300)
    assert until(lambda: client.get("/healthz").get_json()["corpora"] == {"iclr2026": 19}, NAMES_TTL + 5)
    assert client.post("/api/search", json={"question": "Voxtral", "corpus": "conf"}).status_code == 404



def test_collections_of_another_service_are_not_corpora_here(tmp_path):
    """A Chroma server can hold other services' collections: only those this service made are its corpora."""
    settings = make_settings(tmp_path / "data")
    assert ingest(settings, [SEED_FILE]).exit_code == 0
    from qa_service.store.corpora import Corpora

    registry = Corpora(settings)
    client = registry.default.client
    for kind in ("chunks", "papers"):
        made = client.get_or_create_collection(f"foreign_{kind}", embedding_function=registry.default.embedder)
        made.add(ids=["x"], embeddings=[[1.0] * 384], documents=["x"])
    assert registry.names() == ["iclr2026"]
    refused = ingest(settings, [METADATA_PAPERS], "foreign")
    assert refused.exit_code == 1 and "belong to another service" in refused.output
    assert client.get_collection("foreign_papers").count() == 1  # untouched


def test_the_four_ways_to_restrict_the_dense_side_agree(client):
    """A Chroma server gets the filter's `where`; the embedded store its `ids` filter, an exact search of the
    few chunks left, or (a broad filter) the nearest chunks over-fetched and the allowed ones kept: each
    returns the same chunks, in the same order, as the others."""
    from qa_service.store.filters import MetadataFilter
    from qa_service.retrieval.retriever import Retriever

    services = client.application.extensions["qa"]
    only = MetadataFilter(year=(2026, 2025), keyword=("speech", "routing", "unlearning"))
    scope = services.corpora.scope(["conf"], only)
    part = scope.parts[0]
    lexical = part.index.load_lexical()
    mask = services.corpora.mask(part, only, lexical)
    assert set(lexical.chunks_of(mask)) == {f"{pid}#0" for pid in services.corpora.allowed(part, only)}
    for question in ("speech recognition on phones", "routing prompts between models", "forgetting facts"):
        ways = []
        # exact; the `ids` filter; over-fetched; over-fetched too few, so the `ids` filter after all
        for exact, broad, more in ((300, 2.0, 1.5), (0, 2.0, 1.5), (0, 0.01, 1.5), (0, 0.01, 0.01)):
            chosen = services.settings.replace(filter_exact_chunks=exact, filter_overfetch_share=broad, filter_overfetch=more)
            retriever = Retriever(chosen, services.corpora)
            ways.append([(cid, round(cos, 4)) for cid, cos in retriever._dense(part, question, 5, scope, lexical, mask)])
        ways.append([(cid, round(cos, 4)) for cid, cos in part.index.dense_ids(question, 5, where=only.where())])
        assert len(ways) == 5 and all(way == ways[0] for way in ways) and len(ways[0]) == 5, ways


def test_the_liveness_probe_counts_papers_from_the_manifests_without_touching_the_collections(two):
    """Chroma's first call on a collection costs ~0.3 s at 2,000 papers: /healthz counted each corpus's records, so
    start-up to the first probe grew by that per corpus. It reads each manifest's count now."""
    app = create_app(two)
    conf = app.extensions["qa"].corpora.open("conf")

    class Untouchable:
        def count(self):
            raise AssertionError("the probe touched the collection")

    view = conf.store.view()
    view.pair = view.pair._replace(papers=Untouchable())
    assert app.test_client().get("/healthz").get_json()["corpora"] == {"iclr2026": 19, "conf": 8}


def test_metrics_report_every_corpus(client):
    """Before, /metrics showed the default corpus only: a second corpus's papers and version were invisible."""
    body = client.get("/metrics").get_data(as_text=True)
    assert 'qa_index_papers{corpus="iclr2026"} 19.0' in body and 'qa_index_papers{corpus="conf"} 8.0' in body
    assert 'qa_index_info{corpus="conf",embedding_model="all-MiniLM-L6-v2-onnx-int8"' in body


def test_a_filters_vectors_are_read_once_and_the_cache_keeps_to_its_budget(client):
    """The exact search of a narrow filter reads its chunks' vectors from the store once per corpus version and
    filter, then searches them in memory; the cache drops the least recently used filter beyond its budget."""
    from qa_service.store.corpora import Corpora
    from qa_service.store.filters import MetadataFilter

    services = client.application.extensions["qa"]
    registry = Corpora(services.settings.replace(filter_vector_cache_chunks=5), services.index)
    filters = [MetadataFilter(year=(2026,)), MetadataFilter(year=(2025,))]
    scopes = [registry.scope(["conf"], only) for only in filters]
    part = scopes[0].parts[0]
    lexical = part.index.load_lexical()
    reads = []
    original = part.index.chunks.get
    part.index.chunks.get = lambda *a, **k: reads.append(k.get("ids")) or original(*a, **k)
    try:
        ids = lexical.chunks_of(registry.mask(part, filters[0], lexical))
        first = registry.vectors(part, filters[0], lexical, ids)
        assert registry.vectors(part, filters[0], lexical, ids) is first and len(reads) == 1  # read once
        assert sorted(first[0]) == sorted(ids) and abs(float((first[1] ** 2).sum(axis=1).max()) - 1.0) < 1e-5  # unit vectors
        other = lexical.chunks_of(registry.mask(part, filters[1], lexical))
        registry.vectors(part, filters[1], lexical, other)  # 4 + 4 chunks > a budget of 5: the older goes
        registry.vectors(part, filters[0], lexical, ids)
        assert len(reads) == 3
    finally:
        part.index.chunks.get = original
