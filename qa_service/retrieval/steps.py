"""Retrieval as an ordered list of steps over one question's candidates.

The searches (retriever.py) fill a pool of candidate papers; each step then reads and changes it:
`FuseRanks` orders the pool by reciprocal rank, `CutToK` keeps k (the papers the question names
always among them), `BuildHits` labels and marks each kept paper, `AttachEvidence` adds its best
chunks. A reranker is one more step before `CutToK`: it reorders `candidates.order`, and with
`needs_texts = True` it finds the pool's abstracts in `candidates.texts`, fetched before it runs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable, Protocol, Sequence

from ..config import Settings
from ..records import Evidence, Paper, PaperHit, Retrieval, paper_of
from ..store.corpora import Part, Scope
from ..store.lexical import content_terms
from ..store.spelling import Respelling
from ..store.metadata import ChunkRecord

log = logging.getLogger(__name__)


@dataclass
class Candidates:
    """What retrieval knows about one question, handed from step to step: the pool, then the hits."""

    question: str
    k: int
    scope: Scope
    found: Retrieval                # the names and authors the question resolved to; `hits` is set at the end
    owner: dict[str, Part]          # paper id -> the corpus that holds it
    dense: list[tuple[str, float]]  # chunk id, cosine: the dense side, best first
    sparse: list[tuple[str, float]]  # chunk id, BM25 score: the lexical side, best first
    named: list[str]                # the papers the question names, and those of the authors it names: never cut
    chunk_rank: dict[str, float] = field(default_factory=dict)  # chunk id -> fused rank (orders a paper's evidence)
    dense_best: dict[str, float] = field(default_factory=dict)  # paper id -> its best chunk's cosine
    sparse_best: dict[str, float] = field(default_factory=dict)  # paper id -> its best chunk's BM25 score
    fused: dict[str, float] = field(default_factory=dict)  # paper id -> fused score (PaperHit.score)
    order: list[str] = field(default_factory=list)  # the candidate papers, best first (cut to k by CutToK)
    texts: dict[str, str] = field(default_factory=dict)  # paper id -> abstract, for the steps that need them
    papers: dict[str, Paper] = field(default_factory=dict)  # paper id -> its record (title, keywords), read with `texts`
    hits: list[PaperHit] = field(default_factory=list)

    def fetch_texts(self, paper_ids: Sequence[str]) -> None:
        """The abstracts of these papers into `texts`, one store read per corpus for those not yet read."""
        missing = [pid for pid in paper_ids if pid not in self.texts and pid in self.owner]
        for part, ids in by_part(missing, self.owner):
            read = part.index.get_papers(ids)
            self.papers.update(read)
            self.texts.update({pid: paper.text for pid, paper in read.items()})


class RetrievalStep(Protocol):
    """One step over the candidates; `needs_texts`: the candidates' abstracts are fetched before it runs."""

    needs_texts: bool

    def __call__(self, candidates: Candidates, /) -> None: ...


class FuseRanks:
    """Each side's paper ranking (by best chunk), fused by reciprocal rank; the pool ordered by it."""

    needs_texts = False

    def __init__(self, rrf_k: int):
        self.rrf_k = rrf_k

    def __call__(self, c: Candidates) -> None:
        best: list[dict[str, float]] = [{}, {}]
        for side, ranked in enumerate((c.dense, c.sparse)):
            for rank, (cid, score) in enumerate(ranked):
                best[side].setdefault(paper_of(cid), score)
                c.chunk_rank[cid] = c.chunk_rank.get(cid, 0.0) + 1.0 / (self.rrf_k + rank)
        c.dense_best, c.sparse_best = best
        for ranking in (list(c.dense_best), list(c.sparse_best)):
            for rank, pid in enumerate(ranking):
                c.fused[pid] = c.fused.get(pid, 0.0) + 1.0 / (self.rrf_k + rank)
        c.order = sorted(c.fused, key=lambda pid: -c.fused[pid])


class CutToK:
    """The first k of the pool, after the papers the question names (best fused first): a named one is never dropped."""

    needs_texts = False

    def __call__(self, c: Candidates) -> None:
        named_first = sorted(c.named, key=lambda pid: -c.fused.get(pid, 0.0))
        c.order = list(dict.fromkeys(named_first + c.order))[: max(c.k, len(named_first))]


class BuildHits:
    """A hit per kept paper that has a label: its scores, the share of the question's rare terms it holds,
    and whether it is relevant (`relevant`, the retriever's bar)."""

    needs_texts = False

    def __init__(self, relevant: Callable[[PaperHit], bool], respell: Respelling | None = None):
        self.relevant = relevant
        self.respell = respell

    def __call__(self, c: Candidates) -> None:
        labels = _labels(c.order, c.owner)
        coverage = _coverage(c.question, c.order, c.owner, self.respell)
        c.hits = []
        for pid in c.order:
            if pid not in labels:
                continue
            part = c.owner[pid]
            hit = PaperHit(pid, labels[pid], c.fused.get(pid, 0.0), c.dense_best.get(pid, 0.0), c.sparse_best.get(pid, 0.0),
                           coverage[pid], named=pid in c.named, corpus=part.name, authors=part.index.lexical.authors.get(pid, []))
            hit.relevant = self.relevant(hit)
            c.hits.append(hit)


class AttachEvidence:
    """Each hit's best chunks (their text and offsets), fetched in one call per corpus."""

    needs_texts = False

    def __init__(self, limit: int = 3):
        self.limit = limit

    def __call__(self, c: Candidates) -> None:
        chosen = {}
        for hit in c.hits:
            mine = sorted((cid for cid in c.chunk_rank if paper_of(cid) == hit.paper_id), key=lambda cid: -c.chunk_rank[cid])
            chosen[hit.paper_id] = mine[: self.limit]
        records: dict[str, ChunkRecord] = {}
        wanted = [cid for ids in chosen.values() for cid in ids]
        for part, ids in by_part(wanted, c.owner, key=paper_of):
            found = part.index.get_chunks(ids)
            records.update(found)
            lost = [cid for cid in ids if cid not in found]
            if lost:  # served without them; /readyz and `qa-service check` name the damage
                log.warning("corpus %s: the index names %d chunks the store does not hold (%s): run `qa-service check --repair`",
                            part.name, len(lost), lost[0])
        for hit in c.hits:
            hit.evidence = [
                Evidence(cid, records[cid].text, records[cid].start, records[cid].end)
                for cid in chosen[hit.paper_id] if cid in records
            ]


def default_steps(settings: Settings, relevant: Callable[[PaperHit], bool]) -> list[RetrievalStep]:
    """Today's retrieval: fuse, cut to k, label and mark, attach evidence (a reranker goes before the cut)."""
    respell = Respelling(settings) if settings.respell_zipf else None
    return [FuseRanks(settings.rrf_k), CutToK(), BuildHits(relevant, respell), AttachEvidence()]


def run_steps(steps: Iterable[RetrievalStep], candidates: Candidates) -> Candidates:
    """Each step in order; before one that reads abstracts, those of the papers still in play are fetched."""
    for step in steps:
        if step.needs_texts:
            candidates.fetch_texts(candidates.order)
        step(candidates)
    return candidates


def _labels(paper_ids: list[str], owner: dict[str, Part]) -> dict[str, str]:
    """Labels from memory (kept with BM25); the store only for papers newer than BM25."""
    labels: dict[str, str] = {}
    for part, ids in by_part(paper_ids, owner):
        known = part.index.lexical.labels
        labels.update({pid: known[pid] for pid in ids if pid in known})
        missing = [pid for pid in ids if pid not in known]
        if missing:
            labels.update({pid: paper.label for pid, paper in part.index.get_papers(missing, with_text=False).items()})
    return labels


def _coverage(question: str, paper_ids: list[str], owner: dict[str, Part], respell: Respelling | None) -> dict[str, float]:
    """Share of the question's rare-term weight each paper holds, the terms as each corpus spells them (spelling.py)."""
    terms = content_terms(question)
    coverage: dict[str, float] = {}
    for part, ids in by_part(paper_ids, owner):
        lexical = part.index.lexical
        coverage.update(lexical.coverage(lexical.respelt(question, terms, respell) if respell else terms, ids))
    return coverage


def _same(item: str) -> str:
    return item


def by_part(items: Iterable[str], owner: dict[str, Part], key: Callable[[str], str] = _same) -> list[tuple[Part, list[str]]]:
    """Ids grouped by the corpus that holds them (a paper id, or a chunk id with `key=paper_of`), in first-seen order."""
    groups: dict[str, tuple[Part, list[str]]] = {}
    for item in items:
        part = owner[key(item)]
        groups.setdefault(part.name, (part, []))[1].append(item)
    return list(groups.values())
