"""ChromaDB: open (embedded path or server URL), ingest by stable ids, query, stats.

Two collections: chunks (what we search) and papers (one record per abstract, written
after its chunks, so that a paper present in `papers` is complete: an interrupted
ingest is resumed by running it again). A manifest records the corpus version the BM25
side was built for, and a ledger what the store should hold.

Embedded (a data dir): the manifest, ledger and BM25 are files beside the data; one writer at a
time (locking.py, flock); a reader reopens the store after another process wrote it.
With a Chroma server: everything lives in Chroma (versions.py): each ingest builds a new
version beside the one served and switches the manifest last; one writer at a time by a lease
in Chroma (lease.py); readers poll the manifest, get the new version ready (BM25 from Chroma,
cached in data_dir only as a disposable copy) and then serve it, so app machines keep no state.
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
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from ..corpus.chunking import chunk_text
from ..config import Settings
from .embeddings import embedding_function, embedding_model_id
from .sentences import SentenceVectors
from ..errors import EmbeddingMismatch, NotFound, NotIndexed, QAError, StoreBusy, StoreDamaged
from .filters import FIELDS_VERSION, MARK, record_fields
from .lease import ChromaLease
from .lexical import LexicalIndex, empty_lexical
from .locking import StoreLocks
from .manifest import ManifestFiles, ManifestRead
from ..corpus.names import build_name_book, lowercase_words, paper_names
from ..records import Chunk, IndexStats, LexicalLoad, Paper, StoredHashes, WriterStatus, chunk_id, paper_of
from .chroma import GuardedCollection, close_client, open_client, store_error
from ..corpus.tokens import token_counter
from .versions import COPY_PAPERS, Pair, Versions, View, Views

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
    resumed: int = 0  # papers an interrupted ingest had already written to the next version (server mode)

    def to_dict(self) -> dict:
        return dict(self.__dict__)


class Index:
    """The stored corpus: chunks with vectors, paper records, the manifest and BM25."""

    def __init__(self, settings: Settings, embedder: Any = None, client: Any = None):
        self.settings = settings
        self.embedder = embedder or embedding_function(settings)
        self.model_id = embedding_model_id(self.embedder)
        self.shared = bool(settings.chroma_url)  # a Chroma server: everything in Chroma (versions.py)
        self.locks = StoreLocks(settings.data_path, readers=not self.shared)
        self.files: Any = ManifestFiles(settings.data_path, settings.collection)
        self._generation = self.locks.generation()  # read before opening: a write after it is noticed
        self._reopen_lock = threading.Lock()
        self._repair_lock = threading.Lock()
        self.listeners: list[Callable[[LexicalLoad], None]] = []  # told each time a BM25 index is made ready
        self.views = Views(View(None, None))
        self._open(client)
        self._count = token_counter(settings.tokenizer_encoding)
        self._manifest_cache: ManifestRead | None = None
        self._manifest_read_at = 0.0
        self._stats: IndexStats | None = None
        self.registry: Any = None  # the registry of corpora sharing this index's client (corpora.py): it reopens them all

    # -- opening ---------------------------------------------------------------
    def _open(self, client: Any = None) -> None:
        self.client = client or open_client(self.settings)
        if not self.shared:
            prefix = self.settings.collection
            self.views.served = View(self._collection(f"{prefix}_chunks"), self._collection(f"{prefix}_papers"), None,
                                     self.views.served.lexical)
            return
        self.versions = Versions(self.client, self.settings, self._collection)
        self.files = self.versions.files
        self.lease = ChromaLease(self.client, self.settings.collection, self.settings.writer_lease, self.versions.where,
                                 lambda exc: store_error(self.settings, exc))
        found = self.files.read()
        pair = self.versions.open(self.versions.live_names(found.data), create=bool(found.problem))
        self.views.served = View(pair.chunks, pair.papers, found)

    def _collection(self, name: str, create: bool = True) -> Any:
        try:
            if create:
                collection = self.client.get_or_create_collection(
                    name,
                    embedding_function=self.embedder,
                    metadata={"embedding_model": self.model_id},
                    configuration={"hnsw": {"space": "cosine"}},
                )
            else:
                collection = self.client.get_collection(name, embedding_function=self.embedder)
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
                f"the index in {self.settings.chroma_url or self.settings.data_dir} was built with {stored}, but {self.model_id} "
                f"is configured: re-ingest (qa-service ingest) into an empty data dir or a new collection, or configure {stored}"
            )
        return GuardedCollection(collection, self.settings)

    # -- the view being served ---------------------------------------------------
    def _current(self) -> View:
        return self.views.current()

    @property
    def chunks(self) -> Any:
        return self._current().chunks

    @property
    def papers(self) -> Any:
        return self._current().papers

    @property
    def lexical(self) -> LexicalIndex:
        return self._current().lexical

    @lexical.setter
    def lexical(self, value: LexicalIndex) -> None:
        self._current().lexical = value

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Around one request (server mode): it reads one version throughout, even when the process
        switches to a new one meanwhile."""
        if not self.shared:
            yield
            return
        with self.views.pinned():
            yield

    def follow(self, generation: str | None) -> None:
        """Notice another process's writes. Embedded: reopen the store when another process wrote it
        since we opened it (Chroma's local client keeps the vector index in memory and would go on
        answering from the old one). Server: re-read the manifest every MANIFEST_TTL seconds and
        ready a new version in the background; requests keep the current one until it is ready."""
        if self.shared:
            self.views.poll(self.files.read, self._ready, MANIFEST_TTL)
            return
        if generation is None or generation == self._generation:
            return
        if self.registry is not None:  # one client for several corpora: closing it is for all of them at once
            self.registry.follow(generation)
            return
        with self._reopen_lock:
            if generation == self._generation:
                return
            close_client(self.client)
            self.reopen(open_client(self.settings), generation)

    @property
    def generation(self) -> str | None:
        """The store's generation this index last read (locking.py): a newer one means reopen."""
        return self._generation

    def reopen(self, client: Any, generation: str | None) -> None:
        """Read the store through a new client (on failure the generation stays old: the next request tries again)."""
        self._open(client)
        self._generation = generation
        self._manifest_cache, self._stats = None, None

    def _ready(self, found: ManifestRead) -> View:
        """A new version made ready to serve (server mode): its collections and its BM25."""
        pair = self.versions.open(self.versions.live_names(found.data), create=False)
        view = View(pair.chunks, pair.papers, found, self._shared_lexical(found.data["version"], pair))
        self._stats = None
        return view

    # -- one writer ------------------------------------------------------------
    @contextmanager
    def writer(self, on_wait: Notify | None = None) -> Iterator[None]:
        """The store's one writer (ingest, check --repair) for the whole run; a second waits up to
        `writer_wait` seconds, then StoreBusy. Embedded: a flock in the data dir; server: a lease in Chroma."""
        if self.shared:
            with self.lease.held(self.settings.writer_wait, on_wait):
                yield
            return
        with self.locks.writer(self.settings.writer_wait, on_wait):
            self.follow(self.locks.generation())  # someone may have written while we waited
            yield

    @contextmanager
    def try_writer(self) -> Iterator[bool]:
        """The writer lock if it is free now (True), else nothing (False): for repairs a reader may make."""
        if not self.shared:
            with self.locks.try_writer() as mine:
                yield mine
            return
        if self.lease.holds():
            yield True
            return
        try:
            self.lease.acquire(0.0, take_over=False)
        except QAError:  # busy, or the server is away: no repair now
            yield False
            return
        try:
            yield True
        finally:
            self.lease.release()

    def writer_status(self) -> WriterStatus:
        """Who holds the writer lock now (for /metrics)."""
        return self.lease.status() if self.shared else self.locks.writer_status()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around changes to the store: readers are held off, and reopen it afterwards (embedded mode;
        with a Chroma server readers never see a version being written, so there is nothing to hold off)."""
        with self.locks.writing():
            yield
        self._generation = self.locks.generation()  # our own client saw every change

    # -- manifest and BM25 -------------------------------------------------------
    @property
    def bm25_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.bm25"

    def cache_path(self, version: str) -> Path:
        """Server mode: where a version's BM25 is cached on this machine (disposable: Chroma has it)."""
        return self.settings.data_path / "cache" / f"{self.settings.collection}_v{version}.bm25"  # "_": never in a corpus name

    def manifest(self) -> dict:
        """The manifest as stored now ({} when it is missing or invalid)."""
        return self.files.read().data

    def _manifest_now(self) -> ManifestRead:
        """The manifest, re-read at most every MANIFEST_TTL seconds: no file I/O on most requests,
        yet another process's ingest is noticed within seconds. Server mode: the view's."""
        if self.shared:
            return self._current().manifest or ManifestRead({}, "no manifest")
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
            if self.shared:
                self._current().manifest = found
            else:
                self._manifest_cache, self._manifest_read_at = found, time.monotonic()
        return found.data

    def _rebuild_manifest(self, problem: str) -> dict:
        """The store is the truth and the manifest only describes it: write a new one (as a writer)."""
        with self.try_writer() as mine:
            if not mine:
                raise StoreBusy(
                    f"{problem} and cannot be rebuilt now (another writer holds {self.settings.chroma_url or self.settings.data_dir}, "
                    f"or it is read-only): retry when the writer ends, or run `qa-service check --repair`"
                )
            log.warning("%s: rebuilt from the store", problem)
            if self.shared:  # a store from before versions: served as it is, under a manifest of its own
                view = self._current()
                return self._commit(uuid.uuid4().hex[:12], Pair(view.chunks, view.papers), self.stored_hashes(), {})
            manifest = self._ready_manifest({})
            self._write_manifest(manifest)
            return manifest

    def _ready_manifest(self, manifest: dict, pair: Pair | None = None) -> dict:
        pair = pair or Pair(self.chunks, self.papers)
        return {
            **manifest,
            "state": "ready",
            "version": uuid.uuid4().hex[:12],  # a new version: readers drop what they built mid-ingest
            "generation": int(manifest.get("generation") or 0) + 1,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "embedding_model": self.model_id,
            "papers": pair.papers.count(),
            "chunks": pair.chunks.count(),
        }

    def _write_manifest(self, data: dict) -> None:
        self.files.write(data)
        self._manifest_cache, self._manifest_read_at, self._stats = ManifestRead(data), time.monotonic(), None

    def load_lexical(self) -> LexicalIndex:
        """BM25 for the current corpus version: loaded from disk (or, server mode, from Chroma), or
        rebuilt from the store when missing, stale or damaged (it is a cache of the store)."""
        manifest = self.current_manifest()
        version = manifest.get("version", "")
        view = self._current()
        if view.lexical.version == version and (view.lexical.chunk_ids or not version):
            return view.lexical
        with self._repair_lock:
            if view.lexical.version == version and (view.lexical.chunk_ids or not version):
                return view.lexical
            if self.shared:
                view.lexical = self._shared_lexical(version, Pair(view.chunks, view.papers)) if version else empty_lexical()
                return view.lexical
            started = time.perf_counter()
            loaded = LexicalIndex.load(self.bm25_path) if self.bm25_path.exists() else None
            source = "cache"
            if loaded is None or loaded.version != version or manifest.get("state") != "ready":
                if manifest.get("state") == "ready" and self.bm25_path.exists():
                    log.warning("the BM25 files in %s are damaged, stale or from an older qa-service: rebuilt from the store "
                                "(a cache of it, nothing is lost)", self.bm25_path)
                loaded, source = self.rebuild_lexical(version), "rebuilt"
            view.lexical = loaded
            self._loaded(LexicalLoad(version, source, time.perf_counter() - started, len(loaded.chunk_ids)))
        return loaded

    def _shared_lexical(self, version: str, pair: Pair) -> LexicalIndex:
        """BM25 of a version (server mode): this machine's cache, else Chroma's copy, else rebuilt from its chunks."""
        started = time.perf_counter()

        def rebuild() -> LexicalIndex:
            log.info("BM25 of version %s is not stored in Chroma (or damaged): rebuilding it from the %d chunks", version, pair.chunks.count())
            return self._build_lexical(version, pair)

        lexical, source = self.versions.lexical(version, self.cache_path(version), rebuild)
        self._loaded(LexicalLoad(version, source, time.perf_counter() - started, len(lexical.chunk_ids)))
        return lexical

    def _loaded(self, load: LexicalLoad) -> None:
        log.info("BM25 of version %s ready in %.2f s (%s, %d chunks)", load.version, load.seconds, load.source, load.chunks)
        for listener in self.listeners:
            listener(load)

    def saved_lexical(self) -> tuple[LexicalIndex | None, str]:
        """The BM25 index as saved for the served version, and where it is: what `check` verifies."""
        if not self.shared:
            return (LexicalIndex.load(self.bm25_path) if self.bm25_path.exists() else None), str(self.bm25_path)
        version = self.manifest().get("version", "")
        return self.versions.stored_lexical(version), f"{self.versions.where}: BM25 of version {version}"

    def rebuild_lexical(self, version: str) -> LexicalIndex:
        """BM25 over the chunks as stored; saved when no other writer holds the data dir."""
        lexical = self._build_lexical(version)
        if lexical.chunk_ids:
            with self.locks.try_writer() as mine:
                if mine:
                    lexical.save(self.bm25_path)
        return lexical

    def _build_lexical(self, version: str, pair: Pair | None = None) -> LexicalIndex:
        pair = pair or Pair(self.chunks, self.papers)
        ids, texts, pids = [], [], []
        for batch in self.scan(pair.chunks, include=["documents", "metadatas"]):
            for cid, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"]):
                ids.append(cid)
                texts.append(doc)
                pids.append(meta["paper_id"])
        labels, authors = {}, {}
        for batch in self.scan(pair.papers, include=["metadatas"]):
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
            if self.shared:
                summary = self._ingest_shared(papers, sync, progress or (lambda n: None))
            else:
                summary = self._ingest(papers, sync, progress)
            self.sentences.save()  # the sentence vectors the chunk pass gave, beside BM25
            return summary

    @cached_property
    def sentences(self) -> SentenceVectors:
        """This corpus's sentence vectors (store/sentences.py), a file beside its BM25 index."""
        return SentenceVectors(self.settings.data_path / f"{self.settings.collection}.sentences.npz", self.settings.sentence_vectors)

    def _ingest_shared(self, papers: Sequence[Paper], sync: bool, progress: Progress) -> IngestSummary:
        """Server mode: the next version is built beside the one served (unchanged papers copied, vectors
        and all; changed ones embedded), checked whole, then served by one write of the manifest."""
        started = time.perf_counter()
        found = self.files.read()
        manifest = found.data
        live = self.versions.open(self.versions.live_names(manifest), create=True)
        existing, held = self.stored_hashes(live.papers), self.chunk_ids_by_paper(live.chunks)
        whole = {pid for pid, h in existing.items() if held.get(pid, set()) == expected_chunk_ids(pid, h.n_chunks)}
        by_id = {p.id: p for p in papers}
        plan = {p.id: (p.content_hash, self.embed_hash(p)) for p in papers}  # what the next version holds
        if not sync:  # every other paper stays as it is
            plan.update({pid: (h.content_hash, h.embed_hash) for pid, h in existing.items() if pid not in plan})
        same = {pid for pid, want in plan.items() if pid in whole and existing[pid].embed_hash == want[1]}
        marked = set(live.papers.get(where={MARK: FIELDS_VERSION}, include=[])["ids"]) if existing else set()
        if (same == set(plan) and set(held) <= set(existing) and set(existing) <= marked  # a store from before filters: rewritten
                and all(existing[pid].content_hash == plan[pid][0] for pid in plan)):
            return self._unchanged_shared(papers, found, live, existing, started, progress)
        self.versions.retire_unused(manifest)
        version, target, interrupted = self.versions.staging(manifest.get("version", ""))
        done = self._resumable(interrupted, plan) if interrupted else {}
        copies = [(interrupted, done), (live, {pid: existing[pid] for pid in plan if pid not in done and pid in same})]
        for source, hashes in copies:  # finished papers of an interrupted ingest, then unchanged ones: vectors and all
            ids = list(hashes)
            for begin in range(0, len(ids), COPY_PAPERS):
                batch = ids[begin : begin + COPY_PAPERS]
                self.lease.verify()
                chunk_ids = [cid for pid in batch for cid in sorted(expected_chunk_ids(pid, hashes[pid].n_chunks))]
                metadata = {pid: self._paper_metadata(by_id[pid], hashes[pid].n_chunks) for pid in batch if pid in by_id}
                fields = {pid: record_fields(by_id[pid]) for pid in batch if pid in by_id}
                self.versions.copy(source, target, chunk_ids, batch, metadata, fields)  # an edited title or year: metadata anew
                progress(sum(1 for pid in batch if pid in by_id))
        todo = [pid for pid in plan if pid not in done and pid not in same]
        from_store = self.get_papers([pid for pid in todo if pid not in by_id], pair=live)  # kept papers with chunks missing
        embed = [by_id.get(pid) or from_store[pid] for pid in todo if pid in by_id or pid in from_store]
        chunk_count = 0
        size = max(1, self.settings.ingest_batch_papers)
        for begin in range(0, len(embed), size):
            batch = embed[begin : begin + size]
            self.lease.verify()
            chunk_count += sum(self.write_papers(batch, {}, into=target).values())
            progress(sum(1 for p in batch if p.id in by_id))
        ledger = self._verify_staged(version, target, plan)
        self._commit(version, target, ledger, manifest)
        if interrupted:
            self.versions.drop(interrupted)
        added = sum(1 for pid in by_id if pid not in existing)
        updated = sum(1 for pid in by_id if pid in existing and (pid not in same or existing[pid].content_hash != plan[pid][0]))
        return IngestSummary(
            papers=len(papers), added=added, updated=updated, unchanged=len(papers) - added - updated,
            removed=len(set(existing) - set(plan)), chunks=chunk_count, seconds=round(time.perf_counter() - started, 2),
            repaired=sum(1 for pid in by_id if pid in existing and pid not in whole and existing[pid].embed_hash == plan[pid][1]),
            resumed=sum(1 for pid in done if pid in by_id),
        )

    def _unchanged_shared(self, papers: Sequence[Paper], found: ManifestRead, live: Pair, existing: dict[str, StoredHashes],
                          started: float, progress: Progress) -> IngestSummary:
        """Nothing to write: no new version. A half-built one an interrupted ingest left is dropped, and a
        store from before versions (no manifest yet) gets one."""
        if found.problem:
            self._commit(uuid.uuid4().hex[:12], live, existing, {})
        elif self.versions.pending():
            self.versions.retire_unused(found.data, keep_pending=False)
            self.versions.finish_pending()
        progress(len(papers))
        return IngestSummary(papers=len(papers), added=0, updated=0, unchanged=len(papers), removed=0, chunks=0,
                             seconds=round(time.perf_counter() - started, 2))

    def _resumable(self, interrupted: Pair, plan: dict[str, tuple[str, str]]) -> dict[str, StoredHashes]:
        """The papers an interrupted ingest had written whole, as planned now: copied, not embedded again."""
        hashes, held = self.stored_hashes(interrupted.papers), self.chunk_ids_by_paper(interrupted.chunks)
        return {pid: h for pid, h in hashes.items() if plan.get(pid) == (h.content_hash, h.embed_hash)
                and held.get(pid, set()) == expected_chunk_ids(pid, h.n_chunks)}

    def _verify_staged(self, version: str, target: Pair, plan: dict[str, tuple[str, str]]) -> dict[str, StoredHashes]:
        """The next version holds exactly the plan, every paper whole; else nothing is switched. Returns its ledger."""
        hashes, held = self.stored_hashes(target.papers), self.chunk_ids_by_paper(target.chunks)
        wrong = sorted(pid for pid in set(plan) | set(hashes) | set(held)
                       if plan.get(pid) != (hashes.get(pid, StoredHashes()).content_hash, hashes.get(pid, StoredHashes()).embed_hash)
                       or held.get(pid, set()) != expected_chunk_ids(pid, hashes[pid].n_chunks))
        if wrong:
            raise StoreDamaged(
                f"the new corpus version {version} does not hold what this ingest wrote ({len(wrong)} papers, first {wrong[0]}); "
                f"nothing was switched: run the ingest again"
            )
        return hashes

    def _commit(self, version: str, pair: Pair, ledger: dict[str, StoredHashes], previous: dict) -> dict:
        """Server mode: serve `version`: its ledger and BM25 go into Chroma first, then the manifest
        that names it, in one write. Readers switch when they next read the manifest."""
        lexical = self._build_lexical(version, pair)
        self.files.write_ledger(ledger, version)
        self.versions.blobs.put(f"bm25:{version}", version, lexical.to_bytes())
        manifest = {**self._ready_manifest(previous, pair), "version": version,
                    "chunks_collection": pair.chunks.name, "papers_collection": pair.papers.name}
        if previous.get("version"):
            names = self.versions.live_names(previous)
            manifest["previous"] = {"version": previous["version"], "chunks_collection": names[0], "papers_collection": names[1]}
        self.lease.verify()
        self.files.write(manifest)  # the switch
        self.versions.finish_pending()
        lexical.save_new(self.cache_path(version))
        self.views.served = View(pair.chunks, pair.papers, ManifestRead(manifest), lexical)
        self._stats = None
        return manifest

    def _ingest(self, papers: Sequence[Paper], sync: bool, progress: Progress | None) -> IngestSummary:
        started = time.perf_counter()
        existing = self.stored_hashes()
        held = self.chunk_ids_by_paper()
        broken = {pid for pid, hashes in existing.items() if held.get(pid, set()) != expected_chunk_ids(pid, hashes.n_chunks)}
        todo = [p for p in papers if p.id in broken or existing.get(p.id, StoredHashes()).embed_hash != self.embed_hash(p)]
        embedding = {p.id for p in todo}
        unmarked = set(existing) - set(self.papers.get(where={MARK: FIELDS_VERSION}, include=[])["ids"]) if existing else set()
        relabel = [p for p in papers if p.id not in embedding and (existing[p.id].content_hash != p.content_hash or p.id in unmarked)]
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
                chunk_fields = [(cid, record_fields(p)) for p in batch for cid in sorted(expected_chunk_ids(p.id, existing[p.id].n_chunks))]
                if chunk_fields:  # the filter fields travel with the chunks, where the dense side filters
                    self.chunks.update(ids=[cid for cid, _ in chunk_fields], metadatas=[fields for _, fields in chunk_fields])
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
        if self.shared:  # check --repair: the version served, repaired in place, under a new version id
            view = self._current()
            return self._commit(uuid.uuid4().hex[:12], Pair(view.chunks, view.papers), ledger, manifest)
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

    def stored_hashes(self, papers: Any = None) -> dict[str, StoredHashes]:
        """What the store's paper records say they hold, per paper id."""
        found: dict[str, StoredHashes] = {}
        for batch in self.scan(papers or self.papers, include=["metadatas"]):
            for pid, meta in zip(batch["ids"], batch["metadatas"]):
                meta = meta or {}
                found[pid] = StoredHashes(meta.get("content_hash", ""), meta.get("embed_hash", ""), int(meta.get("n_chunks") or 0))
        return found

    def chunk_ids_by_paper(self, chunks: Any = None) -> dict[str, set[str]]:
        """The chunk ids the store holds, per paper (ids only: no text, no vectors)."""
        found: dict[str, set[str]] = {}
        for batch in self.scan(chunks or self.chunks, include=[]):
            for cid in batch["ids"]:
                found.setdefault(paper_of(cid), set()).add(cid)
        return found

    def write_papers(self, papers: Sequence[Paper], held: dict[str, set[str]], into: Pair | None = None) -> dict[str, int]:
        """Embed and write papers (chunks first, then the record); chunks they no longer have are dropped.
        Returns each paper's chunk count."""
        into = into or Pair(self.chunks, self.papers)
        chunks_by_paper = [self.chunk(p) for p in papers]
        flat = [c for chunks in chunks_by_paper for c in chunks]
        vectors = self.sentences.embed_chunks(self.embedder, [c.text for c in flat])  # their sentences' vectors too, for answers
        obsolete = [cid for p, chunks in zip(papers, chunks_by_paper) for cid in held.get(p.id, set()) - {c.id for c in chunks}]
        if obsolete:
            into.chunks.delete(ids=sorted(obsolete))
        into.chunks.upsert(
            ids=[c.id for c in flat],
            embeddings=vectors,
            documents=[c.text for c in flat],
            metadatas=[{"paper_id": c.paper_id, "position": c.position, "start": c.start, "end": c.end, **fields}
                       for p, chunks in zip(papers, chunks_by_paper) for fields in [record_fields(p)] for c in chunks],
        )
        paper_vectors, offset = [], 0
        for chunks in chunks_by_paper:
            mean = vectors[offset : offset + len(chunks)].mean(axis=0)
            paper_vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            offset += len(chunks)
        into.papers.upsert(
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
            **record_fields(paper),  # None removes a field the paper no longer has (Chroma merges metadata)
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
        stats = self._stats
        if stats is None or stats.version != manifest.get("version"):
            stats = self._stats = IndexStats(
                papers=self.papers.count(),
                chunks=self.chunks.count(),
                built_at=manifest.get("built_at"),
                embedding_model=self.model_id,
                version=manifest.get("version"),
                generation=int(manifest.get("generation") or 0),
            )
        return stats

    def interrupted(self) -> bool:
        """An ingest was stopped midway and not run again (embedded: readers are held off while one writes,
        so a reader that sees its manifest still `ingesting` sees one that died). A Chroma server never
        serves a half-built version, so there it is never so."""
        return not self.shared and self.manifest().get("state") == "ingesting"

    def paper_count(self) -> int:
        """Papers served, without a first touch of the store when the count is not known yet: the
        manifest's figure (Chroma's first call on a collection costs ~0.3 s; a liveness probe must not wait)."""
        if self.shared:  # the version this process serves, which may not be the one the manifest names yet
            found = self._current().manifest or ManifestRead({}, "none served yet")
        else:
            found = self.files.read()  # read anew: a corpus another process dropped has none (and its count fails)
        papers = found.data.get("papers")
        return papers if not found.problem and isinstance(papers, int) else self.papers.count()

    def require_ready(self) -> None:
        if self.stats().papers == 0:
            raise NotIndexed("the index is empty: run `qa-service ingest` (or `make run`) first")

    def get_papers(self, ids: Sequence[str], with_text: bool = True, pair: Pair | None = None) -> dict[str, Paper]:
        """Papers by id; without text (metadata only, text and abstract empty) when only labels are needed."""
        if not ids:
            return {}
        found = (pair.papers if pair else self.papers).get(ids=list(ids), include=["documents", "metadatas"] if with_text else ["metadatas"])
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
        """(chunk id, cosine similarity, chunk record), best first, each record checked to be in the store
        (the readiness probe; retrieval uses dense_ids and reads only the evidence it shows)."""
        found = self._query(question, n, ["documents", "metadatas", "distances"], None, None)
        if found is None:
            return []
        rows = list(zip(found["ids"][0], found["documents"][0], found["metadatas"][0], found["distances"][0]))
        lost = [cid for cid, doc, meta, _ in rows if doc is None or meta is None]
        if lost:  # the vector index names chunks the store no longer holds
            raise StoreDamaged(
                f"the vector index in {self.settings.data_dir} returns chunks the store does not hold ({lost[0]}): "
                f"run `qa-service check --repair`"
            )
        return [(cid, 1.0 - float(dist), {"text": doc, **meta}) for cid, doc, meta, dist in rows]

    def dense_ids(self, question: str, n: int, where: dict | None = None, ids: list[str] | None = None) -> list[tuple[str, float]]:
        """(chunk id, cosine similarity), best first; `where` (filters.py) or `ids` restricts the search itself.
        Without the records: Chroma's query took 9.0 ms for 80 chunks with their text and metadata and 2.1 ms
        without (20,000 papers); retrieval reads the few it shows."""
        found = self._query(question, n, ["distances"], where, ids)
        return [] if found is None else [(cid, 1.0 - float(dist)) for cid, dist in zip(found["ids"][0], found["distances"][0])]

    def _query(self, question: str, n: int, include: list[str], where: dict | None, ids: list[str] | None) -> Any:
        total = self.stats().chunks
        if total == 0:
            return None
        vector = self.embedder.embed_query([question])[0]
        return self.chunks.query(
            query_embeddings=[vector], n_results=min(n, total), include=include,
            **({"where": where} if where else {}), **({"ids": ids} if ids is not None else {}),
        )

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
