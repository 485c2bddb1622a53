"""Question -> ranked papers with evidence chunks: dense + BM25 fused by reciprocal rank.

Recall first: k papers always come back, ranked; each is marked relevant when it clears
a bar that combines the dense cosine with how much of the question's rare-term weight
the paper contains (the cosine alone does not separate on-topic from off-topic
questions). Whether to answer is decided once, on the whole retrieval, in answerability.py.
"""

from __future__ import annotations

from .authors import AuthorBook
from .config import Settings
from .index import Index
from .lexical import LexicalIndex, content_terms
from .names import NameResolver
from .records import Evidence, PaperHit, Retrieval, paper_of


class Retriever:
    """Hybrid retrieval over an Index; `mode` 'dense' and 'bm25' exist for measuring."""

    def __init__(self, index: Index, settings: Settings):
        self.index = index
        self.settings = settings
        self._resolver: tuple[LexicalIndex, NameResolver] | None = None
        self._authors: tuple[LexicalIndex, AuthorBook] | None = None

    def names(self, lexical: LexicalIndex) -> NameResolver:
        """The name resolver for this lexical index, built once per corpus version, not per question."""
        cached = self._resolver
        if cached is None or cached[0] is not lexical:
            cached = (lexical, NameResolver(lexical.names, lexical.knows, self.settings))
            self._resolver = cached
        return cached[1]

    def author_book(self, lexical: LexicalIndex) -> AuthorBook:
        """The corpus's authors (paper metadata), indexed once per corpus version."""
        cached = self._authors
        if cached is None or cached[0] is not lexical:
            cached = (lexical, AuthorBook(lexical.authors))
            self._authors = cached
        return cached[1]

    def search(self, question: str, k: int | None = None, mode: str = "hybrid", texts: bool = True) -> list[PaperHit]:
        """The top-k papers, ranked, each marked relevant or not: nothing is silently dropped."""
        return self.retrieve(question, k, mode, texts).hits

    def retrieve(self, question: str, k: int | None = None, mode: str = "hybrid", texts: bool = True) -> Retrieval:
        """Recall first: k papers by fused rank, the papers the question names always among them.

        `texts=False` skips fetching full abstracts (search needs only evidence)."""
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
        found = Retrieval(question, [], *self.names(lexical).resolve(question), authors=self.author_book(lexical).find(question))
        named = list(dict.fromkeys(found.named_ids + found.authored_ids))  # "papers by X": X's papers, from metadata
        ordered = sorted(fused, key=lambda pid: -fused[pid])
        named_first = sorted(named, key=lambda pid: -fused.get(pid, 0.0))  # a named paper is never dropped
        candidates = list(dict.fromkeys(named_first + ordered))[: max(k, len(named_first))]
        labels = self._labels(candidates, lexical)
        coverage = lexical.coverage(content_terms(question), candidates)
        hits: list[PaperHit] = []
        for pid in candidates:
            if pid not in labels:
                continue
            hit = PaperHit(pid, labels[pid], fused.get(pid, 0.0), dense_best.get(pid, 0.0), sparse_best.get(pid, 0.0),
                           coverage[pid], named=pid in named, authors=lexical.authors.get(pid, []))
            hit.relevant = self.is_relevant(hit)
            hits.append(hit)
        self._attach_evidence(hits, records, chunk_rank)
        if texts and hits:
            papers = self.index.get_papers([h.paper_id for h in hits])
            for hit in hits:
                hit.text = papers[hit.paper_id].text
        found.hits = hits
        return found

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
