"""The embedded store: a PersistentClient in the data dir, with the manifest, ledger and BM25 as files beside it.

Two collections, `<collection>_chunks` and `<collection>_papers`, written in place by an ingest
while readers are held off (locking.py: one writer at a time by flock, and a gate readers check),
so a reader that sees the manifest still `ingesting` sees an ingest that died. A reader reopens
the client after another process wrote (chroma.Connection).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..records import LexicalLoad, Paper, StoredHashes, WriterStatus
from .chroma import Connection
from .collections import Pair, View
from .ingest import Plan, Staging
from .lexical import LexicalIndex
from .manifest import MANIFEST_TTL, Ledger, Manifest, ManifestFiles, ManifestRead

log = logging.getLogger(__name__)

Notify = Callable[[str], None]
LOST = "lost-manifest"  # the version a corpus whose manifest is lost is served under until a writer writes one


def new_version() -> str:
    return uuid.uuid4().hex[:12]  # a new version: readers drop what they built mid-ingest


@dataclass
class InPlace:
    """An ingest's stage in the embedded store: the served collections themselves."""

    store: EmbeddedStore
    source: Pair
    held: dict[str, set[str]]
    resumed: dict[str, StoredHashes] = field(default_factory=dict)  # papers written in place are the store's: kept

    @property
    def target(self) -> Pair:
        return self.source

    def checkpoint(self) -> None:
        """Nothing to check: the flock is ours until the process ends."""

    def keep(self, hashes: dict[str, StoredHashes], papers: dict[str, Paper]) -> None:
        """Unchanged papers stay where they are."""

    def relabel(self, papers: Sequence[Paper], hashes: dict[str, StoredHashes]) -> None:
        self.source.relabel(papers, hashes)

    def remove(self, paper_ids: Sequence[str], chunk_ids: set[str]) -> None:
        self.source.delete(paper_ids, chunk_ids)

    def finish(self, ledger: dict[str, StoredHashes], wanted: dict[str, tuple[str, str]]) -> None:
        self.store.commit(ledger)


class EmbeddedStore:
    """One corpus in the data dir (see the module's docstring)."""

    def __init__(self, settings: Settings, connection: Connection, model_id: str, open_collection: Callable[[str], Any],
                 build: Callable[[Pair, str], LexicalIndex], loaded: Callable[[LexicalLoad], None]):
        self.settings = settings
        self.model_id = model_id
        self.connection = connection
        self.files = ManifestFiles(settings.data_path, settings.collection)
        self.where = str(settings.data_dir)
        self._open_collection = open_collection
        self._build = build  # BM25 over a pair, for a version
        self._loaded = loaded  # told each time a BM25 index is made ready
        self._manifest: tuple[float, ManifestRead] | None = None
        self._lock = threading.Lock()
        self._epoch = -1
        self._view = View(self._pair())

    @property
    def bm25_path(self) -> Path:
        return self.settings.data_path / f"{self.settings.collection}.bm25"

    def _pair(self) -> Pair:
        self._epoch = self.connection.epoch
        prefix = self.settings.collection
        return Pair(self._open_collection(f"{prefix}_chunks"), self._open_collection(f"{prefix}_papers"))

    # -- what is served ------------------------------------------------------------------
    def view(self) -> View:
        """The collections, opened again once the connection was reopened (another process wrote)."""
        if self._epoch != self.connection.epoch:
            with self._lock:
                if self._epoch != self.connection.epoch:
                    self._view = View(self._pair(), None, self._view.lexical)
                    self._manifest = None
        return self._view

    def pinned(self) -> AbstractContextManager[None]:
        return nullcontext()  # readers are held off while a writer writes: there is one version

    def follow(self) -> None:
        """The connection follows other processes' writes (Corpora.follow, writer)."""

    def served_manifest(self) -> ManifestRead:
        """Re-read at most every MANIFEST_TTL seconds: no file I/O on most requests, yet another process's ingest
        is noticed within seconds. A lost one is served as it is (LOST) until `check --repair` or an ingest writes it."""
        cached = self._manifest
        now = time.monotonic()
        if cached is None or now - cached[0] > MANIFEST_TTL:
            found = self.files.read()
            if found.problem and self.view().papers.count():  # a store without a manifest: served as it is
                found = ManifestRead(Manifest(state="ready", version=LOST), found.problem)
            cached = self._manifest = (now, found)
        return cached[1]

    def lexical(self, view: View, version: str) -> LexicalIndex:
        """BM25 from its files, or rebuilt from the store when missing, stale or damaged (it is a cache of the store)."""
        started = time.perf_counter()
        loaded = LexicalIndex.load(self.bm25_path) if self.bm25_path.exists() else None
        source = "cache"
        ready = self.served_manifest().data.ready and version != LOST
        if loaded is None or loaded.version != version or not ready:
            if ready and self.bm25_path.exists():
                log.warning("the BM25 files in %s are damaged, stale or from an older qa-service: rebuilt from the store "
                            "(a cache of it, nothing is lost)", self.bm25_path)
            loaded, source = self._rebuild_lexical(view.pair, version), "rebuilt"
        self._loaded(LexicalLoad(version, source, time.perf_counter() - started, len(loaded.chunk_ids)))
        return loaded

    def _rebuild_lexical(self, pair: Pair, version: str) -> LexicalIndex:
        """BM25 over the chunks as stored; saved when no other writer holds the data dir."""
        lexical = self._build(pair, version)
        if lexical.chunk_ids and version != LOST:
            with self.connection.locks.try_writer() as mine:
                if mine:
                    lexical.save(self.bm25_path)
        return lexical

    def saved_lexical(self) -> tuple[LexicalIndex | None, str]:
        return (LexicalIndex.load(self.bm25_path) if self.bm25_path.exists() else None), str(self.bm25_path)

    def interrupted(self) -> bool:
        """Readers are held off while one writes, so a manifest still `ingesting` is an ingest that died."""
        return self.files.read().data.state == "ingesting"

    def paper_count(self) -> int | None:
        """The manifest's figure, read anew (a corpus another process dropped has none); None when unknown."""
        found = self.files.read()
        return None if found.problem else found.data.papers

    # -- one writer ----------------------------------------------------------------------
    @contextmanager
    def writer(self, on_wait: Notify | None = None) -> Iterator[None]:
        locks = self.connection.locks
        with locks.writer(self.settings.writer_wait, on_wait):
            self.connection.follow(locks.generation())  # someone may have written while we waited
            yield

    def try_writer(self) -> AbstractContextManager[bool]:
        return self.connection.locks.try_writer()

    def writer_status(self) -> WriterStatus:
        return self.connection.locks.writer_status()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Readers are held off while the store changes."""
        with self.connection.locks.writing():
            yield
        self.connection.wrote()

    # -- ingest and repair ---------------------------------------------------------------
    def live(self) -> Pair:
        return self.view().pair

    def settle(self, existing: dict[str, StoredHashes]) -> None:
        """Nothing changed: an interrupted ingest (or a lost manifest) still gets its ready manifest; a data dir
        from before the ledger gets one."""
        found = self.files.read()
        if found.problem or not found.data.ready:
            with self.writing():
                self.commit(existing)
        elif self.files.read_ledger() is None:
            self.files.write_ledger(Ledger(existing, found.data.version))

    @contextmanager
    def stage(self, plan: Plan) -> Iterator[Staging]:
        """The served collections, written in place while readers are held off; the manifest says `ingesting` meanwhile."""
        pair = self.live()
        held = pair.chunk_ids_by_paper()
        with self.writing():
            self._write(self.files.read().data.started(new_version()))
            if plan.rebuild:  # the plan holds every paper's text: the collections are made anew, their vector index with them
                pair, held = self._recreate(), {}
            yield InPlace(self, pair, held)

    def _recreate(self) -> Pair:
        """Both collections deleted and created again, keeping their metadata (a named corpus's mark)."""
        old = self.view().pair
        marks = [dict(collection.metadata or {}) for collection in old]
        for collection in old:
            self.connection.delete(collection.name)
        pair = self._pair()
        for collection, metadata in zip(pair, marks):
            collection.modify(metadata=metadata)
        self._view = View(pair)
        self.connection.epoch += 1  # other corpora objects of this process holding the old collections open them anew
        return pair


    def commit(self, ledger: dict[str, StoredHashes]) -> None:
        """A new ready version of what the collections hold now: the manifest, the ledger, and BM25 for it."""
        view = self.view()
        found = self.files.read()
        manifest = found.data.built(new_version(), self.model_id, view.papers.count(), view.chunks.count())
        self._write(manifest)
        self.files.write_ledger(Ledger(ledger, manifest.version))
        view.lexical = self._rebuild_lexical(view.pair, manifest.version)

    def _write(self, manifest: Manifest) -> None:
        self.files.write(manifest)
        self._manifest = (time.monotonic(), ManifestRead(manifest))

    def drop(self) -> None:
        """The corpus gone: its collections, manifest, ledger and BM25 files."""
        prefix = self.settings.collection
        for kind in ("chunks", "papers"):
            self.connection.delete(f"{prefix}_{kind}")
        self.files.remove()

    def family(self) -> list[Any]:
        """The collections that say whose corpus this is (corpora.py)."""
        view = self.view()
        return [view.chunks, view.papers]
