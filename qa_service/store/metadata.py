"""What the store writes beside each paper and each chunk as Chroma metadata, typed.

The one module that reads these records' keys: everything else gets a Paper, a StoredRecord
(what a paper record says it holds) or a ChunkRecord. A paper record carries the paper's
fields, its hashes and chunk count, and the filter fields (filters.record_fields); a chunk
record its paper, position, offsets and the same filter fields (the dense side filters there).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..records import Chunk, Paper, StoredHashes
from .filters import record_fields

Metadata = dict[str, Any]


@dataclass(frozen=True)
class ChunkRecord:
    """A chunk as stored: its text and where it lies in its paper's text."""

    id: str
    paper_id: str
    position: int
    start: int
    end: int
    text: str


def paper_metadata(paper: Paper, embed_hash: str, n_chunks: int) -> Metadata:
    """A paper record's metadata: what is shown, what the vectors depend on, and the filter fields."""
    return {
        "label": paper.label, "title": paper.title, "source": paper.source, "abstract": paper.abstract,
        "authors": json.dumps(paper.authors), "keywords": json.dumps(paper.keywords), "year": paper.year or 0,
        "venue": paper.venue, "url": paper.url, "content_hash": paper.content_hash,
        "embed_hash": embed_hash, "n_chunks": n_chunks,
        **record_fields(paper),  # None removes a field the paper no longer has (Chroma merges metadata)
    }


def chunk_metadata(chunk: Chunk, fields: Metadata) -> Metadata:
    """A chunk record's metadata: its paper, place and offsets, and its paper's filter fields."""
    return {"paper_id": chunk.paper_id, "position": chunk.position, "start": chunk.start, "end": chunk.end, **fields}


def stored_hashes(meta: Mapping[str, Any] | None) -> StoredHashes:
    """What a paper record says it holds (empty hashes for a record without metadata)."""
    meta = meta or {}
    return StoredHashes(str(meta.get("content_hash", "")), str(meta.get("embed_hash", "")), int(meta.get("n_chunks") or 0))


def paper_from_store(pid: str, text: str | None, meta: Mapping[str, Any] | None) -> Paper:
    """The paper a record holds; without text (metadata only) when `text` is None."""
    meta = meta or {}
    return Paper(
        id=pid, abstract=meta.get("abstract", text) if text is not None else "", text=text or "",
        title=meta.get("title", ""), label=meta.get("label", pid), source=meta.get("source", ""),
        authors=json.loads(meta.get("authors") or "[]"), year=meta.get("year") or None, venue=meta.get("venue", ""),
        url=meta.get("url", ""), keywords=json.loads(meta.get("keywords") or "[]"),
    )


def chunk_from_store(cid: str, text: str | None, meta: Mapping[str, Any] | None) -> ChunkRecord | None:
    """A chunk record, or None when the store lost its text or metadata."""
    if text is None or meta is None:
        return None
    return ChunkRecord(cid, str(meta.get("paper_id", "")), int(meta.get("position") or 0), int(meta.get("start") or 0),
                       int(meta.get("end") or 0), text)


def chunk_paper(meta: Mapping[str, Any] | None) -> str:
    """The paper a chunk record names ('' when its metadata is lost)."""
    return str((meta or {}).get("paper_id", ""))


def record_label(pid: str, meta: Mapping[str, Any] | None) -> str:
    return str((meta or {}).get("label", pid))


def record_authors(meta: Mapping[str, Any] | None) -> list[str]:
    raw = (meta or {}).get("authors")
    return list(json.loads(raw)) if raw not in (None, "", "[]") else []


def filter_fields(meta: Mapping[str, Any] | None) -> Metadata:
    """The filter fields a record holds (None for an absent one): what filtered search reads."""
    meta = meta or {}
    return {key: meta.get(key) for key in record_fields(Paper("", "", ""))}


def with_fields(meta: Mapping[str, Any] | None, fields: Mapping[str, Any]) -> Metadata:
    """A record's metadata with its filter fields replaced (an absent field dropped)."""
    return {k: v for k, v in {**(meta or {}), **fields}.items() if v is not None}
