"""Can the retrieved evidence answer the question? One decision, one place, one typed reason.

Every model path (offline extractive or an OpenAI-compatible model) goes through it
before the model is asked. The reasons:
- off_topic: no retrieved paper clears the relevance bar, and none has a single sentence
  close in meaning to the question (a chunk dilutes a one-sentence match);
- not_in_corpus: the question is about a name-shaped thing no abstract mentions;
- detail_missing: the question is about a paper (named, or the one retrieval is sure of)
  and asks a kind of detail (a learning rate, the authors, a score on another benchmark)
  that its abstract does not state.
Generic words missing from an abstract never refuse: only a missing *kind* of detail does.
"""

from __future__ import annotations

from typing import Callable, Sequence

from ..config import Settings
from ..questions import AUTHORS, asked_details, asking_part, asks_quantity, is_plural
from ..records import PaperHit, RefusalReason, Retrieval, Verdict


class AnswerabilityJudge:
    """Decides, from the question and what retrieval found, whether to answer and about which papers."""

    def __init__(self, settings: Settings, closeness: Callable[[str, Sequence[str]], list[float]] | None = None):
        """`closeness(question, texts)`: each text's best sentence cosine to the question; None
        when embeddings are not local (a paid API per question is too dear for a second look)."""
        self.settings = settings
        self.closeness = closeness

    def decide(self, question: str, found: Retrieval) -> Verdict:
        asking = asking_part(question)
        named = [h for h in found.hits if h.named]
        if named:
            return self._about(asking, named, found, named=True)
        relevant = [h for h in found.hits if h.relevant] or self._close(question, found.hits)
        sure = any(h.dense >= self.settings.unknown_name_dense for h in found.hits)
        unknown = [n for n in found.unknown_names if n in asking]
        if unknown and not sure and not (is_plural(question) and relevant):
            return Verdict.no(RefusalReason.NOT_IN_CORPUS, ", ".join(unknown))
        if not relevant:
            return Verdict.no(RefusalReason.OFF_TOPIC)
        if not is_plural(question):
            return self._about(asking, relevant[:1], found, named=False)
        return Verdict.yes()  # several papers: the model weighs every retrieved one (the bar cut gold papers on the tuning split)

    def _close(self, question: str, hits: list[PaperHit]) -> list[PaperHit]:
        """Papers with one sentence close in meaning to the question, closest first; asked only when
        no paper cleared retrieval's bar, so most questions never pay for it."""
        if self.closeness is None or not hits:
            return []
        scores = self.closeness(question, [h.text for h in hits])
        close = sorted((s, i) for i, s in enumerate(scores) if s >= self.settings.sentence_floor)
        return [hits[i] for _, i in sorted(close, key=lambda pair: (-pair[0], pair[1]))]

    def _about(self, asking: str, papers: list[PaperHit], found: Retrieval, named: bool) -> Verdict:
        """The question (its asking part) is about these papers: does any of their abstracts state the kind of detail asked?"""
        ids = [h.paper_id for h in papers]
        for kind in asked_details(asking):
            if kind is AUTHORS and (found.authors or all(h.authors for h in papers)):
                continue  # who wrote what is in the papers' metadata: it named them, or it lists each paper's authors
            if not any(kind.stated.search(h.text) for h in papers):
                return Verdict.no(RefusalReason.DETAIL_MISSING, kind.name, ids)
        if named and asks_quantity(asking):
            # "How does Tequila do on MMLU?": a benchmark or model the paper's abstract never mentions
            things = [n for n in found.unknown_names if n in asking]
            absent = [n for n in things if not any(n.lower() in h.text.lower() for h in papers)]
            if absent:
                return Verdict.no(RefusalReason.DETAIL_MISSING, ", ".join(absent), ids)
        # a one-paper question is answered from the paper retrieval ranked first; "which papers by X" covers X's papers
        return Verdict.yes(ids, every=bool(found.authors) and not found.names)
