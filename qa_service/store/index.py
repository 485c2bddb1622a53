"""The stored corpus as the rest of the service sees it: one facade over a Store (protocol.py).

Two collections: chunks (what we search) and papers (one record per abstract, written after its
chunks, so that a paper present in `papers` is complete: an interrupted ingest is resumed by
running it again). A manifest records the corpus version the BM25 side was built for, and a
ledger what the store should hold. Where they live, how a new version is written and who may
write are the store's: embedded.py (a data dir) or server.py (a Chroma server). The ingest
algorithm is ingest.py's, the same for both.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path
from typing import Any

from ..config import Settings
from ..corpus.chunking import chunk_text
from ..corpus.tokens import token_counter
from ..errors import NotFound, NotIndexed, StoreDamaged
from ..records import Chunk, IndexStats, LexicalLoad, Paper, StoredHashes, WriterStatus
from .chroma import Connection
from .collections import Pair, View, expected_chunk_ids, scan
from .embedded import EmbeddedStore
from .embeddings import embedding_function, embedding_model_id
from .ingest import Encoder, IngestHooks, IngestSummary, Progress, ingest
from .lexical import LexicalIndex, empty_lexical
from .manifest import Manifest
from .metadata import ChunkRecord, chunk_from_store
from .protocol import Notify, Store
from .sentences import SentenceVectors
from .server import ServerStore
from .versions import Versions

__all__ = ["PROBE", "Index", "IngestSummary", "Notify", "expected_chunk_ids"]

PROBE = "method"  # the readiness test query: any word; it must come back with a chunk


class Index:
    """The stored corpus: chunks with vectors, paper records, the manifest and BM25."""

    def __init__(self, settings: Settings, embedder: Any = None, connection: Connection | None = None):
        self.settings = settings
        self.embedder = embedder or embedding_function(settings)
        self.model_id = embedding_model_id(self.embedder)
        self.shared = bool(settings.chroma_url)  # a Chroma server: everything in Chroma (server.py)
        self.connection = connection or Connection(settings)
        self.listeners: list[Callable[[LexicalLoad], None]] = []  # told each time a BM25 index is made ready
        self._count = token_counter(settings.tokenizer_encoding)
        self._stats: IndexStats | None = None
        self._lexical_lock = threading.Lock()
        kind = ServerStore if self.shared else EmbeddedStore
        self.store: Store = kind(settings, self.connection, self.model_id, self._collection, self._build_lexical, self._loaded)

    def _collection(self, name: str, create: bool = True) -> Any:
        return self.connection.collection(name, self.embedder, self.model_id, create)

    # -- what is served ----------------------------------------------------------------
    @property
    def client(self) -> Any:
        return self.connection.client

    @property
    def locks(self) -> Any:
        return self.connection.locks

    @property
    def generation(self) -> str | None:
        """The store's generation this process last read (locking.py): a newer one means reopen."""
        return self.connection.generation

    @property
    def files(self) -> Any:
        return self.store.files

    @property
    def versions(self) -> Versions:
        """Server mode: the corpus versions on the Chroma server."""
        if not isinstance(self.store, ServerStore):
            raise AttributeError("an embedded store has no versions")
        return self.store.versions

    @property
    def bm25_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.bm25"

    def _view(self) -> View:
        return self.store.view()

    @property
    def chunks(self) -> Any:
        return self._view().chunks

    @property
    def papers(self) -> Any:
        return self._view().papers

    @property
    def pair(self) -> Pair:
        return self._view().pair

    @property
    def lexical(self) -> LexicalIndex:
        return self._view().lexical

    def pinned(self) -> AbstractContextManager[None]:
        """Around one request (server mode): it reads one version throughout, even when the process switches."""
        return self.store.pinned()

    def follow(self, generation: str | None) -> None:
        """Notice another process's writes: embedded, reopen the client (for every corpus sharing it); server,
        re-read the manifest every few seconds and ready a new version in the background."""
        self.connection.follow(generation)
        self.store.follow()

    # -- one writer ----------------------------------------------------------------------
    def writer(self, on_wait: Notify | None = None) -> AbstractContextManager[None]:
        """The store's one writer (ingest, check --repair) for the whole run; a second waits up to
        `writer_wait` seconds, then StoreBusy. Embedded: a flock in the data dir; server: a lease in Chroma."""
        return self.store.writer(on_wait)

    def try_writer(self) -> AbstractContextManager[bool]:
        return self.store.try_writer()

    def writer_status(self) -> WriterStatus:
        return self.store.writer_status()

    def writing(self) -> AbstractContextManager[None]:
        """Around changes to the store: readers are held off (embedded)."""
        return self.store.writing()

    # -- manifest and BM25 ---------------------------------------------------------------
    def manifest(self) -> Manifest:
        """The manifest as stored now (the empty manifest when it is missing or invalid)."""
        return self.store.files.read().data

    def current_manifest(self) -> Manifest:
        """The manifest of the corpus being served (re-read every few seconds). Never written here: a lost one
        is served as such until an ingest or `check --repair` writes it."""
        return self.store.served_manifest().data

    def load_lexical(self) -> LexicalIndex:
        """BM25 for the version served: loaded, or rebuilt from the store when missing, stale or damaged."""
        version = self.current_manifest().version
        view = self._view()
        if view.lexical.version == version and (view.lexical.chunk_ids or not version):
            return view.lexical
        with self._lexical_lock:
            if not (view.lexical.version == version and (view.lexical.chunk_ids or not version)):
                view.lexical = self.store.lexical(view, version) if version else empty_lexical()
        return view.lexical

    def _build_lexical(self, pair: Pair, version: str) -> LexicalIndex:
        return pair.build_lexical(version, self.settings.name_max_papers)

    def _loaded(self, load: LexicalLoad) -> None:
        for listener in self.listeners:
            listener(load)

    def saved_lexical(self) -> tuple[LexicalIndex | None, str]:
        """The BM25 index as saved for the served version, and where it is: what `check` verifies."""
        return self.store.saved_lexical()

    # -- ingest --------------------------------------------------------------------------
    def chunk(self, paper: Paper) -> list[Chunk]:
        return chunk_text(paper.id, paper.text, self._count, self.settings.chunk_sentences, self.settings.chunk_max_tokens)

    def embed_hash(self, paper: Paper) -> str:
        """What the stored vectors depend on: the text, the chunking and the model."""
        s = self.settings
        key = f"{self.model_id}|{s.chunk_sentences}|{s.chunk_max_tokens}|{s.tokenizer_encoding}|{paper.text}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

    @property
    def encoder(self) -> Encoder:
        """Chunks and their vectors; the chunks' sentences' vectors from the same pass are kept for answers."""
        return Encoder(self.chunk, lambda texts: self.sentences.embed_chunks(self.embedder, texts), self.embed_hash)

    @cached_property
    def sentences(self) -> SentenceVectors:
        """This corpus's sentence vectors (store/sentences.py), a file beside its BM25 index."""
        return SentenceVectors(self.settings.data_path / f"{self.settings.collection}.sentences.npz", self.settings.sentence_vectors)

    def ingest(self, papers: Sequence[Paper], sync: bool = False, progress: Progress | None = None,
               on_wait: Notify | None = None, hooks: IngestHooks | None = None, rebuild: bool = False) -> IngestSummary:
        """Bring the store to hold `papers` (ingest.py); one writer at a time: a second waits, then StoreBusy.
        `rebuild`: every paper embedded anew, into collections made anew (a vector index that lost its files)."""
        with self.writer(on_wait):
            summary = ingest(self.store, papers, self.encoder, self.settings.ingest_batch_papers, sync, progress, hooks, rebuild)
            self.sentences.keep_roles(p.text for p in papers)  # each abstract's sentence roles, unless the file has them
            self.sentences.save()  # the sentence vectors the chunk pass gave, and the roles, beside BM25
        self._stats = None
        return summary

    def write_papers(self, papers: Sequence[Paper], held: dict[str, set[str]]) -> dict[str, int]:
        """Embed and write papers into the version served, in place (check --repair). Returns each one's chunk count."""
        chunks, vectors = self.encoder.encode(papers)
        self.pair.put(papers, chunks, vectors, [self.embed_hash(p) for p in papers], held)
        return {p.id: len(c) for p, c in zip(papers, chunks)}

    def finish_write(self, ledger: dict[str, StoredHashes]) -> None:
        """A new ready version of what the store holds now (check --repair)."""
        self.store.commit(ledger)
        self._stats = None

    def stored_hashes(self) -> dict[str, StoredHashes]:
        return self.pair.stored_hashes()

    def chunk_ids_by_paper(self) -> dict[str, set[str]]:
        return self.pair.chunk_ids_by_paper()

    def scan(self, collection: Any, include: list[str]) -> Any:
        return scan(collection, include)

    def local_embed(self) -> Callable[[list[str]], Any] | None:
        """The embedding function when it runs in-process (cheap per answer); None for a paid API."""
        return self.embedder if getattr(self.embedder, "local", False) else None

    # -- reading -------------------------------------------------------------------------
    def stats(self) -> IndexStats:
        """Counts and build date, computed once per corpus version."""
        manifest = self.current_manifest()
        stats = self._stats
        if stats is None or stats.version != (manifest.version or None):
            view = self._view()
            stats = self._stats = IndexStats(papers=view.papers.count(), chunks=view.chunks.count(), built_at=manifest.built_at,
                                             embedding_model=self.model_id, version=manifest.version or None,
                                             generation=manifest.generation)
        return stats

    def interrupted(self) -> bool:
        """An ingest was stopped midway and not run again (never so with a Chroma server)."""
        return self.store.interrupted()

    def paper_count(self) -> int:
        """Papers served, without a first touch of the store when the count is not known yet (Chroma's first call on a
        collection costs ~0.3 s; a liveness probe must not wait): the store's count once known, else the manifest's."""
        stats, counted = self._stats, self.store.paper_count()
        if stats is not None and stats.version == (self.current_manifest().version or None):
            return stats.papers
        return counted if counted is not None else self.papers.count()

    def require_ready(self) -> None:
        if self.stats().papers == 0:
            raise NotIndexed("the index is empty: run `qa-service ingest` (or `make run`) first")

    def get_papers(self, ids: Sequence[str], with_text: bool = True) -> dict[str, Paper]:
        """Papers by id; without text (metadata only, text and abstract empty) when only labels are needed."""
        return self.pair.get_papers(ids, with_text)

    def get_paper(self, paper_id: str) -> Paper:
        paper = self.get_papers([paper_id]).get(paper_id)
        if paper is None:
            raise NotFound(f"no paper with id {paper_id!r}")
        return paper

    def list_papers(self, with_text: bool = False) -> list[Paper]:
        """Every paper in natural id order; metadata only unless the text is searched too."""
        return sorted(self.pair.list_papers(with_text), key=lambda p: _natural_key(p.id))

    def get_chunks(self, ids: Sequence[str]) -> dict[str, ChunkRecord]:
        return self.pair.get_chunks(ids)

    def dense_chunks(self, question: str, n: int) -> list[tuple[str, float, ChunkRecord]]:
        """(chunk id, cosine similarity, chunk record), best first, each record checked to be in the store
        (the readiness probe; retrieval uses dense_ids and reads only the evidence it shows)."""
        found = self._query(question, n, ["documents", "metadatas", "distances"], None, None)
        if found is None:
            return []
        rows = []
        for cid, doc, meta, dist in zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0]):
            record = chunk_from_store(cid, doc, meta)
            if record is None:  # the vector index names chunks the store no longer holds
                raise StoreDamaged(f"the vector index in {self.store.where} returns chunks the store does not hold ({cid}): "
                                   f"run `qa-service check --repair`")
            rows.append((cid, 1.0 - float(dist), record))
        return rows

    def dense_ids(self, question: str, n: int, where: dict[str, Any] | None = None,
                  ids: list[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity), best first; `where` (filters.py) or `ids` restricts the search itself.
        Without the records: Chroma's query took 9.0 ms for 80 chunks with their text and metadata and 2.1 ms
        without (20,000 papers); retrieval reads the few it shows."""
        found = self._query(question, n, ["distances"], where, ids)
        return [] if found is None else [(cid, 1.0 - float(dist)) for cid, dist in zip(found["ids"][0], found["distances"][0])]

    def _query(self, question: str, n: int, include: list[str], where: dict[str, Any] | None, ids: list[str] | None) -> Any:
        total = self.stats().chunks
        if total == 0:
            return None
        return self.pair.query(self.embedder.embed_query([question])[0], min(n, total), include, where, ids)

    def readiness(self) -> IndexStats:
        """What serving needs, each checked: the store opens and holds papers, BM25 matches the corpus
        version (rebuilt first when it can be), and a test query returns. Raises naming the damaged part."""
        self.require_ready()
        lexical = self.load_lexical()
        stats = self.stats()
        if lexical.version != stats.version or len(lexical.chunk_ids) != stats.chunks:
            raise StoreDamaged(
                f"the lexical index (BM25, {self.bm25_path}) does not match the corpus version {stats.version} "
                f"({len(lexical.chunk_ids)} chunks, the store {stats.chunks}): run `qa-service check --repair`"
            )
        if not self.dense_chunks(PROBE, 1):
            raise StoreDamaged(f"a test query on the vector store in {self.store.where} returned nothing: run `qa-service check --repair`")
        lexical.search(PROBE, 1)
        return stats


def _natural_key(pid: str) -> tuple[str, int]:
    head, _, tail = pid.rpartition(":")
    return (head, int(tail)) if tail.isdigit() else (pid, 0)
