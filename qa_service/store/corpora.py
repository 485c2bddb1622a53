"""Named corpora side by side, and the scope of one request: which corpora, under which metadata filter.

The default corpus is `settings.collection` (the seed corpus: with one corpus nothing changes).
Another, named by `ingest --corpus NAME`, is its own Index under the prefix NAME: embedded, the
pair of collections `NAME_chunks`, `NAME_papers` with its own manifest and BM25 files; with a
Chroma server, its own versions, `NAME_meta` and writer lease (versions.py), so each corpus
switches versions on its own. The list of corpora is read from the store's collections, so every
process (and every app worker of a Chroma server) sees the same one. All corpora of a process
share one connection (chroma.Connection: the client and the data dir's locks) and one embedding
function; embedded, after another process wrote, the connection reopens the client once for all of them.
Paper ids are unique across corpora: an ingest refuses ids that another corpus holds.
"""

from __future__ import annotations

import math
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any

from ..config import Settings
from ..errors import CorpusError, NotFound
from ..records import Paper
from .chroma import Connection
from .filters import NO_FILTER, MetadataFilter, author_key, normalize
from .index import Index, Notify
from .lexical import LexicalIndex
from .scope import (
    FAMILY,
    NAME_PATTERN,
    NAME_RE,
    NAMES_TTL,
    Kept,
    Known,
    Part,
    Scope,
    corpus_name,
    corpus_names,
)

__all__ = ["FAMILY", "NAME_PATTERN", "Corpora", "Kept", "Known", "Part", "Scope", "corpus_name", "corpus_names"]



class Corpora:
    """The corpora of one data dir (or Chroma server), opened on first use and kept for the process."""

    def __init__(self, settings: Settings, default: Index | None = None):
        self.settings = settings
        self.default_name = settings.collection
        self._indexes: dict[str, Index] = {}
        self._lock = threading.RLock()
        self._listed: tuple[float, list[str]] | None = None
        entries = max(1, settings.filter_cache_size)
        self._allowed = Kept(entries)  # per corpus version and filter: the paper ids it allows
        self._masks = Kept(entries)  # the same as a boolean per chunk of the version's BM25
        self._vectors = Kept(settings.filter_vector_cache_chunks, lambda entry: len(entry[0]))  # (ids, unit vectors)
        self._records: dict[str, tuple[Any, list[Paper]]] = {}
        self._known: dict[str, tuple[Any, Known]] = {}
        self._connection: Connection | None = None  # the first index's connection and embedding function serve every corpus
        self._embedder: Any = None
        if default is not None:
            self._adopt(self.default_name, default)

    # -- opening -----------------------------------------------------------------
    @property
    def default(self) -> Index:
        return self.open(self.default_name)

    def _adopt(self, name: str, index: Index) -> Index:
        if self._connection is None:
            self._connection, self._embedder = index.connection, index.embedder
        self._indexes[name] = index
        return index

    @property
    def connection(self) -> Connection:
        """The one connection every corpus of this process shares (made by the default corpus when none is open)."""
        return self._connection or self.default.connection

    def open(self, name: str) -> Index:
        """The index of corpus `name`, created (empty) when the store has none yet: for ingest."""
        with self._lock:
            if name in self._indexes:
                return self._indexes[name]
            settings = self.settings.replace(collection=name)
            index = Index(settings, embedder=self._embedder, connection=self._connection)  # one writer lock per process
            if name != self.default_name:
                self._claim(name, index)
            self._listed = None  # a corpus this process creates is listed at once
            return self._adopt(name, index)

    def _claim(self, name: str, index: Index) -> None:
        """Mark a named corpus's collections as this service's; refuse collections another service made.
        With a Chroma server the mark is on `NAME_meta`, the one collection a corpus keeps across versions."""
        for collection in index.store.family():
            metadata = dict(collection.metadata or {})
            owner = metadata.get(FAMILY)
            if owner == self.default_name:
                continue
            if owner is not None or collection.count():
                raise CorpusError(f"the store's collections {name}_chunks and {name}_papers belong to another service "
                                  f"({owner or 'not a qa-service corpus'}): choose another corpus name")
            collection.modify(metadata={**metadata, FAMILY: self.default_name})

    def names(self) -> list[str]:
        """The default corpus, then every other corpus the store holds, by name."""
        listed = self._listed
        if listed is not None and time.monotonic() - listed[0] < NAMES_TTL:
            return listed[1]
        stored = self._stored()
        names = [self.default_name, *sorted(name for name in stored if name != self.default_name and NAME_RE.fullmatch(name))]
        self._listed = (time.monotonic(), names)
        return names

    def _stored(self) -> set[str]:
        """The named corpora of this service whose two collections the store holds."""
        found = {name for name, metadata in self.connection.listed() if metadata.get(FAMILY) == self.default_name}
        kinds = ("meta",) if self.settings.chroma_url else ("chunks", "papers")
        bases = [{name[: -len(kind) - 1] for name in found if name.endswith(f"_{kind}")} for kind in kinds]
        return set.intersection(*bases)

    def opened(self) -> list[Index]:
        """The corpora this process has opened (no store round trip): what an answer may have drawn on."""
        with self._lock:
            return list(self._indexes.values())

    def each(self, read: Callable[[Index], Any]) -> dict[str, Any]:
        """`read` of every corpus, by name; one that cannot be read now (dropped a moment ago, say) is left out:
        for probes and scrapes, which report what they can."""
        found = {}
        for name in self.names():
            try:
                found[name] = read(self.open(name))
            except Exception:  # noqa: BLE001 - whatever the store raised for that corpus
                continue
        return found

    def get(self, name: str) -> Index:
        """An existing corpus's index; an unknown name is a 404 naming the corpora there are."""
        if name != self.default_name and name not in self.names():
            raise NotFound(f"there is no corpus {name!r}: the corpora are {', '.join(self.names())}",
                           code="unknown_corpus", param="corpus")
        return self.open(name)

    def scope(self, names: Sequence[str] | None = None, filter: MetadataFilter = NO_FILTER) -> Scope:
        """The corpora a request reads (every one when `names` is None) under its filter."""
        chosen = self.names() if names is None else list(names)
        return Scope(tuple(Part(name, self.get(name)) for name in chosen), filter, self)

    def follow(self, generation: str | None) -> None:
        """Notice other processes' writes (see Index.follow). Embedded: the one shared client is reopened for every
        corpus. Chroma server: each corpus polls its own manifest. A corpus dropped meanwhile is let go."""
        if self.settings.chroma_url:
            listed = set(self.names())
            for name, index in list(self._indexes.items()):
                if name in listed:
                    index.store.follow()
                else:
                    with self._lock:
                        self._indexes.pop(name, None)
            return
        if self._connection is None or not self._connection.follow(generation):
            return
        stored = self._stored()
        with self._lock:
            for name in list(self._indexes):
                if name != self.default_name and name not in stored:  # dropped by another process: not recreated
                    del self._indexes[name]
            self._listed = None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Around one request (Chroma server): each corpus it reads keeps one version throughout."""
        with ExitStack() as stack:
            for index in list(self._indexes.values()):
                stack.enter_context(index.pinned())
            yield

    # -- what the corpora hold ------------------------------------------------------
    def allowed(self, part: Part, filter: MetadataFilter) -> frozenset[str] | None:
        """The paper ids the filter's `where` selects in this corpus's paper records, cached per corpus version."""
        where = filter.where()
        if where is None:
            return None
        key = (part.name, part.index.stats().version, filter.key)
        kept = self._allowed.get(key)
        if kept is not None:
            return kept
        return self._allowed.put(key, part.index.pair.paper_ids(where))

    def mask(self, part: Part, filter: MetadataFilter, lexical: LexicalIndex) -> Any:
        """The chunks of `lexical` (its order) whose papers the filter allows, as booleans; kept per version and filter."""
        key = (part.name, lexical.version, filter.key)
        kept = self._masks.get(key)
        if kept is not None:
            return kept
        return self._masks.put(key, lexical.allow(self.allowed(part, filter) or frozenset()) > 0)

    def vectors(self, part: Part, filter: MetadataFilter, lexical: LexicalIndex, ids: list[str]) -> tuple[list[str], Any]:
        """The vectors of a filter's chunks (`ids`), unit length, read once per corpus version and filter and
        kept while they fit in `filter_vector_cache_chunks` (least recently used first out): read, 2,600
        chunks cost 97 ms; searched in memory, 0.1 ms, where Chroma's `ids` filter costs 14-29 ms a query."""
        key = (part.name, lexical.version, filter.key)
        kept = self._vectors.get(key)
        if kept is not None:
            return kept
        return self._vectors.put(key, part.index.pair.vectors(ids))

    def records(self, part: Part) -> list[Paper]:
        """Every paper of a corpus, metadata only (no text), kept per corpus version."""
        version = part.index.stats().version
        cached = self._records.get(part.name)
        if cached is None or cached[0] != version:
            cached = (version, part.index.list_papers())
            self._records[part.name] = cached
        return cached[1]

    def known(self, part: Part) -> Known:
        """The authors, venues and years a corpus's records name (normalised -> as written), kept per version."""
        version = part.index.stats().version
        cached = self._known.get(part.name)
        if cached is None or cached[0] != version:
            known = Known({}, {}, set())
            for paper in self.records(part):
                for author in paper.authors:
                    known.authors.setdefault(author_key(author), author)
                if paper.venue:
                    known.venues.setdefault(normalize(paper.venue), paper.venue)
                if paper.year:
                    known.years.add(paper.year)
            cached = (version, known)
            self._known[part.name] = cached
        return cached[1]

    def facets(self, part: Part) -> dict[str, dict[str, int]]:
        """The years and venues of a corpus with their paper counts: what the page offers as filters."""
        years: dict[str, int] = {}
        venues: dict[str, int] = {}
        for paper in self.records(part):
            if paper.year:
                years[str(paper.year)] = years.get(str(paper.year), 0) + 1
            if paper.venue:
                venues[paper.venue] = venues.get(paper.venue, 0) + 1
        return {"years": dict(sorted(years.items(), reverse=True)), "venues": dict(sorted(venues.items()))}

    def describe(self, name: str) -> dict:
        """One corpus as `qa-service corpora` and /api/corpora list it."""
        stats = self.get(name).stats()
        return {"name": name, "default": name == self.default_name, "papers": stats.papers, "chunks": stats.chunks,
                "version": stats.version, "built_at": stats.built_at, "embedding_model": stats.embedding_model}

    def idf(self, term: str) -> float:
        """A term's rarity over every corpus loaded (the same as one corpus's when there is one)."""
        lexicals = [index.lexical for index in list(self._indexes.values()) if index.lexical.papers]
        if len(lexicals) == 1:
            return lexicals[0].idf(term)
        papers = sum(lexical.papers for lexical in lexicals)
        df = sum(lexical.paper_df.get(term, 0) for lexical in lexicals)
        return math.log((papers + 1) / (df + 0.5))

    def expanded(self, question: str, share: float) -> list[tuple[str, str]]:
        """The other forms of the question's abbreviations, as the abstracts of the corpora loaded define them."""
        found = [form for index in list(self._indexes.values()) for form in index.lexical.expanded(question, share)]
        return list(dict.fromkeys(found))

    # -- writing ---------------------------------------------------------------------
    def check_unique(self, papers: Sequence[Paper], into: str) -> None:
        """Paper ids are unique across corpora: refuse, before anything is written, ids another corpus holds."""
        ids = [p.id for p in papers]
        for name in self.names():
            if name == into or not ids:
                continue
            taken: list[str] = []
            for begin in range(0, len(ids), 1000):
                taken += self.open(name).get_papers(ids[begin : begin + 1000], with_text=False)
            if taken:
                shown = ", ".join(sorted(taken)[:5]) + (", ..." if len(taken) > 5 else "")
                raise CorpusError(f"{len(taken)} paper id(s) of the input are already in corpus {name!r} ({shown}): paper ids "
                                  f"must be unique across corpora; give these papers other ids, or `qa-service drop {name}` first")

    @contextmanager
    def writer(self, on_wait: Notify | None = None) -> Iterator[None]:
        """The data dir's one writer, for every corpus at once (they share the lock)."""
        with self.default.writer(on_wait):
            yield

    def drop(self, name: str, on_wait: Notify | None = None) -> dict:
        """Remove a corpus: its collections, manifest, ledger, BM25 and sentence vectors. Returns what it held."""
        index = self.get(name)
        with self.writer(on_wait):
            held = self.describe(name)
            with index.writing():
                index.store.drop()
                shutil.rmtree(index.bm25_path, ignore_errors=True)
                index.sentences.path.unlink(missing_ok=True)  # its sentence vectors (store/sentences.py)
                for cached in index.settings.data_path.glob(f"cache/{name}_v*.bm25"):
                    shutil.rmtree(cached, ignore_errors=True)
            with self._lock:
                self._indexes.pop(name, None)
                self._listed = None
                self._records.pop(name, None)
                self._known.pop(name, None)
        return held
