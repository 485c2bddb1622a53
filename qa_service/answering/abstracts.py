"""What one check has read: each cited abstract's sentences with their word stems and figures, and
the stems of every claim, read once per check (an answer's units cite the same few abstracts)."""

from __future__ import annotations

from dataclasses import dataclass

from ..store.lexical import content_terms, content_terms_each
from .claims import Figure, figures


@dataclass
class Read:
    """One abstract as the check reads it, once per check: its sentences, their words and figures."""

    spans: list[tuple[int, int]]
    terms: list[Terms]
    everywhere: Terms
    figures: list[list[Figure]]
    prior: list[bool]  # the sentence speaks of earlier work


class Terms(frozenset):
    """A text's word stems, with an index by their first letters for matching a longer or shorter form."""

    def has(self, term: str, same_form: int) -> bool:
        """The word or its longer or shorter form ("speed" / "speedup", "infer" / "inference"): one starts the
        other and they share their first `same_form` letters."""
        if term in self:
            return True
        if len(term) < same_form:
            return False
        heads = self.__dict__.get("heads")
        if heads is None:
            heads = self.__dict__["heads"] = {}
            for t in self:
                if len(t) >= same_form:
                    heads.setdefault(t[:same_form], []).append(t)
        return any(t.startswith(term) or term.startswith(t) for t in heads.get(term[:same_form], ()))


class Reads:
    """What one check has read (abstracts, word stems), kept for that check only: one answer's
    units cite the same few abstracts, and each is read once."""

    def __init__(self, hedge_share: float) -> None:
        self.abstracts: dict[str, Read] = {}
        self.terms: dict[tuple[str, str], dict[str, float]] = {}  # (claim, paper label) -> its weighted words
        self._stems: dict[str, Terms] = {}
        self._figures: dict[str, list[Figure]] = {}
        self.hedge_share = hedge_share

    def figures(self, text: str) -> list[Figure]:
        found = self._figures.get(text)
        if found is None:
            found = self._figures[text] = figures(text, self.hedge_share)
        return found

    def stems_each(self, texts: list[str]) -> list[Terms]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._stems]
        self._stems.update(zip(missing, map(Terms, content_terms_each(missing))))
        return [self._stems[t] for t in texts]

    def stems(self, text: str) -> Terms:
        found = self._stems.get(text)
        if found is None:
            found = self._stems[text] = Terms(content_terms(text))
        return found
