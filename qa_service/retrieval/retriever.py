"""Question -> ranked papers with evidence chunks: dense + BM25 fused by reciprocal rank.

Recall first: k papers always come back, ranked; each is marked relevant when it clears
a bar that combines the dense cosine with how much of the question's rare-term weight
the paper contains (the cosine alone does not separate on-topic from off-topic
questions). Whether to answer is decided once, on the whole retrieval, in answerability.py.
A scope (corpora.py) says which corpora are searched and under which metadata filter: the
filter restricts both sides inside the search (Chroma `where`, BM25 over the allowed
chunks), so k papers come back whenever k match.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ..corpus.authors import AuthorBook
from ..config import Settings
from ..store.corpora import Corpora, Part, Scope
from ..store.index import Index
from ..store.lexical import LexicalIndex, content_terms
from ..store.metadata import ChunkRecord
from ..corpus.names import NameResolver
from ..records import Evidence, NameMatch, PaperHit, Retrieval, paper_of


log = logging.getLogger(__name__)

class Retriever:
    """Hybrid retrieval over the corpora of a scope; `mode` 'dense' and 'bm25' exist for measuring."""

    def __init__(self, index: Index, settings: Settings, corpora: Corpora | None = None):
        self.index = index
        self.settings = settings
        self.corpora = corpora or Corpora(settings, index)
        self._resolvers: dict[str, tuple[LexicalIndex, NameResolver]] = {}
        self._authors: dict[str, tuple[LexicalIndex, AuthorBook]] = {}

    def names(self, lexical: LexicalIndex, corpus: str = "") -> NameResolver:
        """The name resolver for this lexical index, built once per corpus version, not per question."""
        cached = self._resolvers.get(corpus)
        if cached is None or cached[0] is not lexical:
            cached = (lexical, NameResolver(lexical.names, lexical.knows, self.settings))
            self._resolvers[corpus] = cached
        return cached[1]

    def author_book(self, lexical: LexicalIndex, corpus: str = "") -> AuthorBook:
        """The corpus's authors (paper metadata), indexed once per corpus version."""
        cached = self._authors.get(corpus)
        if cached is None or cached[0] is not lexical:
            cached = (lexical, AuthorBook(lexical.authors))
            self._authors[corpus] = cached
        return cached[1]

    def search(self, question: str, k: int | None = None, mode: str = "hybrid", texts: bool = True,
               scope: Scope | None = None) -> list[PaperHit]:
        """The top-k papers, ranked, each marked relevant or not: nothing is silently dropped."""
        return self.retrieve(question, k, mode, texts, scope).hits

    def retrieve(self, question: str, k: int | None = None, mode: str = "hybrid", texts: bool = True,
                 scope: Scope | None = None) -> Retrieval:
        """Recall first: k papers by fused rank, the papers the question names always among them.

        `texts=False` skips fetching full abstracts (search needs only evidence)."""
        scope = scope or self.corpora.scope()
        k = k or self.settings.retrieval_k
        n = max(self.settings.candidate_chunks, 8 * k)
        dense, sparse, owner, found = self._gather(question, n, mode, scope)
        chunk_rank: dict[str, float] = {}
        best: list[dict[str, float]] = [{}, {}]
        for side, ranked in enumerate((dense, sparse)):
            for rank, (cid, score) in enumerate(ranked):
                best[side].setdefault(paper_of(cid), score)
                chunk_rank[cid] = chunk_rank.get(cid, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        dense_best, sparse_best = best
        fused: dict[str, float] = {}
        for ranking in (list(dense_best), list(sparse_best)):
            for rank, pid in enumerate(ranking):
                fused[pid] = fused.get(pid, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        named = list(dict.fromkeys(found.named_ids + found.authored_ids))  # "papers by X": X's papers, from metadata
        ordered = sorted(fused, key=lambda pid: -fused[pid])
        named_first = sorted(named, key=lambda pid: -fused.get(pid, 0.0))  # a named paper is never dropped
        candidates = list(dict.fromkeys(named_first + ordered))[: max(k, len(named_first))]
        labels = self._labels(candidates, owner)
        coverage = self._coverage(question, candidates, owner)
        hits: list[PaperHit] = []
        for pid in candidates:
            if pid not in labels:
                continue
            hit = PaperHit(pid, labels[pid], fused.get(pid, 0.0), dense_best.get(pid, 0.0), sparse_best.get(pid, 0.0),
                           coverage[pid], named=pid in named, corpus=owner[pid].name,
                           authors=owner[pid].index.lexical.authors.get(pid, []))
            hit.relevant = self.is_relevant(hit)
            hits.append(hit)
        self._attach_evidence(hits, chunk_rank, owner)
        if texts and hits:
            for part, ids in _by_part(hits, owner):
                papers = part.index.get_papers(ids)
                for hit in hits:
                    if hit.paper_id in papers:
                        hit.text = papers[hit.paper_id].text
        found.hits = hits
        return found

    def _gather(self, question: str, n: int, mode: str, scope: Scope
                ) -> tuple[list[tuple[str, float]], list[tuple[str, float]], dict[str, Part], Retrieval]:
        """Both sides from every corpus of the scope, the filter applied inside each search; the names the
        question resolves to, among the papers the filter allows. `owner`: the corpus of each paper."""
        dense: list[tuple[str, float]] = []
        sparse: list[tuple[str, float]] = []
        owner: dict[str, Part] = {}
        names: list[NameMatch] = []
        unknown: list[list[str]] = []
        authors: list[NameMatch] = []
        for part in scope.parts:
            allowed = scope.allowed(part)
            if allowed is not None and not allowed:
                continue
            if allowed is not None and len(allowed) >= part.index.stats().papers:
                allowed = None  # the filter allows every paper of this corpus: search it whole
            lexical = part.index.load_lexical()
            mask = None if allowed is None else scope.registry.mask(part, scope.filter, lexical)
            if mode != "bm25":
                for cid, cosine in self._dense(part, question, n, scope, lexical, mask):
                    dense.append((cid, cosine))
                    owner[paper_of(cid)] = part
            if mode != "dense":
                for cid, score in lexical.search(question, n, None if mask is None else mask.astype(np.float32)):
                    sparse.append((cid, score))
                    owner.setdefault(paper_of(cid), part)
            matches, missing = self.names(lexical, part.name).resolve(question)
            names += _within(matches, allowed, part, owner)
            unknown.append(missing)
            authors += _within(self.author_book(lexical, part.name).find(question), allowed, part, owner)
        if len(scope.parts) > 1:  # several corpora: one ranking of each side, best first
            dense.sort(key=lambda pair: -pair[1])
            sparse.sort(key=lambda pair: -pair[1])
        not_known = [name for name in (unknown[0] if unknown else []) if all(name in other for other in unknown[1:])]
        return dense[:n], sparse[:n], owner, Retrieval(question, [], names, not_known, authors=authors)

    def _dense(self, part: Part, question: str, n: int, scope: Scope, lexical: LexicalIndex,
               mask: np.ndarray | None) -> list[tuple[str, float]]:
        """The dense side, restricted to the chunks the lexical side scores (`mask`); the hits' evidence is read
        after. A Chroma server gets the filter's `where` (no id lists over the network). The embedded store: a
        broad filter, the nearest chunks over-fetched and the allowed ones kept (the same chunks; Chroma's `ids`
        filter costs 14-29 ms whatever the list, 960 unfiltered ids 10 ms); up to `filter_exact_chunks`, an
        exact search over the filter's vectors, read once per corpus version and filter (Corpora.vectors);
        else Chroma's `ids` filter, 3-10x faster than its `where` at 20,000 papers."""
        if mask is None:
            return part.index.dense_ids(question, n)
        if self.settings.chroma_url:
            return part.index.dense_ids(question, n, where=scope.filter.where())
        ids = lexical.chunks_of(mask)
        if not ids:
            return []
        total = len(lexical.chunk_ids)
        share = len(ids) / max(1, total)
        if share >= self.settings.filter_overfetch_share:
            fetch = min(total, math.ceil(n / share * self.settings.filter_overfetch))
            allowed = set(ids)
            rows = [(cid, cos) for cid, cos in part.index.dense_ids(question, fetch) if cid in allowed]
            if len(rows) >= n or fetch >= total:  # else too few allowed ones came that near: the `ids` search
                return rows[:n]
        if len(ids) > self.settings.filter_exact_chunks:
            return part.index.dense_ids(question, n, ids=ids)
        kept, vectors = scope.registry.vectors(part, scope.filter, lexical, ids)
        vector = np.asarray(part.index.embedder.embed_query([question])[0], dtype=np.float32)
        cosines = vectors @ (vector / max(float(np.linalg.norm(vector)), 1e-12))
        best = np.argsort(-cosines, kind="stable")[:n]
        return [(kept[i], float(cosines[i])) for i in best]

    def _labels(self, paper_ids: list[str], owner: dict[str, Part]) -> dict[str, str]:
        """Labels from memory (kept with BM25); the store only for papers newer than BM25."""
        labels: dict[str, str] = {}
        for part, ids in _by_part(paper_ids, owner):
            known = part.index.lexical.labels
            labels.update({pid: known[pid] for pid in ids if pid in known})
            missing = [pid for pid in ids if pid not in known]
            if missing:
                labels.update({pid: paper.label for pid, paper in part.index.get_papers(missing, with_text=False).items()})
        return labels

    def _coverage(self, question: str, paper_ids: list[str], owner: dict[str, Part]) -> dict[str, float]:
        terms = content_terms(question)
        coverage: dict[str, float] = {}
        for part, ids in _by_part(paper_ids, owner):
            coverage.update(part.index.lexical.coverage(terms, ids))
        return coverage

    def _attach_evidence(self, hits: list[PaperHit], rank: dict[str, float], owner: dict[str, Part], limit: int = 3) -> None:
        """Each hit's best chunks (their text and offsets), fetched in one call per corpus."""
        chosen = {}
        for hit in hits:
            mine = sorted((cid for cid in rank if paper_of(cid) == hit.paper_id), key=lambda cid: -rank[cid])
            chosen[hit.paper_id] = mine[:limit]
        records: dict[str, ChunkRecord] = {}
        wanted = [cid for ids in chosen.values() for cid in ids]
        for part, ids in _by_part(wanted, owner, key=paper_of):
            found = part.index.get_chunks(ids)
            records.update(found)
            lost = [cid for cid in ids if cid not in found]
            if lost:  # served without them; /readyz and `qa-service check` name the damage
                log.warning("corpus %s: the index names %d chunks the store does not hold (%s): run `qa-service check --repair`",
                            part.name, len(lost), lost[0])
        for hit in hits:
            hit.evidence = [
                Evidence(cid, records[cid].text, records[cid].start, records[cid].end)
                for cid in chosen[hit.paper_id] if cid in records
            ]

    def is_relevant(self, hit: PaperHit) -> bool:
        """Does this hit show the question is about the corpus at all?"""
        s = self.settings
        if hit.named or hit.dense >= s.dense_floor:
            return True
        return hit.dense >= s.weak_dense_floor and hit.coverage >= s.lexical_floor


def _within(matches: list[NameMatch], allowed: frozenset[str] | None, part: Part, owner: dict[str, Part]) -> list[NameMatch]:
    """The names or authors a question matched in one corpus, kept to the papers the filter allows (None: all);
    each kept paper is noted as that corpus's."""
    kept = []
    for match in matches:
        ids = tuple(pid for pid in match.paper_ids if allowed is None or pid in allowed)
        if ids:
            kept.append(match if ids == match.paper_ids else NameMatch(match.typed, match.name, ids, match.exact))
            owner.update({pid: part for pid in ids})
    return kept


def _by_part(items: list, owner: dict[str, Part], key=lambda item: item) -> list[tuple[Part, list]]:
    """Items grouped by the corpus that holds them (a hit, a paper id, a chunk id), in first-seen order."""
    groups: dict[str, tuple[Part, list]] = {}
    for item in items:
        pid = item.paper_id if isinstance(item, PaperHit) else key(item)
        part = owner[pid]
        groups.setdefault(part.name, (part, []))[1].append(item.paper_id if isinstance(item, PaperHit) else item)
    return list(groups.values())
