import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from qa_service.corpus.reading import load_corpus
from qa_service.store.embeddings import MiniLMEmbedding
from qa_service.errors import EmbeddingMismatch, NotFound, NotIndexed
from qa_service.store.index import Index
from tests.conftest import write_seed_file

ABSTRACTS = [
    "We introduce RouterArena, an open platform to compare LLM routers. It has a leaderboard.",
    "We propose **Tequila**, a ternary quantization method. It reaches a $3.0\\times$ speedup. Weights are trapped.",
    "Neural ODEs model EEG dynamics in continuous time. We propose ODEBrain. It forecasts brain states.",
]


def chunk_snapshot(index: Index) -> dict:
    got = index.chunks.get(include=["documents", "embeddings"])
    return {cid: (doc, tuple(round(float(x), 6) for x in emb[:8])) for cid, doc, emb in zip(got["ids"], got["documents"], got["embeddings"])}


def test_ingest_twice_changes_nothing(settings, tmp_path):
    papers = load_corpus([write_seed_file(tmp_path / "s.txt", ABSTRACTS)])
    index = Index(settings)
    first = index.ingest(papers)
    assert (first.added, first.chunks) == (3, index.chunks.count())
    before, version = chunk_snapshot(index), index.manifest().version
    second = index.ingest(papers)
    assert (second.added, second.updated, second.unchanged, second.chunks) == (0, 0, 3, 0)
    assert chunk_snapshot(index) == before
    assert index.manifest().version == version  # nothing changed, BM25 not rebuilt


def test_edited_abstract_replaces_only_its_chunks(settings, tmp_path):
    path = write_seed_file(tmp_path / "s.txt", ABSTRACTS)
    index = Index(settings)
    index.ingest(load_corpus([path]))
    before = chunk_snapshot(index)
    write_seed_file(path, [ABSTRACTS[0], "We propose Tequila, a ternary method.", ABSTRACTS[2]])
    summary = index.ingest(load_corpus([path]))
    after = chunk_snapshot(index)
    assert (summary.updated, summary.unchanged) == (1, 2)
    assert {k: v for k, v in after.items() if not k.startswith("s:2#")} == {k: v for k, v in before.items() if not k.startswith("s:2#")}
    assert [k for k in after if k.startswith("s:2#")] == ["s:2#0"]  # the stale second chunk is gone
    assert after["s:2#0"][0] == "We propose Tequila, a ternary method."
    assert index.get_paper("s:2").text == "We propose Tequila, a ternary method."


def test_sync_removes_papers_no_longer_present(settings, tmp_path):
    path = write_seed_file(tmp_path / "s.txt", ABSTRACTS)
    index = Index(settings)
    index.ingest(load_corpus([path]))
    write_seed_file(path, ABSTRACTS[:2])
    kept = index.ingest(load_corpus([path]))
    assert kept.removed == 0 and index.papers.count() == 3
    synced = index.ingest(load_corpus([path]), sync=True)
    assert synced.removed == 1 and index.papers.count() == 2
    assert not [c for c in index.chunks.get()["ids"] if c.startswith("s:3#")]
    with pytest.raises(NotFound):
        index.get_paper("s:3")


def test_interrupted_ingest_resumes_without_duplicates(settings, tmp_path):
    settings = settings.replace(ingest_batch_papers=4)
    abstracts = [f"Paper {i} studies topic {i}. It proposes Method{i}. Results improve." for i in range(10)]
    papers = load_corpus([write_seed_file(tmp_path / "s.txt", abstracts)])
    index = Index(settings)

    def crash_after_first_batch(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        index.ingest(papers, progress=crash_after_first_batch)
    assert index.papers.count() == 4 and index.manifest().state == "ingesting"
    resumed = Index(settings).ingest(papers)
    assert (resumed.added, resumed.unchanged) == (6, 4)
    again = Index(settings)
    assert again.papers.count() == 10 and again.chunks.count() == 10 * len(index.chunk(papers[0]))
    assert again.manifest().state == "ready"
    assert len(again.load_lexical().chunk_ids) == again.chunks.count()


def test_reopened_store_uses_our_embedding_function(seed_settings):
    client = chromadb.PersistentClient(str(seed_settings.data_path / "chroma"), settings=ChromaSettings(anonymized_telemetry=False))
    collection = client.get_collection(f"{seed_settings.collection}_chunks")  # no embedding function passed
    assert isinstance(collection.configuration["embedding_function"], MiniLMEmbedding)
    assert collection.metadata["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    found = collection.query(query_texts=["ternary weight quantization"], n_results=1)  # offline: the guard is on
    assert found["metadatas"][0][0]["paper_id"] == "000_e3b5a0511f204a83:11"


def test_another_embedding_model_is_refused(settings, tmp_path):
    Index(settings).ingest(load_corpus([write_seed_file(tmp_path / "s.txt", ABSTRACTS)]))

    class OtherModel(MiniLMEmbedding):
        @property
        def model_id(self) -> str:
            return "some-other-model"

    with pytest.raises(EmbeddingMismatch, match="re-ingest"):
        Index(settings, embedder=OtherModel())


def test_empty_index_is_not_ready(settings):
    index = Index(settings)
    with pytest.raises(NotIndexed, match="qa-service ingest"):
        index.require_ready()
    assert index.dense_chunks("anything", 5) == [] and index.load_lexical().search("anything", 5) == []


def test_bm25_is_loaded_from_disk_not_rebuilt(seed_settings, seed_index):
    fresh = Index(seed_settings)
    lexical = fresh.load_lexical()
    assert lexical.version == seed_index.manifest().version
    assert lexical.chunk_ids == seed_index.lexical.chunk_ids
    assert (seed_settings.data_path / f"{seed_settings.collection}.bm25" / "qa_meta.json").is_file()


def test_stats_and_listing(seed_index):
    stats = seed_index.stats()
    assert stats.papers == 57 and stats.chunks > 57 and stats.built_at
    listing = seed_index.list_papers()
    assert [r.id for r in listing[:2]] == ["000_e3b5a0511f204a83:1", "000_e3b5a0511f204a83:2"]
    assert listing[1].label == "RouterArena"


def test_moving_or_relabelling_a_paper_re_embeds_nothing(settings, tmp_path):
    path = write_seed_file(tmp_path / "s.txt", ABSTRACTS)
    index = Index(settings)
    index.ingest(load_corpus([path]))
    before = chunk_snapshot(index)
    moved = tmp_path / "other"
    moved.mkdir()
    copy = write_seed_file(moved / "s.txt", ABSTRACTS)  # same ids and texts, another file
    assert index.ingest(load_corpus([copy])).chunks == 0
    papers = load_corpus([path])
    papers[0].title = "RouterArena: An Open Platform"  # metadata only
    papers[0].label = papers[0].title
    summary = index.ingest(papers)
    assert (summary.updated, summary.chunks) == (1, 0)
    assert index.get_paper("s:1").label == "RouterArena: An Open Platform"
    assert chunk_snapshot(index) == before


def test_ingest_re_embeds_an_unchanged_paper_whose_chunks_are_missing_or_extra(settings, tmp_path):
    """A matching hash is trusted only once the store shows the paper whole."""
    papers = load_corpus([write_seed_file(tmp_path / "s.txt", ABSTRACTS)])
    index = Index(settings)
    index.ingest(papers)
    before = chunk_snapshot(index)
    index.chunks.delete(ids=["s:2#0"])
    index.chunks.upsert(ids=["s:3#7"], documents=["A stray chunk."], metadatas=[{"paper_id": "s:3", "position": 7, "start": 0, "end": 14}])
    summary = Index(settings).ingest(papers)
    assert (summary.repaired, summary.unchanged, summary.updated) == (2, 1, 2)
    assert chunk_snapshot(index) == before
