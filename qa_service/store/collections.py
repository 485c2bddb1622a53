"""The two collections of one corpus version, and every read and write the service makes on them.

The VectorStore part of the store (paper-qa's shape): put and delete a paper's chunks, query
by vector under a filter, read paper and chunk records. Both stores (embedded.py, server.py)
hand out a Pair; what differs between them is which Pair is served and how a new one is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..corpus.names import build_name_book, lowercase_words, paper_names
from ..records import Chunk, Paper, StoredHashes, chunk_id, paper_of
from .filters import FIELDS_VERSION, MARK, record_fields
from .lexical import LexicalIndex, empty_lexical
from .manifest import ManifestRead
from .metadata import (
    ChunkRecord,
    Metadata,
    chunk_from_store,
    chunk_metadata,
    chunk_paper,
    paper_from_store,
    paper_metadata,
    record_authors,
    record_label,
    stored_hashes,
    with_fields,
)

PAGE = 2000  # records per read when scanning a collection: memory stays flat at any corpus size
RELABEL_BATCH = 1000  # papers whose metadata is rewritten per call (nothing re-embedded)
OWN_VECTOR_HITS = 10  # a chunk looked up by its own vector must come back among this many


def expected_chunk_ids(paper_id: str, n_chunks: int) -> set[str]:
    return {chunk_id(paper_id, i) for i in range(n_chunks)}


def scan(collection: Any, include: list[str], page: int = PAGE) -> Iterable[dict[str, Any]]:
    """Every record of a collection, a page at a time."""
    offset = 0
    while True:
        batch = collection.get(limit=page, offset=offset, include=include)
        if not batch["ids"]:
            return
        yield batch
        offset += len(batch["ids"])


class Pair(NamedTuple):
    """The chunks collection (what is searched) and the papers collection (one record per paper, written
    after its chunks, so that a paper present is whole) of one corpus version."""

    chunks: Any
    papers: Any

    # -- reading -------------------------------------------------------------------------
    def stored_hashes(self) -> dict[str, StoredHashes]:
        """What the paper records say they hold, per paper id."""
        return {pid: stored_hashes(meta) for batch in scan(self.papers, ["metadatas"])
                for pid, meta in zip(batch["ids"], batch["metadatas"])}

    def chunk_ids_by_paper(self) -> dict[str, set[str]]:
        """The chunk ids held, per paper (ids only: no text, no vectors)."""
        found: dict[str, set[str]] = {}
        for batch in scan(self.chunks, []):
            for cid in batch["ids"]:
                found.setdefault(paper_of(cid), set()).add(cid)
        return found

    def marked(self) -> set[str]:
        """Papers whose records carry the current filter fields (older ones are rewritten by the next ingest)."""
        return set(self.papers.get(where={MARK: FIELDS_VERSION}, include=[])["ids"])

    def paper_ids(self, where: dict[str, Any]) -> frozenset[str]:
        """The papers whose records a filter's `where` (filters.py) selects."""
        return frozenset(self.papers.get(where=where, include=[])["ids"])

    def vectors(self, ids: Sequence[str]) -> tuple[list[str], np.ndarray]:
        """The stored vectors of chunks, unit length, one row each (a chunk the store lost is left out)."""
        found = self.chunks.get(ids=list(ids), include=["embeddings"])
        matrix = np.asarray(found["embeddings"], dtype=np.float32).reshape(len(found["ids"]), -1)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        return list(found["ids"]), matrix

    def get_papers(self, ids: Sequence[str], with_text: bool = True) -> dict[str, Paper]:
        if not ids:
            return {}
        found = self.papers.get(ids=list(ids), include=["documents", "metadatas"] if with_text else ["metadatas"])
        docs = found["documents"] if with_text else [None] * len(found["ids"])
        return {pid: paper_from_store(pid, doc, meta) for pid, doc, meta in zip(found["ids"], docs, found["metadatas"])}

    def list_papers(self, with_text: bool = False) -> list[Paper]:
        include = ["documents", "metadatas"] if with_text else ["metadatas"]
        papers: list[Paper] = []
        for batch in scan(self.papers, include):
            docs = batch["documents"] if with_text else [None] * len(batch["ids"])
            papers.extend(paper_from_store(pid, doc, meta) for pid, doc, meta in zip(batch["ids"], docs, batch["metadatas"]))
        return papers

    def get_chunks(self, ids: Sequence[str]) -> dict[str, ChunkRecord]:
        """Chunk records by id; one the store lost (no text or metadata) is left out."""
        if not ids:
            return {}
        found = self.chunks.get(ids=list(ids), include=["documents", "metadatas"])
        records = (chunk_from_store(cid, doc, meta) for cid, doc, meta in zip(found["ids"], found["documents"], found["metadatas"]))
        return {record.id: record for record in records if record is not None}

    def query(self, vector: Any, n: int, include: list[str], where: dict[str, Any] | None = None,
              ids: list[str] | None = None) -> Any:
        """The nearest chunks to a vector, restricted by a `where` (filters.py) or to `ids`."""
        return self.chunks.query(query_embeddings=[vector], n_results=n, include=include,
                                 **({"where": where} if where else {}), **({"ids": ids} if ids is not None else {}))

    def build_lexical(self, version: str, name_max_papers: int) -> LexicalIndex:
        """BM25 over the chunks as stored, with the labels, names and authors of the paper records."""
        ids, texts, pids = [], [], []
        for batch in scan(self.chunks, ["documents", "metadatas"]):
            for cid, doc, meta in zip(batch["ids"], batch["documents"], batch["metadatas"]):
                ids.append(cid)
                texts.append(doc)
                pids.append(chunk_paper(meta))
        labels, authors = {}, {}
        for batch in scan(self.papers, ["metadatas"]):
            for pid, meta in zip(batch["ids"], batch["metadatas"]):
                labels[pid] = record_label(pid, meta)
                if record_authors(meta):
                    authors[pid] = record_authors(meta)
        texts_by_paper: dict[str, list[str]] = {}
        for pid, text in zip(pids, texts):
            texts_by_paper.setdefault(pid, []).append(text)
        names = build_name_book({pid: paper_names(labels.get(pid, ""), chunks) for pid, chunks in texts_by_paper.items()},
                                name_max_papers, lowercase_words(texts))
        return LexicalIndex.build(ids, texts, pids, version, labels, names, authors) if ids else empty_lexical(version)

    # -- writing ---------------------------------------------------------------------------
    def put(self, papers: Sequence[Paper], chunks: Sequence[list[Chunk]], vectors: np.ndarray, embed_hashes: Sequence[str],
            held: dict[str, set[str]]) -> None:
        """Papers with their chunks and vectors: chunks first, then the record (with the mean of its chunk
        vectors); chunks a paper no longer has are dropped first."""
        obsolete = [cid for p, mine in zip(papers, chunks) for cid in held.get(p.id, set()) - {c.id for c in mine}]
        if obsolete:
            self.chunks.delete(ids=sorted(obsolete))
        flat = [c for mine in chunks for c in mine]
        self.chunks.upsert(ids=[c.id for c in flat], embeddings=vectors, documents=[c.text for c in flat],
                           metadatas=[chunk_metadata(c, fields) for p, mine in zip(papers, chunks)
                                      for fields in [record_fields(p)] for c in mine])
        paper_vectors, offset = [], 0
        for mine in chunks:
            mean = vectors[offset : offset + len(mine)].mean(axis=0)
            paper_vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
            offset += len(mine)
        self.papers.upsert(ids=[p.id for p in papers], embeddings=np.asarray(paper_vectors), documents=[p.text for p in papers],
                           metadatas=[paper_metadata(p, h, len(c)) for p, h, c in zip(papers, embed_hashes, chunks)])

    def relabel(self, papers: Sequence[Paper], hashes: dict[str, StoredHashes]) -> None:
        """New metadata (a title, a label, a year) for papers whose vectors stay: records and chunk fields."""
        for begin in range(0, len(papers), RELABEL_BATCH):
            batch = papers[begin : begin + RELABEL_BATCH]
            self.papers.update(ids=[p.id for p in batch],
                               metadatas=[paper_metadata(p, hashes[p.id].embed_hash, hashes[p.id].n_chunks) for p in batch])
            fields = [(cid, record_fields(p)) for p in batch for cid in sorted(expected_chunk_ids(p.id, hashes[p.id].n_chunks))]
            if fields:  # the filter fields travel with the chunks, where the dense side filters
                self.chunks.update(ids=[cid for cid, _ in fields], metadatas=[f for _, f in fields])

    def delete(self, paper_ids: Sequence[str], chunk_ids: Iterable[str]) -> None:
        """Papers and chunks gone: the chunks first, so that a paper record never outlives its chunks' removal."""
        chunks = sorted(set(chunk_ids))
        for begin in range(0, len(chunks), RELABEL_BATCH):
            self.chunks.delete(ids=chunks[begin : begin + RELABEL_BATCH])
        if paper_ids:
            self.papers.delete(ids=list(paper_ids))

    def copy_from(self, source: Pair, hashes: dict[str, StoredHashes], papers: dict[str, Paper]) -> None:
        """Records of unchanged papers, vectors and all, from another version: nothing is re-embedded.
        Chunks first and the paper record last, as an ingest writes them, so a paper present is whole. A
        paper of `papers` gets its metadata anew (an edited title or year), its chunks its filter fields."""
        chunk_ids = [cid for pid in hashes for cid in sorted(expected_chunk_ids(pid, hashes[pid].n_chunks))]
        if chunk_ids:
            got = source.chunks.get(ids=chunk_ids, include=["embeddings", "documents", "metadatas"])
            fields: dict[str, Metadata] = {pid: record_fields(p) for pid, p in papers.items()}
            metadatas = [with_fields(meta, fields.get(paper_of(cid), {})) for cid, meta in zip(got["ids"], got["metadatas"])]
            self.chunks.upsert(ids=got["ids"], embeddings=got["embeddings"], documents=got["documents"], metadatas=metadatas)
        if hashes:
            got = source.papers.get(ids=list(hashes), include=["embeddings", "documents", "metadatas"])
            metadatas = [paper_metadata(papers[pid], hashes[pid].embed_hash, hashes[pid].n_chunks) if pid in papers else meta
                         for pid, meta in zip(got["ids"], got["metadatas"])]
            self.papers.upsert(ids=got["ids"], embeddings=got["embeddings"], documents=got["documents"], metadatas=metadatas)

    # -- the vector index ------------------------------------------------------------------
    def unfound_stored(self, samples: int) -> list[str]:
        """Chunks, spread over the collection, that a query by their own stored vector does not find among the first
        OWN_VECTOR_HITS (no model needed: an ingest of nothing new loads none). Reading the vectors fails outright
        when they were lost with the vector index's files."""
        total = self.chunks.count()
        step = max(1, total // max(1, samples))
        missed = []
        for offset in range(0, total, step)[:samples]:
            sample = self.chunks.get(limit=1, offset=offset, include=["embeddings"])
            if sample["ids"] and sample["embeddings"] is not None and len(sample["embeddings"]):
                if sample["ids"][0] not in self.query(sample["embeddings"][0], min(OWN_VECTOR_HITS, total), [])["ids"][0]:
                    missed.append(sample["ids"][0])
        return missed

    def unfound(self, embed: Any, samples: int) -> list[str]:
        """Chunks, spread over the collection, that a query by their own text's vector does not find among the first
        OWN_VECTOR_HITS: the vector index disagrees with the records (HNSW files lost or truncated). Their text is
        embedded anew, so this holds also when the stored vectors are gone with the index."""
        total = self.chunks.count()
        if not total or samples <= 0:
            return []
        step = max(1, total // samples)
        picked: list[tuple[str, str]] = []
        for offset in range(0, total, step)[:samples]:
            sample = self.chunks.get(limit=1, offset=offset, include=["documents"])
            if sample["ids"] and sample["documents"] and sample["documents"][0]:
                picked.append((sample["ids"][0], sample["documents"][0]))
        if not picked:
            return []
        vectors = embed([text for _, text in picked])
        return [cid for (cid, _), vector in zip(picked, vectors)
                if cid not in self.query(vector, min(OWN_VECTOR_HITS, total), [])["ids"][0]]


@dataclass
class View:
    """What is served: one corpus version's collections, its manifest (server mode) and its BM25."""

    pair: Pair
    manifest: ManifestRead | None = None
    lexical: LexicalIndex = field(default_factory=empty_lexical)

    @property
    def chunks(self) -> Any:
        return self.pair.chunks

    @property
    def papers(self) -> Any:
        return self.pair.papers
