"""ChromaDB: open (embedded path or server URL), ingest by stable ids, query, stats.

Two collections: chunks (what we search) and papers (one record per abstract, written
after its chunks, so that a paper present in `papers` is complete: an interrupted
ingest is resumed by running it again). A manifest beside the data records the corpus
version the BM25 side was built for.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence
from urllib.parse import urlparse

import chromadb
import numpy as np
from chromadb.config import Settings as ChromaSettings

from .chunking import chunk_text
from .config import Settings
from .embeddings import embedding_function, embedding_model_id
from .errors import EmbeddingMismatch, NotFound, NotIndexed
from .lexical import LexicalIndex, empty_lexical
from .names import build_name_book, lowercase_words, paper_names
from .records import Chunk, Paper, StoredHashes, chunk_id
from .tokens import token_counter

Progress = Callable[[int], None]
MANIFEST_TTL = 2.0


@dataclass
class IngestSummary:
    papers: int
    added: int
    updated: int
    unchanged: int
    removed: int
    chunks: int
    seconds: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def open_client(settings: Settings) -> Any:
    """PersistentClient in data_dir, or HttpClient when a Chroma server URL is set."""
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    path = settings.data_path / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


class Index:
    """The stored corpus: chunks with vectors, paper records, the manifest and BM25."""

    def __init__(self, settings: Settings, embedder: Any = None, client: Any = None):
        self.settings = settings
        self.embedder = embedder or embedding_function(settings)
        self.model_id = embedding_model_id(self.embedder)
        self.client = client or open_client(settings)
        self.chunks = self._collection("chunks")
        self.papers = self._collection("papers")
        self._count = token_counter(settings.tokenizer_encoding)
        self.lexical = empty_lexical()
        self._manifest_cache: dict | None = None
        self._manifest_read_at = 0.0
        self._stats: dict | None = None

    # -- opening ---------------------------------------------------------------
    def _collection(self, kind: str) -> Any:
        name = f"{self.settings.collection}_{kind}"
        try:
            collection = self.client.get_or_create_collection(
                name,
                embedding_function=self.embedder,
                metadata={"embedding_model": self.model_id},
                configuration={"hnsw": {"space": "cosine"}},
            )
        except ValueError as exc:
            raise EmbeddingMismatch(
                f"collection {name!r} was built with another embedding function ({exc}); "
                f"re-ingest into a new data dir or collection"
            ) from exc
        stored = (collection.metadata or {}).get("embedding_model")
        if stored and stored != self.model_id:
            raise EmbeddingMismatch(
                f"the index in {self.settings.data_dir} was built with {stored}, but {self.model_id} is "
                f"configured: re-ingest (qa-service ingest) into an empty data dir, or configure {stored}"
            )
        return collection

    # -- manifest and BM25 -------------------------------------------------------
    @property
    def _manifest_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.manifest.json"

    @property
    def _bm25_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.bm25"

    def manifest(self) -> dict:
        """The manifest as on disk now."""
        try:
            return json.loads(self._manifest_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def current_manifest(self) -> dict:
        """The manifest, re-read at most every MANIFEST_TTL seconds: no file I/O on most requests,
        yet another process's ingest is noticed within seconds."""
        now = time.monotonic()
        if self._manifest_cache is None or now - self._manifest_read_at > MANIFEST_TTL:
            self._manifest_cache = self.manifest()
            self._manifest_read_at = now
        return self._manifest_cache

    def _write_manifest(self, data: dict) -> None:
        self._manifest_path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self._manifest_path.parent, prefix=".manifest-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, self._manifest_path)
        self._manifest_cache, self._manifest_read_at, self._stats = data, time.monotonic(), None

    def load_lexical(self) -> LexicalIndex:
        """Load BM25 for the current corpus version; rebuild it only when it is stale."""
        manifest = self.current_manifest()
        version = manifest.get("version", "")
        if self.lexical.version == version and (self.lexical.chunk_ids or not version):
            return self.lexical
        loaded = LexicalIndex.load(self._bm25_path) if self._bm25_path.exists() else None
        if loaded is None or loaded.version != version or manifest.get("state") != "ready":
            loaded = self._build_lexical(version)
        self.lexical = loaded
        return loaded

    def _build_lexical(self, version: str) -> LexicalIndex:
        ids, texts, pids = [], [], []
        for batch in self._scan(self.chunks, include=["documents", "metadatas"]):
            for cid, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"]):
                ids.append(cid)
                texts.append(doc)
                pids.append(meta["paper_id"])
        labels = {pid: meta.get("label", pid) for batch in self._scan(self.papers, include=["metadatas"])
                  for pid, meta in zip(batch["ids"], batch["metadatas"])}
        texts_by_paper: dict[str, list[str]] = {}
        for pid, text in zip(pids, texts):
            texts_by_paper.setdefault(pid, []).append(text)
        names = build_name_book(
            {pid: paper_names(labels.get(pid, ""), chunks) for pid, chunks in texts_by_paper.items()},
            self.settings.name_max_papers,
            lowercase_words(texts),
        )
        lexical = LexicalIndex.build(ids, texts, pids, version, labels, names) if ids else empty_lexical(version)
        if ids:
            lexical.save(self._bm25_path)
        return lexical

    def _scan(self, collection: Any, include: list[str], page: int = 2000) -> Iterable[dict]:
        offset = 0
        while True:
            batch = collection.get(limit=page, offset=offset, include=include)
            if not batch["ids"]:
                return
            yield batch
            offset += len(batch["ids"])

    # -- ingest ----------------------------------------------------------------
    def chunk(self, paper: Paper) -> list[Chunk]:
        return chunk_text(paper.id, paper.text, self._count, self.settings.chunk_sentences, self.settings.chunk_max_tokens)

    def ingest(self, papers: Sequence[Paper], sync: bool = False, progress: Progress | None = None) -> IngestSummary:
        """Upsert changed papers (chunks first, paper record last); unchanged ones are skipped."""
        started = time.perf_counter()
        existing = self._existing_hashes()
        todo = [p for p in papers if existing.get(p.id, StoredHashes()).embed_hash != self.embed_hash(p)]
        embedding = {p.id for p in todo}
        relabel = [p for p in papers if p.id not in embedding and existing[p.id].content_hash != p.content_hash]
        wanted = {p.id for p in papers}
        stale = [pid for pid in existing if pid not in wanted] if sync else []
        changed = bool(todo or stale or relabel)
        manifest = self.manifest()
        if changed:
            manifest = {**manifest, "state": "ingesting", "version": uuid.uuid4().hex[:12]}
            self._write_manifest(manifest)
        chunk_count = 0
        batch_size = max(1, self.settings.ingest_batch_papers)
        for begin in range(0, len(todo), batch_size):
            batch = todo[begin : begin + batch_size]
            chunk_count += self._write_papers(batch, existing)
            if progress:
                progress(len(batch))
        if progress and len(papers) > len(todo):
            progress(len(papers) - len(todo))
        for begin in range(0, len(relabel), 1000):  # metadata only (a title, a label): nothing re-embedded
            batch = relabel[begin : begin + 1000]
            self.papers.update(ids=[p.id for p in batch], metadatas=[self._paper_metadata(p, existing[p.id].n_chunks) for p in batch])
        for pid in stale:
            self._delete_paper(pid, existing[pid].n_chunks)
        if changed or manifest.get("state") != "ready":
            manifest.update(
                state="ready",
                version=uuid.uuid4().hex[:12],  # a new version: readers drop what they built mid-ingest
                built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                embedding_model=self.model_id,
                papers=self.papers.count(),
                chunks=self.chunks.count(),
            )
            self._write_manifest(manifest)
            self.lexical = self._build_lexical(manifest["version"])
        added = sum(1 for p in todo if p.id not in existing)
        updated = len(todo) - added + len(relabel)
        return IngestSummary(
            papers=len(papers), added=added, updated=updated, unchanged=len(papers) - added - updated,
            removed=len(stale), chunks=chunk_count, seconds=round(time.perf_counter() - started, 2),
        )

    def embed_hash(self, paper: Paper) -> str:
        """What the stored vectors depend on: the text, the chunking and the model."""
        s = self.settings
        key = f"{self.model_id}|{s.chunk_sentences}|{s.chunk_max_tokens}|{s.tokenizer_encoding}|{paper.text}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

    def _existing_hashes(self) -> dict[str, StoredHashes]:
        """What the store holds per paper id."""
        found: dict[str, StoredHashes] = {}
        for batch in self._scan(self.papers, include=["metadatas"]):
            for pid, meta in zip(batch["ids"], batch["metadatas"]):
                found[pid] = StoredHashes(meta.get("content_hash", ""), meta.get("embed_hash", ""), int(meta.get("n_chunks", 0)))
        return found

    def _write_papers(self, papers: Sequence[Paper], existing: dict[str, StoredHashes]) -> int:
        chunks_by_paper = [self.chunk(p) for p in papers]
        flat = [c for chunks in chunks_by_paper for c in chunks]
        vectors = np.asarray(self.embedder([c.text for c in flat]), dtype=np.float32)
        for paper, chunks in zip(papers, chunks_by_paper):  # drop chunks an edit made obsolete
            old = existing.get(paper.id, StoredHashes()).n_chunks
            if old > len(chunks):
                self.chunks.delete(ids=[chunk_id(paper.id, i) for i in range(len(chunks), old)])
        self.chunks.upsert(
            ids=[c.id for c in flat],
            embeddings=vectors,
            documents=[c.text for c in flat],
            metadatas=[{"paper_id": c.paper_id, "position": c.position, "start": c.start, "end": c.end} for c in flat],
        )
        paper_vectors, offset = [], 0
        for chunks in chunks_by_paper:
            mean = vectors[offset : offset + len(chunks)].mean(axis=0)
            paper_vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            offset += len(chunks)
        self.papers.upsert(
            ids=[p.id for p in papers],
            embeddings=np.asarray(paper_vectors),
            documents=[p.text for p in papers],
            metadatas=[self._paper_metadata(p, len(c)) for p, c in zip(papers, chunks_by_paper)],
        )
        return len(flat)

    def _paper_metadata(self, paper: Paper, n_chunks: int) -> dict:
        return {
            "label": paper.label, "title": paper.title, "source": paper.source, "abstract": paper.abstract,
            "authors": json.dumps(paper.authors), "keywords": json.dumps(paper.keywords), "year": paper.year or 0,
            "venue": paper.venue, "url": paper.url, "content_hash": paper.content_hash,
            "embed_hash": self.embed_hash(paper), "n_chunks": n_chunks,
        }

    def _delete_paper(self, paper_id: str, n_chunks: int) -> None:
        self.chunks.delete(ids=[chunk_id(paper_id, i) for i in range(n_chunks)])
        self.papers.delete(ids=[paper_id])

    def local_embed(self) -> Callable[[list[str]], Any] | None:
        """The embedding function when it runs in-process (cheap per answer); None for a paid API."""
        return self.embedder if getattr(self.embedder, "local", False) else None

    # -- reading -----------------------------------------------------------------
    def stats(self) -> dict:
        """Counts and build date, computed once per corpus version."""
        manifest = self.current_manifest()
        if self._stats is None or self._stats["version"] != manifest.get("version"):
            self._stats = {
                "papers": self.papers.count(),
                "chunks": self.chunks.count(),
                "built_at": manifest.get("built_at"),
                "embedding_model": self.model_id,
                "version": manifest.get("version"),
            }
        return self._stats

    def require_ready(self) -> None:
        if self.stats()["papers"] == 0:
            raise NotIndexed("the index is empty: run `qa-service ingest` (or `make run`) first")

    def get_papers(self, ids: Sequence[str], with_text: bool = True) -> dict[str, Paper]:
        """Papers by id; without text (metadata only, text and abstract empty) when only labels are needed."""
        if not ids:
            return {}
        found = self.papers.get(ids=list(ids), include=["documents", "metadatas"] if with_text else ["metadatas"])
        docs = found["documents"] if with_text else [None] * len(found["ids"])
        return {pid: _paper_from_store(pid, doc, meta) for pid, doc, meta in zip(found["ids"], docs, found["metadatas"])}

    def get_paper(self, paper_id: str) -> Paper:
        paper = self.get_papers([paper_id]).get(paper_id)
        if paper is None:
            raise NotFound(f"no paper with id {paper_id!r}")
        return paper

    def list_papers(self, with_text: bool = False) -> list[Paper]:
        """Every paper in natural id order; metadata only unless the text is searched too."""
        papers = []
        include = ["documents", "metadatas"] if with_text else ["metadatas"]
        for batch in self._scan(self.papers, include=include):
            docs = batch["documents"] if with_text else [None] * len(batch["ids"])
            papers.extend(_paper_from_store(pid, doc, meta) for pid, doc, meta in zip(batch["ids"], docs, batch["metadatas"]))
        return sorted(papers, key=lambda p: _natural_key(p.id))

    def get_chunks(self, ids: Sequence[str]) -> dict[str, dict]:
        if not ids:
            return {}
        found = self.chunks.get(ids=list(ids), include=["documents", "metadatas"])
        return {cid: {"text": doc, **meta} for cid, doc, meta in zip(found["ids"], found["documents"], found["metadatas"])}

    def dense_chunks(self, question: str, n: int) -> list[tuple[str, float, dict]]:
        """(chunk id, cosine similarity, chunk record), best first."""
        total = self.stats()["chunks"]
        if total == 0:
            return []
        vector = self.embedder.embed_query([question])[0]
        found = self.chunks.query(
            query_embeddings=[vector], n_results=min(n, total), include=["documents", "metadatas", "distances"]
        )
        return [
            (cid, 1.0 - float(dist), {"text": doc, **meta})
            for cid, doc, meta, dist in zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0])
        ]




def _paper_from_store(pid: str, text: str | None, meta: dict) -> Paper:
    return Paper(
        id=pid, abstract=meta.get("abstract", text) if text is not None else "", text=text or "",
        title=meta.get("title", ""), label=meta.get("label", pid), source=meta.get("source", ""),
        authors=json.loads(meta.get("authors") or "[]"), year=meta.get("year") or None, venue=meta.get("venue", ""),
        url=meta.get("url", ""), keywords=json.loads(meta.get("keywords") or "[]"),
    )


def _natural_key(pid: str) -> tuple:
    head, _, tail = pid.rpartition(":")
    return (head, int(tail)) if tail.isdigit() else (pid, 0)
