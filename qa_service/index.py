"""ChromaDB: open (embedded path or server URL), ingest by stable ids, query, stats.

Two collections: chunks (what we search) and papers (one record per abstract, written
after its chunks, so that a paper present in `papers` is complete: an interrupted
ingest is resumed by running it again). A manifest beside the data records the corpus
version the BM25 side was built for, and a ledger what the store should hold.
One writer at a time (locking.py); a reader reopens the store after another process wrote it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
import uuid
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .chunking import chunk_text
from .config import Settings
from .embeddings import embedding_function, embedding_model_id
from .errors import EmbeddingMismatch, NotFound, NotIndexed, QAError, StoreBusy, StoreDamaged
from .lexical import LexicalIndex, empty_lexical
from .locking import StoreLocks
from .manifest import ManifestFiles, ManifestRead
from .names import build_name_book, lowercase_words, paper_names
from .records import Chunk, Paper, StoredHashes, chunk_id, paper_of
from .store import GuardedCollection, close_client, open_client, store_error
from .tokens import token_counter

log = logging.getLogger(__name__)

Progress = Callable[[int], None]
Notify = Callable[[str], None]
MANIFEST_TTL = 2.0
PROBE = "method"  # the readiness test query: any word; it must come back with a chunk


@dataclass
class IngestSummary:
    papers: int
    added: int
    updated: int
    unchanged: int
    removed: int
    chunks: int
    seconds: float
    repaired: int = 0  # unchanged papers re-embedded because their chunks in the store were missing or extra

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class Index:
    """The stored corpus: chunks with vectors, paper records, the manifest and BM25."""

    def __init__(self, settings: Settings, embedder: Any = None, client: Any = None):
        self.settings = settings
        self.embedder = embedder or embedding_function(settings)
        self.model_id = embedding_model_id(self.embedder)
        self.locks = StoreLocks(settings.data_path, readers=not settings.chroma_url)
        self.files = ManifestFiles(settings.data_path, settings.collection)
        self._generation = self.locks.generation()  # read before opening: a write after it is noticed
        self._reopen_lock = threading.Lock()
        self._repair_lock = threading.Lock()
        self._open(client)
        self._count = token_counter(settings.tokenizer_encoding)
        self.lexical = empty_lexical()
        self._manifest_cache: ManifestRead | None = None
        self._manifest_read_at = 0.0
        self._stats: dict | None = None

    # -- opening ---------------------------------------------------------------
    def _open(self, client: Any = None) -> None:
        self.client = client or open_client(self.settings)
        self.chunks = self._collection("chunks")
        self.papers = self._collection("papers")

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
        except BaseException as exc:  # noqa: BLE001 - damaged files fail here too, some as a Rust panic
            if isinstance(exc, (KeyboardInterrupt, SystemExit, QAError)):
                raise
            raise store_error(self.settings, exc) from exc
        stored = (collection.metadata or {}).get("embedding_model")
        if stored and stored != self.model_id:
            raise EmbeddingMismatch(
                f"the index in {self.settings.data_dir} was built with {stored}, but {self.model_id} is "
                f"configured: re-ingest (qa-service ingest) into an empty data dir, or configure {stored}"
            )
        return GuardedCollection(collection, self.settings)

    def follow(self, generation: str | None) -> None:
        """Reopen the store when another process wrote it since we opened it: Chroma's local
        client keeps the vector index in memory and would go on answering from the old one."""
        if generation is None or generation == self._generation:
            return
        with self._reopen_lock:
            if generation == self._generation:
                return
            close_client(self.client)
            self._open()  # on failure the generation stays old: the next request tries again
            self._generation = generation
            self._manifest_cache, self._stats = None, None

    @contextmanager
    def writer(self, on_wait: Notify | None = None) -> Iterator[None]:
        """The data dir's one writer (ingest, check --repair) for the whole run; a second waits up to
        `writer_wait` seconds, then StoreBusy."""
        with self.locks.writer(self.settings.writer_wait, on_wait):
            self.follow(self.locks.generation())  # someone may have written while we waited
            yield

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around changes to the store: readers are held off, and reopen it afterwards."""
        with self.locks.writing():
            yield
        self._generation = self.locks.generation()  # our own client saw every change

    # -- manifest and BM25 -------------------------------------------------------
    @property
    def bm25_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.bm25"

    def manifest(self) -> dict:
        """The manifest as on disk now ({} when it is missing or invalid)."""
        return self.files.read().data

    def _manifest_now(self) -> ManifestRead:
        """The manifest, re-read at most every MANIFEST_TTL seconds: no file I/O on most requests,
        yet another process's ingest is noticed within seconds."""
        now = time.monotonic()
        if self._manifest_cache is None or now - self._manifest_read_at > MANIFEST_TTL:
            self._manifest_cache = self.files.read()
            self._manifest_read_at = now
        return self._manifest_cache

    def current_manifest(self) -> dict:
        """The manifest of the corpus being served; a lost or invalid one is rebuilt from the store."""
        found = self._manifest_now()
        if not found.problem:
            return found.data
        with self._repair_lock:
            found = self.files.read()
            if found.problem and self.papers.count():
                found = ManifestRead(self._rebuild_manifest(found.problem))
            self._manifest_cache, self._manifest_read_at = found, time.monotonic()
        return found.data

    def _rebuild_manifest(self, problem: str) -> dict:
        """The store is the truth and the manifest only describes it: write a new one (as a writer)."""
        with self.locks.try_writer() as mine:
            if not mine:
                raise StoreBusy(
                    f"{problem} and cannot be rebuilt now (another writer holds {self.settings.data_dir}, or it is "
                    f"read-only): retry when the writer ends, or run `qa-service check --repair`"
                )
            log.warning("%s: rebuilt from the store", problem)
            manifest = self._ready_manifest({})
            self._write_manifest(manifest)
            return manifest

    def _ready_manifest(self, manifest: dict) -> dict:
        return {
            **manifest,
            "state": "ready",
            "version": uuid.uuid4().hex[:12],  # a new version: readers drop what they built mid-ingest
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "embedding_model": self.model_id,
            "papers": self.papers.count(),
            "chunks": self.chunks.count(),
        }

    def _write_manifest(self, data: dict) -> None:
        self.files.write(data)
        self._manifest_cache, self._manifest_read_at, self._stats = ManifestRead(data), time.monotonic(), None

    def load_lexical(self) -> LexicalIndex:
        """BM25 for the current corpus version: loaded from disk, or rebuilt from the store when the
        files are missing, stale or damaged (they are a cache of the store)."""
        manifest = self.current_manifest()
        version = manifest.get("version", "")
        if self.lexical.version == version and (self.lexical.chunk_ids or not version):
            return self.lexical
        with self._repair_lock:
            if self.lexical.version == version and (self.lexical.chunk_ids or not version):
                return self.lexical
            loaded = LexicalIndex.load(self.bm25_path) if self.bm25_path.exists() else None
            if loaded is None or loaded.version != version or manifest.get("state") != "ready":
                if manifest.get("state") == "ready" and self.bm25_path.exists():
                    log.warning("the BM25 files in %s are damaged or stale: rebuilt from the store", self.bm25_path)
                loaded = self.rebuild_lexical(version)
            self.lexical = loaded
        return loaded

    def rebuild_lexical(self, version: str) -> LexicalIndex:
        """BM25 over the chunks as stored; saved when no other writer holds the data dir."""
        lexical = self._build_lexical(version)
        if lexical.chunk_ids:
            with self.locks.try_writer() as mine:
                if mine:
                    lexical.save(self.bm25_path)
        return lexical

    def _build_lexical(self, version: str) -> LexicalIndex:
        ids, texts, pids = [], [], []
        for batch in self.scan(self.chunks, include=["documents", "metadatas"]):
            for cid, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"]):
                ids.append(cid)
                texts.append(doc)
                pids.append(meta["paper_id"])
        labels, authors = {}, {}
        for batch in self.scan(self.papers, include=["metadatas"]):
            for pid, meta in zip(batch["ids"], batch["metadatas"]):
                labels[pid] = meta.get("label", pid)
                if meta.get("authors") not in (None, "", "[]"):
                    authors[pid] = json.loads(meta["authors"])
        texts_by_paper: dict[str, list[str]] = {}
        for pid, text in zip(pids, texts):
            texts_by_paper.setdefault(pid, []).append(text)
        names = build_name_book(
            {pid: paper_names(labels.get(pid, ""), chunks) for pid, chunks in texts_by_paper.items()},
            self.settings.name_max_papers,
            lowercase_words(texts),
        )
        return LexicalIndex.build(ids, texts, pids, version, labels, names, authors) if ids else empty_lexical(version)

    def scan(self, collection: Any, include: list[str], page: int = 2000) -> Iterable[dict]:
        """Every record of a collection, a page at a time: memory stays flat at any corpus size."""
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

    def ingest(self, papers: Sequence[Paper], sync: bool = False, progress: Progress | None = None,
               on_wait: Notify | None = None) -> IngestSummary:
        """Upsert changed papers (chunks first, paper record last); unchanged ones are skipped, once the
        store shows they are whole. One writer at a time: a second waits, then gives up (StoreBusy)."""
        with self.writer(on_wait):
            return self._ingest(papers, sync, progress)

    def _ingest(self, papers: Sequence[Paper], sync: bool, progress: Progress | None) -> IngestSummary:
        started = time.perf_counter()
        existing = self.stored_hashes()
        held = self.chunk_ids_by_paper()
        broken = {pid for pid, hashes in existing.items() if held.get(pid, set()) != expected_chunk_ids(pid, hashes.n_chunks)}
        todo = [p for p in papers if p.id in broken or existing.get(p.id, StoredHashes()).embed_hash != self.embed_hash(p)]
        embedding = {p.id for p in todo}
        relabel = [p for p in papers if p.id not in embedding and existing[p.id].content_hash != p.content_hash]
        wanted = {p.id for p in papers}
        stale = sorted((set(existing) | set(held)) - wanted) if sync else []
        changed = bool(todo or stale or relabel)
        manifest = self.manifest()
        ledger = dict(existing)
        chunk_count = 0
        with self.writing() if changed or manifest.get("state") != "ready" else nullcontext():
            if changed:
                manifest = {**manifest, "state": "ingesting", "version": uuid.uuid4().hex[:12]}
                self._write_manifest(manifest)
            batch_size = max(1, self.settings.ingest_batch_papers)
            for begin in range(0, len(todo), batch_size):
                batch = todo[begin : begin + batch_size]
                written = self.write_papers(batch, held)
                ledger.update({p.id: StoredHashes(p.content_hash, self.embed_hash(p), written[p.id]) for p in batch})
                chunk_count += sum(written.values())
                if progress:
                    progress(len(batch))
            if progress and len(papers) > len(todo):
                progress(len(papers) - len(todo))
            for begin in range(0, len(relabel), 1000):  # metadata only (a title, a label): nothing re-embedded
                batch = relabel[begin : begin + 1000]
                self.papers.update(ids=[p.id for p in batch], metadatas=[self._paper_metadata(p, existing[p.id].n_chunks) for p in batch])
                ledger.update({p.id: existing[p.id]._replace(content_hash=p.content_hash) for p in batch})
            for pid in stale:
                self._delete_paper(pid, held.get(pid, set()) | expected_chunk_ids(pid, existing.get(pid, StoredHashes()).n_chunks))
                ledger.pop(pid, None)
            if changed or manifest.get("state") != "ready":
                self.finish_write(manifest, ledger)
        if self.files.read_ledger()[0] is None:  # a data dir from before the ledger was kept
            self.files.write_ledger(ledger, manifest.get("version", ""))
        added = sum(1 for p in todo if p.id not in existing)
        updated = len(todo) - added + len(relabel)
        return IngestSummary(
            papers=len(papers), added=added, updated=updated, unchanged=len(papers) - added - updated,
            removed=len(stale), chunks=chunk_count, seconds=round(time.perf_counter() - started, 2),
            repaired=sum(1 for p in todo if p.id in broken),
        )

    def finish_write(self, manifest: dict, ledger: dict[str, StoredHashes]) -> dict:
        """A new ready version: the manifest, the ledger of what the store now holds, and BM25 for it."""
        manifest = self._ready_manifest(manifest)
        self._write_manifest(manifest)
        self.files.write_ledger(ledger, manifest["version"])
        self.lexical = self.rebuild_lexical(manifest["version"])
        return manifest

    def embed_hash(self, paper: Paper) -> str:
        """What the stored vectors depend on: the text, the chunking and the model."""
        s = self.settings
        key = f"{self.model_id}|{s.chunk_sentences}|{s.chunk_max_tokens}|{s.tokenizer_encoding}|{paper.text}"
        return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]

    def stored_hashes(self) -> dict[str, StoredHashes]:
        """What the store's paper records say they hold, per paper id."""
        found: dict[str, StoredHashes] = {}
        for batch in self.scan(self.papers, include=["metadatas"]):
            for pid, meta in zip(batch["ids"], batch["metadatas"]):
                meta = meta or {}
                found[pid] = StoredHashes(meta.get("content_hash", ""), meta.get("embed_hash", ""), int(meta.get("n_chunks") or 0))
        return found

    def chunk_ids_by_paper(self) -> dict[str, set[str]]:
        """The chunk ids the store holds, per paper (ids only: no text, no vectors)."""
        found: dict[str, set[str]] = {}
        for batch in self.scan(self.chunks, include=[]):
            for cid in batch["ids"]:
                found.setdefault(paper_of(cid), set()).add(cid)
        return found

    def write_papers(self, papers: Sequence[Paper], held: dict[str, set[str]]) -> dict[str, int]:
        """Embed and write papers (chunks first, then the record); chunks they no longer have are dropped.
        Returns each paper's chunk count."""
        chunks_by_paper = [self.chunk(p) for p in papers]
        flat = [c for chunks in chunks_by_paper for c in chunks]
        vectors = np.asarray(self.embedder([c.text for c in flat]), dtype=np.float32)
        obsolete = [cid for p, chunks in zip(papers, chunks_by_paper) for cid in held.get(p.id, set()) - {c.id for c in chunks}]
        if obsolete:
            self.chunks.delete(ids=sorted(obsolete))
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
        return {p.id: len(c) for p, c in zip(papers, chunks_by_paper)}

    def _paper_metadata(self, paper: Paper, n_chunks: int) -> dict:
        return {
            "label": paper.label, "title": paper.title, "source": paper.source, "abstract": paper.abstract,
            "authors": json.dumps(paper.authors), "keywords": json.dumps(paper.keywords), "year": paper.year or 0,
            "venue": paper.venue, "url": paper.url, "content_hash": paper.content_hash,
            "embed_hash": self.embed_hash(paper), "n_chunks": n_chunks,
        }

    def _delete_paper(self, paper_id: str, chunk_ids: set[str]) -> None:
        if chunk_ids:
            self.chunks.delete(ids=sorted(chunk_ids))
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
        return {pid: paper_from_store(pid, doc, meta) for pid, doc, meta in zip(found["ids"], docs, found["metadatas"])}

    def get_paper(self, paper_id: str) -> Paper:
        paper = self.get_papers([paper_id]).get(paper_id)
        if paper is None:
            raise NotFound(f"no paper with id {paper_id!r}")
        return paper

    def list_papers(self, with_text: bool = False) -> list[Paper]:
        """Every paper in natural id order; metadata only unless the text is searched too."""
        papers = []
        include = ["documents", "metadatas"] if with_text else ["metadatas"]
        for batch in self.scan(self.papers, include=include):
            docs = batch["documents"] if with_text else [None] * len(batch["ids"])
            papers.extend(paper_from_store(pid, doc, meta) for pid, doc, meta in zip(batch["ids"], docs, batch["metadatas"]))
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
        rows = list(zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0]))
        lost = [cid for cid, doc, meta, _ in rows if doc is None or meta is None]
        if lost:  # the vector index names chunks the store no longer holds
            raise StoreDamaged(
                f"the vector index in {self.settings.data_dir} returns chunks the store does not hold ({lost[0]}): "
                f"run `qa-service check --repair`"
            )
        return [(cid, 1.0 - float(dist), {"text": doc, **meta}) for cid, doc, meta, dist in rows]

    def readiness(self) -> dict:
        """What serving needs, each checked: the store opens and holds papers, BM25 matches the corpus
        version (rebuilt first when it can be), and a test query returns. Raises naming the damaged part."""
        self.require_ready()
        lexical = self.load_lexical()
        stats = self.stats()
        if lexical.version != stats["version"] or len(lexical.chunk_ids) != stats["chunks"]:
            raise StoreDamaged(
                f"the lexical index (BM25, {self.bm25_path}) does not match the corpus version {stats['version']} "
                f"({len(lexical.chunk_ids)} chunks, the store {stats['chunks']}): run `qa-service check --repair`"
            )
        if not self.dense_chunks(PROBE, 1):
            raise StoreDamaged(f"a test query on the vector store in {self.settings.data_dir} returned nothing: run `qa-service check --repair`")
        lexical.search(PROBE, 1)
        return stats


def expected_chunk_ids(paper_id: str, n_chunks: int) -> set[str]:
    return {chunk_id(paper_id, i) for i in range(n_chunks)}


def paper_from_store(pid: str, text: str | None, meta: dict) -> Paper:
    return Paper(
        id=pid, abstract=meta.get("abstract", text) if text is not None else "", text=text or "",
        title=meta.get("title", ""), label=meta.get("label", pid), source=meta.get("source", ""),
        authors=json.loads(meta.get("authors") or "[]"), year=meta.get("year") or None, venue=meta.get("venue", ""),
        url=meta.get("url", ""), keywords=json.loads(meta.get("keywords") or "[]"),
    )


def _natural_key(pid: str) -> tuple:
    head, _, tail = pid.rpartition(":")
    return (head, int(tail)) if tail.isdigit() else (pid, 0)
