"""The server store: an HttpClient to a Chroma server that holds everything, so app machines keep no state.

Each ingest builds a new version beside the one served (versions.py) and switches the manifest
last; one writer at a time by a lease in Chroma (lease.py); readers poll the manifest, get the
new version ready (BM25 from Chroma, cached in data_dir only as a disposable copy) and then
serve it, each request pinned to one version throughout.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..config import Settings
from ..errors import QAError, StoreDamaged
from ..records import LexicalLoad, Paper, StoredHashes, WriterStatus
from .chroma import Connection, store_error
from .collections import Pair, View, expected_chunk_ids
from .ingest import Plan, Staging
from .lease import ChromaLease
from .lexical import LexicalIndex, empty_lexical
from .manifest import MANIFEST_TTL, Ledger, Manifest, ManifestRead, Previous
from .versions import Versions, Views, new_version

log = logging.getLogger(__name__)

Notify = Callable[[str], None]


@dataclass
class NewVersion:
    """An ingest's stage on a Chroma server: a version of its own beside the one served."""

    store: ServerStore
    version: str
    source: Pair
    target: Pair
    previous: Manifest
    held: dict[str, set[str]] = field(default_factory=dict)  # a new version holds nothing yet
    resumed: dict[str, StoredHashes] = field(default_factory=dict)

    def checkpoint(self) -> None:
        self.store.lease.verify()

    def keep(self, hashes: dict[str, StoredHashes], papers: dict[str, Paper]) -> None:
        self.target.copy_from(self.source, hashes, papers)

    def relabel(self, papers: Sequence[Paper], hashes: dict[str, StoredHashes]) -> None:
        self.target.copy_from(self.source, {p.id: hashes[p.id] for p in papers}, {p.id: p for p in papers})

    def remove(self, paper_ids: Sequence[str], chunk_ids: set[str]) -> None:
        """Nothing to delete: what is not carried over is not in the new version."""

    def finish(self, ledger: dict[str, StoredHashes], wanted: dict[str, tuple[str, str]]) -> None:
        """The new version holds exactly the plan, every paper whole, or nothing is switched."""
        hashes, held = self.target.stored_hashes(), self.target.chunk_ids_by_paper()
        wrong = sorted(pid for pid in set(wanted) | set(hashes) | set(held)
                       if wanted.get(pid) != (hashes.get(pid, StoredHashes()).content_hash, hashes.get(pid, StoredHashes()).embed_hash)
                       or held.get(pid, set()) != expected_chunk_ids(pid, hashes[pid].n_chunks))
        if wrong:
            raise StoreDamaged(f"the new corpus version {self.version} does not hold what this ingest wrote ({len(wrong)} papers, "
                               f"first {wrong[0]}); nothing was switched: run the ingest again")
        self.store.switch(self.version, self.target, hashes, self.previous)


class ServerStore:
    """One corpus (one collection prefix) on a Chroma server (see the module's docstring)."""

    def __init__(self, settings: Settings, connection: Connection, model_id: str, open_collection: Callable[[str, bool], Any],
                 build: Callable[[Pair, str], LexicalIndex], loaded: Callable[[LexicalLoad], None]):
        self.settings = settings
        self.connection = connection
        self.model_id = model_id
        self.where = str(settings.chroma_url)
        self._build = build
        self._loaded = loaded
        self.versions = Versions(connection, settings, open_collection)
        self.files = self.versions.files
        self.lease = ChromaLease(connection.client, settings.collection, settings.writer_lease, self.versions.where,
                                 lambda exc: store_error(settings, exc))
        found = self.files.read()
        pair = self.versions.open(self.versions.live_names(found.data), create=bool(found.problem))
        self.views = Views(View(pair, found))

    def cache_path(self, version: str) -> Any:
        """Where a version's BM25 is cached on this machine (disposable: Chroma has it)."""
        return self.settings.data_path / "cache" / f"{self.settings.collection}_v{version}.bm25"  # "_": never in a corpus name

    # -- what is served ------------------------------------------------------------------
    def view(self) -> View:
        return self.views.current()

    def pinned(self) -> AbstractContextManager[None]:
        return self.views.pinned()

    def follow(self) -> None:
        """Re-read the manifest every MANIFEST_TTL seconds and ready a new version in the background."""
        self.views.poll(self.files.read, self._ready, MANIFEST_TTL)

    def _ready(self, found: ManifestRead) -> View:
        pair = self.versions.open(self.versions.live_names(found.data), create=False)
        return View(pair, found, self.lexical(View(pair), found.data.version))

    def served_manifest(self) -> ManifestRead:
        return self.view().manifest or ManifestRead(Manifest(), "no manifest")

    def lexical(self, view: View, version: str) -> LexicalIndex:
        """This machine's cache, else Chroma's copy, else rebuilt from the version's chunks."""
        if not version:
            return empty_lexical()
        started = time.perf_counter()

        def rebuild() -> LexicalIndex:
            log.info("BM25 of version %s is not stored in Chroma (or damaged): rebuilding it from the chunks", version)
            return self._build(view.pair, version)

        lexical, source = self.versions.lexical(version, self.cache_path(version), rebuild)
        self._loaded(LexicalLoad(version, source, time.perf_counter() - started, len(lexical.chunk_ids)))
        return lexical

    def saved_lexical(self) -> tuple[LexicalIndex | None, str]:
        version = self.files.read().data.version
        return self.versions.stored_lexical(version), f"{self.versions.where}: BM25 of version {version}"

    def interrupted(self) -> bool:
        return False  # a Chroma server never serves a half-built version

    def paper_count(self) -> int | None:
        """The count of the version this process serves (which may not be the one the manifest names yet)."""
        found = self.view().manifest
        return None if found is None or found.problem else found.data.papers

    # -- one writer ----------------------------------------------------------------------
    @contextmanager
    def writer(self, on_wait: Notify | None = None) -> Iterator[None]:
        with self.lease.held(self.settings.writer_wait, on_wait):
            yield

    @contextmanager
    def try_writer(self) -> Iterator[bool]:
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
        return self.lease.status()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Readers never see a version being written: nothing to hold off."""
        yield

    # -- ingest and repair ---------------------------------------------------------------
    def live(self) -> Pair:
        """The version the manifest names now (not the one this process serves, which may be older)."""
        return self.versions.open(self.versions.live_names(self.files.read().data), create=True)

    def settle(self, existing: dict[str, StoredHashes]) -> None:
        """Nothing to write: a store from before versions (no manifest yet) gets one; a half-built version
        an interrupted ingest left is dropped."""
        found = self.files.read()
        if found.problem:
            self.switch(new_version(), self.live(), existing, Manifest())
        elif self.versions.pending():
            self.versions.retire_unused(found.data, keep_pending=False)
            self.versions.finish_pending()

    @contextmanager
    def stage(self, plan: Plan) -> Iterator[Staging]:
        """A new version; the finished papers of an interrupted ingest's version are copied into it first."""
        manifest = self.files.read().data
        live = self.versions.open(self.versions.live_names(manifest), create=True)
        self.versions.retire_unused(manifest)
        version, target, interrupted = self.versions.staging(manifest.version)
        stage = NewVersion(self, version, live, target, manifest)
        if interrupted is not None:
            hashes, held = interrupted.stored_hashes(), interrupted.chunk_ids_by_paper()
            stage.resumed = {pid: h for pid, h in hashes.items() if plan.wanted.get(pid) == (h.content_hash, h.embed_hash)
                             and held.get(pid, set()) == expected_chunk_ids(pid, h.n_chunks)}
            done = list(stage.resumed)
            for begin in range(0, len(done), 500):
                self.lease.verify()
                target.copy_from(interrupted, {pid: stage.resumed[pid] for pid in done[begin : begin + 500]}, {})
        yield stage
        if interrupted is not None:
            self.versions.drop(interrupted)


    def commit(self, ledger: dict[str, StoredHashes]) -> None:
        """check --repair: the version served, repaired in place, under a new version id."""
        self.switch(new_version(), self.view().pair, ledger, self.files.read().data)

    def switch(self, version: str, pair: Pair, ledger: dict[str, StoredHashes], previous: Manifest) -> None:
        """Serve `version`: its ledger and BM25 go into Chroma first, then the manifest that names it, in one write."""
        lexical = self._build(pair, version)
        self.files.write_ledger(Ledger(ledger, version))
        self.versions.blobs.put(f"bm25:{version}", version, lexical.to_bytes())
        before = previous.previous
        if previous.version:
            names = self.versions.live_names(previous)
            before = Previous(previous.version, names[0], names[1])
        manifest = previous.built(version, self.model_id, pair.papers.count(), pair.chunks.count(), previous=before,
                                  chunks_collection=pair.chunks.name, papers_collection=pair.papers.name)
        self.lease.verify()
        self.files.write(manifest)  # the switch
        self.versions.finish_pending()
        lexical.save_new(self.cache_path(version))
        self.views.served = View(pair, ManifestRead(manifest), lexical)

    def drop(self) -> None:
        """Every version, then the meta collection that names the corpus (its mark) last."""
        self.versions.drop_all()

    def family(self) -> list[Any]:
        return [self.versions.meta]
