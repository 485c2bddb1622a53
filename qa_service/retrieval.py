"""Question -> ranked papers with evidence chunks: dense + BM25 fused by reciprocal rank.

A paper is kept only when it clears a relevance floor that combines the dense cosine
with how much of the question's rare-term weight the paper contains: the cosine alone
does not separate answerable from unanswerable questions (see FINDINGS.md).
"""

from __future__ import annotations

import re
from typing import Callable

from .config import Settings
from .index import Index
from .labels import is_name_like, question_names
from .lexical import LexicalIndex, analyze, content_terms
from .records import Evidence, Paper, PaperHit, paper_of


def _named_papers(names: set[str], candidates: list[str], labels: dict[str, str], lexical: LexicalIndex,
                  text: Callable[[str], str]) -> set[str]:
    """The candidates the question names: by label, or by a name-shaped token in their text.

    A one-term name (RouterArena) is looked up in the BM25 matrix; a name BM25 splits
    (GPT-5, CUDA-L1) is matched whole against the papers' text, fetched only then."""
    lowered = {n.lower() for n in names}
    named = {pid for pid in candidates if labels.get(pid, "").lower() in lowered}
    for name in (n for n in names if is_name_like(n)):
        terms = analyze(name)
        if len(terms) == 1 and terms[0] == name.lower():
            present = lexical.presence(set(terms), candidates)[terms[0]]
            named.update(pid for pid, hit in zip(candidates, present) if hit)
        else:
            pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
            named.update(pid for pid in candidates if pattern.search(text(pid)))
    return named


class Retriever:
    """Hybrid retrieval over an Index; `mode` 'dense' and 'bm25' exist for measuring."""

    def __init__(self, index: Index, settings: Settings):
        self.index = index
        self.settings = settings

    def search(
        self, question: str, k: int | None = None, mode: str = "hybrid", floor: bool = True, texts: bool = True
    ) -> list[PaperHit]:
        """Top-k papers; `texts=False` skips fetching full abstracts (search needs only evidence)."""
        k = k or self.settings.retrieval_k
        n = max(self.settings.candidate_chunks, 8 * k)
        lexical = self.index.load_lexical()
        dense = self.index.dense_chunks(question, n) if mode != "bm25" else []
        sparse = lexical.search(question, n) if mode != "dense" else []
        records = {cid: rec for cid, _, rec in dense}
        chunk_rank: dict[str, float] = {}
        best: list[dict[str, float]] = [{}, {}]
        for side, ranked in enumerate(([(cid, cos) for cid, cos, _ in dense], sparse)):
            for rank, (cid, score) in enumerate(ranked):
                best[side].setdefault(paper_of(cid), score)
                chunk_rank[cid] = chunk_rank.get(cid, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        dense_best, sparse_best = best
        fused: dict[str, float] = {}
        for ranking in (list(dense_best), list(sparse_best)):
            for rank, pid in enumerate(ranking):
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        ordered = sorted(fused, key=lambda pid: -fused[pid])
        candidates = ordered[: max(k * 3, 10)] if floor else ordered[:k]
        labels = self._labels(candidates, lexical)
        coverage = lexical.coverage(content_terms(question), candidates)
        cache: dict[str, Paper] = {}
        named = _named_papers(question_names(question), candidates, labels, lexical, lambda pid: self._text(pid, candidates, cache))
        hits: list[PaperHit] = []
        for pid in candidates:
            if pid not in labels:
                continue
            hit = PaperHit(pid, labels[pid], fused[pid], dense_best.get(pid, 0.0), sparse_best.get(pid, 0.0),
                           coverage[pid], named=pid in named)
            if floor and not (hit.named or hit.dense >= self.settings.weak_dense_floor):
                continue
            hits.append(hit)
            if len(hits) == k:
                break
        if floor and hits and not any(self.is_relevant(h) for h in hits):
            return []
        self._attach_evidence(hits, records, chunk_rank)
        if texts and hits:
            papers = cache or self.index.get_papers([h.paper_id for h in hits])  # reuse texts a name check fetched
            for hit in hits:
                hit.text = papers[hit.paper_id].text
        return hits

    def _text(self, paper_id: str, candidates: list[str], cache: dict[str, Paper]) -> str:
        """A candidate's text, all candidates fetched in one call the first time one is needed."""
        if not cache:
            cache.update(self.index.get_papers(candidates))
        paper = cache.get(paper_id)
        return paper.text if paper else ""

    def _labels(self, paper_ids: list[str], lexical: LexicalIndex) -> dict[str, str]:
        """Labels from memory (kept with BM25); the store only for papers newer than BM25."""
        labels = {pid: lexical.labels[pid] for pid in paper_ids if pid in lexical.labels}
        missing = [pid for pid in paper_ids if pid not in labels]
        if missing:
            labels.update({pid: paper.label for pid, paper in self.index.get_papers(missing, with_text=False).items()})
        return labels

    def _attach_evidence(self, hits: list[PaperHit], records: dict[str, dict], rank: dict[str, float], limit: int = 3) -> None:
        """Each hit's best chunks, fetched in one call for those the dense side did not return."""
        chosen = {}
        for hit in hits:
            mine = sorted((cid for cid in rank if paper_of(cid) == hit.paper_id), key=lambda cid: -rank[cid])
            chosen[hit.paper_id] = mine[:limit]
        missing = [cid for ids in chosen.values() for cid in ids if cid not in records]
        records = {**records, **self.index.get_chunks(missing)}
        for hit in hits:
            hit.evidence = [
                Evidence(cid, records[cid]["text"], int(records[cid]["start"]), int(records[cid]["end"]))
                for cid in chosen[hit.paper_id] if cid in records
            ]

    def is_relevant(self, hit: PaperHit) -> bool:
        """Does this hit show the question is about the corpus at all?"""
        s = self.settings
        if hit.named or hit.dense >= s.dense_floor:
            return True
        return hit.dense >= s.weak_dense_floor and hit.coverage >= s.lexical_floor
