"""`qa-service check [--repair]`: the store verified against the manifest and its ledger, and
repaired paper by paper.

What is checked: the SQLite file, the manifest, every paper record (its text and metadata
against its own content hash, and against the ledger), each paper's chunks (all there,
none extra, text and offsets as chunking the stored text gives them, a finite vector),
stray chunks of no paper, the BM25 files (sound, built for the manifest's version, over
exactly the stored chunks), the manifest's counts against the store's, and queries: sample
chunks looked up by their own text's vector must come back (a lost or truncated HNSW index
still answers, wrongly; SQLite alone cannot tell). A paper whose record is sound is repaired
from that record; one that is missing, or whose record is damaged, needs the corpus files. A
vector index that does not find its own chunks is rebuilt whole: every paper embedded anew
from its record into collections made anew (ingest.py's rebuild).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import QAError
from ..records import Paper, StoredHashes
from .chroma import chroma_path, sqlite_damage
from .collections import expected_chunk_ids, scan
from .filters import record_fields
from .index import PROBE, Index
from .manifest import Ledger
from .metadata import chunk_from_store, filter_fields, paper_from_store, stored_hashes

UNREAD = [1.0]  # a chunk's vector when the stored vectors cannot be read (the finding says so once)
SAMPLE_QUERIES = 8  # chunks looked up by their own text's vector: each must come back among the first ten


@dataclass(frozen=True)
class Finding:
    """One thing wrong: the part (store, manifest, ledger, paper, chunks, bm25, query), what, and why."""

    part: str
    subject: str
    problem: str

    def __str__(self) -> str:
        return f"{self.part}: {self.subject}: {self.problem}"


@dataclass
class CheckReport:
    papers: int = 0
    chunks: int = 0
    findings: list[Finding] = field(default_factory=list)
    reembed: set[str] = field(default_factory=set)  # sound record, wrong chunks: re-embedded from the record
    lost: set[str] = field(default_factory=set)  # missing, or record damaged: needs the corpus files
    strays: set[str] = field(default_factory=set)  # chunk ids of no paper
    rebuild: bool = False  # manifest, ledger or BM25 to write anew
    vectors: bool = False  # the vector index does not find its own chunks: every paper re-embedded from its record

    @property
    def ok(self) -> bool:
        return not self.findings

    def advice(self) -> str:
        """What to run: the corpus files are needed only for papers the store cannot give back."""
        if self.lost:
            return f"{_count(len(self.findings), 'problem')}: `qa-service check --repair PATHS` repairs them (PATHS: the corpus files, for {_count(len(self.lost), 'paper')} the store cannot give back)"
        return f"{_count(len(self.findings), 'problem')}: `qa-service check --repair` repairs them"

    def add(self, part: str, subject: str, problem: str) -> None:
        self.findings.append(Finding(part, subject, problem))


def check_store(index: Index) -> CheckReport:
    """Everything `check` verifies; the caller holds the writer lock, so nothing moves meanwhile."""
    report = CheckReport()
    settings = index.settings
    if not settings.chroma_url:
        damage = sqlite_damage(chroma_path(settings) / "chroma.sqlite3")
        if damage:
            report.add("store", str(chroma_path(settings)), f"SQLite finds it damaged ({damage}): move it aside and run `qa-service ingest`")
            return report
    files = index.files
    manifest = files.read()
    ledger = files.read_ledger()
    if manifest.problem and not files.exists() and ledger is None and not index.papers.count() and not index.chunks.count():
        return report  # an empty corpus (never ingested, or dropped): nothing to disagree
    if manifest.problem:
        report.add("manifest", files.where, manifest.problem)
    elif not manifest.data.ready:
        report.add("manifest", files.where, "an ingest was interrupted (state 'ingesting'): run it again, or repair")
    report.rebuild = bool(manifest.problem) or not manifest.data.ready
    if ledger is None:
        report.add("ledger", files.ledger_where, "missing or unreadable: the store is checked against its own records")
        report.rebuild = True
    held = index.chunk_ids_by_paper()
    records = _check_records(index, report, ledger.papers if ledger else {})
    _check_chunks(index, report, records, held)
    report.papers, report.chunks = len(records), sum(len(ids) for ids in held.values())
    if not report.rebuild:
        _check_counts(index, report)
        _check_lexical(index, report, manifest.data.version, held)
    _check_queries(index, report)
    return report


def _check_counts(index: Index, report: CheckReport) -> None:
    """The manifest's paper and chunk counts (what /healthz reports before the store is touched) against the store's."""
    manifest = index.manifest()
    stored = (index.papers.count(), index.chunks.count())
    if (manifest.papers, manifest.chunks) != stored:
        report.add("manifest", index.files.where, f"says {manifest.papers} papers and {manifest.chunks} chunks, "
                                                  f"the store holds {stored[0]} and {stored[1]}")
        report.rebuild = True


def _check_records(index: Index, report: CheckReport, ledger: dict[str, StoredHashes]) -> dict[str, StoredHashes]:
    """Each paper record against its own hashes and the ledger; returns what the sound records hold."""
    records: dict[str, StoredHashes] = {}
    for batch in scan(index.papers, ["documents", "metadatas"]):
        for pid, text, meta in zip(batch["ids"], batch["documents"], batch["metadatas"]):
            stored = stored_hashes(meta)
            try:
                paper = paper_from_store(pid, text or "", meta)
            except (ValueError, TypeError):
                paper = None
            if paper is None or paper.content_hash != stored.content_hash or index.embed_hash(paper) != stored.embed_hash:
                report.add("paper", pid, "its record does not match its content hash (text or metadata damaged)")
                report.lost.add(pid)
                continue
            records[pid] = stored
            if filter_fields(meta) != filter_fields(record_fields(paper)):
                report.add("paper", pid, "its filter fields (year, venue, authors, keywords) are missing or differ from its record")
                report.reembed.add(pid)
            expected = ledger.get(pid)
            if ledger and expected is None:
                report.add("paper", pid, "in the store but not in the manifest's ledger")
                report.rebuild = True
            elif expected is not None and expected != stored:
                report.add("paper", pid, "differs from the manifest's ledger (another writer changed it)")
                report.rebuild = True
    for pid in sorted(set(ledger) - set(records) - report.lost):
        report.add("paper", pid, "in the manifest's ledger but missing from the store")
        report.lost.add(pid)
    return records


def _check_chunks(index: Index, report: CheckReport, records: dict[str, StoredHashes], held: dict[str, set[str]]) -> None:
    """Every paper's chunks there and nothing else; their text, offsets and vectors as its record implies."""
    for pid, stored in sorted(records.items()):
        have, want = held.get(pid, set()), expected_chunk_ids(pid, stored.n_chunks)
        if have != want:
            extra = f", {len(have - want)} extra" if have - want else ""
            report.add("chunks", pid, f"{len(have & want)} of {len(want)} chunks in the store{extra}")
            report.reembed.add(pid)
    for pid in sorted(set(held) - set(records) - report.lost):
        report.add("chunks", pid, f"{_count(len(held[pid]), 'chunk')} of no paper")
        report.strays |= held[pid]
    papers = index.get_papers(sorted(set(records) - report.reembed))
    expected = {c.id: c for paper in papers.values() for c in index.chunk(paper)}
    for batch in _chunk_batches(index, report):
        for cid, text, meta, vector in zip(batch["ids"], batch["documents"], batch["metadatas"], batch["embeddings"]):
            chunk = expected.get(cid)
            if chunk is None or chunk.paper_id in report.reembed:
                continue
            record = chunk_from_store(cid, text, meta)
            where = (record.paper_id, record.start, record.end) if record else None
            sound_vector = vector is not None and len(vector) and bool(np.all(np.isfinite(vector))) and float(np.linalg.norm(vector)) > 0
            fields = filter_fields(meta) == filter_fields(record_fields(papers[chunk.paper_id]))
            if text != chunk.text or where != (chunk.paper_id, chunk.start, chunk.end) or not sound_vector or not fields:
                report.add("chunks", chunk.paper_id, f"chunk {cid} differs from its paper's text or filter fields, or has no sound vector")
                report.reembed.add(chunk.paper_id)


def _check_lexical(index: Index, report: CheckReport, version: str, held: dict[str, set[str]]) -> None:
    lexical, where = index.saved_lexical()
    stored = {cid for ids in held.values() for cid in ids}
    if lexical is None:
        report.add("bm25", where, "missing or damaged (a file does not match its checksum or does not load)")
    elif lexical.version != version:
        report.add("bm25", where, f"built for version {lexical.version}, the manifest says {version}")
    elif set(lexical.chunk_ids) != stored:
        report.add("bm25", where, f"covers {len(lexical.chunk_ids)} chunks, the store holds {len(stored)}")
    else:
        return
    report.rebuild = True


def _chunk_batches(index: Index, report: CheckReport) -> Iterator[dict[str, Any]]:
    """Every chunk with its vector; when the vectors cannot be read (lost with the vector index), with none."""
    try:
        yield from scan(index.chunks, ["documents", "metadatas", "embeddings"])
    except QAError as exc:
        report.add("query", "stored vectors", f"cannot be read ({exc.message})")
        report.vectors = True
        for batch in scan(index.chunks, ["documents", "metadatas"]):
            yield {**batch, "embeddings": [UNREAD] * len(batch["ids"])}


def _check_queries(index: Index, report: CheckReport) -> None:
    """The vector index answers with stored chunks, and finds sample chunks by their own text's vector."""
    try:
        if not index.chunks.count():
            return
        probe = index.embedder.embed_query([PROBE])[0]
        found = index.pair.query(probe, min(5, index.chunks.count()), ["metadatas"])
        if not found["ids"][0] or any(meta is None for meta in found["metadatas"][0]):
            report.add("query", "test query", "the vector index returns chunks the store does not hold")
            report.vectors = True
        for cid in index.pair.unfound(index.embedder, SAMPLE_QUERIES):
            report.add("query", cid, "not found by its own vector: the vector index disagrees with the store")
            report.vectors = True
    except QAError as exc:
        report.add("query", "test query", exc.message)
        report.vectors = True


def repair_store(index: Index, report: CheckReport, corpus: Sequence[Paper] = (), say: Callable[[str], None] = print) -> None:
    """Re-embed exactly the damaged papers, drop stray chunks, write a new manifest, ledger and BM25.

    The caller holds the writer lock and made `report` under it."""
    by_id = {p.id: p for p in corpus}
    recoverable = sorted(pid for pid in report.lost if pid in by_id)
    if report.vectors:
        _rebuild_vectors(index, report, by_id, recoverable, say)
        return
    held = index.chunk_ids_by_paper()
    with index.writing():
        if report.strays:
            index.chunks.delete(ids=sorted(report.strays))
            say(f"removed {_count(len(report.strays), 'chunk')} of no paper")
        from_store = index.get_papers(sorted(report.reembed - report.lost))
        todo = list(from_store.values()) + [by_id[pid] for pid in recoverable]
        size = max(1, index.settings.ingest_batch_papers)
        for begin in range(0, len(todo), size):
            index.write_papers(todo[begin : begin + size], held)
        if todo:
            say(f"re-embedded {_count(len(todo), 'paper')}: {', '.join(p.id for p in todo)}")
        ledger = _still_asked(index, report, recoverable, index.stored_hashes())
        index.finish_write(ledger)
        say(f"wrote a new manifest, ledger and BM25 index ({_count(len(ledger), 'paper')})")
    _unrepaired(report, recoverable, say)


def _rebuild_vectors(index: Index, report: CheckReport, by_id: dict[str, Paper], recoverable: list[str],
                     say: Callable[[str], None]) -> None:
    """Every paper embedded anew, from its sound record or the corpus files, into collections made anew."""
    papers = list(index.get_papers(sorted(set(index.stored_hashes()) - report.lost)).values()) + [by_id[pid] for pid in recoverable]
    summary = index.ingest(papers, sync=True, rebuild=True)
    say(f"rebuilt the vector index: re-embedded {_count(summary.papers, 'paper')} ({summary.chunks} chunks) from the store's records"
        + (f" and the corpus files ({len(recoverable)})" if recoverable else ""))
    ledger = _still_asked(index, report, recoverable, index.stored_hashes())
    if len(ledger) > summary.papers:
        index.files.write_ledger(Ledger(ledger, index.manifest().version))
    _unrepaired(report, recoverable, say)


def _still_asked(index: Index, report: CheckReport, recoverable: list[str], ledger: dict[str, StoredHashes]) -> dict[str, StoredHashes]:
    """The ledger of what the store holds, plus the papers still missing: it keeps asking for them."""
    old = index.files.read_ledger()
    for pid in report.lost - set(recoverable):
        if old and pid in old.papers and pid not in ledger:
            ledger[pid] = old.papers[pid]
    return ledger


def _unrepaired(report: CheckReport, recoverable: list[str], say: Callable[[str], None]) -> None:
    for pid in sorted(report.lost - set(recoverable)):
        say(f"cannot repair {pid} from the store: pass the corpus files (`qa-service check --repair PATHS`) or run `qa-service ingest`")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
