"""Question -> ranked papers with evidence chunks: dense + BM25 fused by reciprocal rank.

Recall first: k papers always come back, ranked; each is marked relevant when it clears
a bar that combines the dense cosine with how much of the question's rare-term weight
the paper contains (the cosine alone does not separate on-topic from off-topic
questions). Whether to answer is decided once, on the whole retrieval, in answerability.py.
A scope (corpora.py) says which corpora are searched and under which metadata filter: the
filter restricts both sides inside the search (Chroma `where`, BM25 over the allowed
chunks), so k papers come back whenever k match. What happens to the candidates once both
searches are done (fusion, the cut to k, labels, evidence) is a list of steps (steps.py): a
reranker is one more step before the cut.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..corpus.authors import AuthorBook
from ..config import Settings
from ..store.corpora import Corpora, Part, Scope
from ..store.lexical import LexicalIndex
from ..corpus.names import NameResolver, spelt_out_names
from ..records import NameMatch, PaperHit, Reading, Retrieval, paper_of
from .steps import Candidates, RetrievalStep, default_steps, run_steps


class Retriever:
    """Hybrid retrieval over the corpora of a scope; `mode` 'dense' and 'bm25' exist for measuring."""

    def __init__(self, settings: Settings, corpora: Corpora, steps: Sequence[RetrievalStep] | None = None):
        """`steps`: what runs over the candidates once both searches are done (default_steps: today's retrieval)."""
        self.settings = settings
        self.corpora = corpora
        self.steps: list[RetrievalStep] = list(steps) if steps is not None else default_steps(settings, self.is_relevant)
        self._resolvers: dict[str, tuple[LexicalIndex, NameResolver]] = {}
        self._authors: dict[str, tuple[LexicalIndex, AuthorBook]] = {}

    def names(self, lexical: LexicalIndex, corpus: str = "") -> NameResolver:
        """The name resolver for this lexical index, built once per corpus version, not per question."""
        cached = self._resolvers.get(corpus)
        if cached is None or cached[0] is not lexical:
            spelt = spelt_out_names(lexical.abbreviations, lexical.labels.values(), lexical.names)
            cached = (lexical, NameResolver(lexical.names, lexical.knows, self.settings, spelt))
            self._resolvers[corpus] = cached
        return cached[1]

    def author_book(self, lexical: LexicalIndex, corpus: str = "") -> AuthorBook:
        """The corpus's authors (paper metadata), indexed once per corpus version."""
        cached = self._authors.get(corpus)
        if cached is None or cached[0] is not lexical:
            cached = (lexical, AuthorBook(lexical.authors))
            self._authors[corpus] = cached
        return cached[1]

    def search(self, question: str | Reading, k: int | None = None, mode: str = "hybrid", texts: bool = True,
               scope: Scope | None = None) -> list[PaperHit]:
        """The top-k papers, ranked, each marked relevant or not: nothing is silently dropped."""
        return self.retrieve(question, k, mode, texts, scope).hits

    def retrieve(self, question: str | Reading, k: int | None = None, mode: str = "hybrid", texts: bool = True,
                 scope: Scope | None = None) -> Retrieval:
        """Recall first: both searches fill the pool, then the steps fuse, cut to k and mark it (steps.py).

        `question`: its text is what BM25 and the names read, its meaning (a foreign question's English words) what the
        dense side embeds. `texts=False` skips fetching full abstracts (search needs only evidence)."""
        reading = question if isinstance(question, Reading) else Reading(question)
        question = reading.text
        scope = scope or self.corpora.scope()
        k = k or self.settings.retrieval_k
        n = max(self.settings.candidate_chunks, 8 * k)
        dense, sparse, owner, found = self._gather(reading, n, mode, scope)
        named = list(dict.fromkeys(found.named_ids + found.authored_ids))  # "papers by X": X's papers, from metadata
        candidates = run_steps(self.steps, Candidates(question, k, scope, found, owner, dense, sparse, named))
        if texts and candidates.hits:
            candidates.fetch_texts([hit.paper_id for hit in candidates.hits])
            for hit in candidates.hits:
                if hit.paper_id in candidates.papers:
                    paper = candidates.papers[hit.paper_id]
                    hit.text, hit.title, hit.keywords = paper.text, paper.title, paper.keywords
        found.hits = candidates.hits
        return found

    def _gather(self, reading: Reading, n: int, mode: str, scope: Scope
                ) -> tuple[list[tuple[str, float]], list[tuple[str, float]], dict[str, Part], Retrieval]:
        """Both sides from every corpus of the scope, the filter applied inside each search; the names the
        question resolves to, among the papers the filter allows. `owner`: the corpus of each paper."""
        question = reading.text
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
                for cid, cosine in self._dense(part, reading.embedded, n, scope, lexical, mask):
                    dense.append((cid, cosine))
                    owner[paper_of(cid)] = part
            if mode != "dense":
                for cid, score in lexical.search(question, n, None if mask is None else mask.astype(np.float32), self.settings.abbreviation_share):
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
        return dense[:n], sparse[:n], owner, Retrieval(question, [], names, not_known, authors=authors, meaning=reading.meaning)

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

