"""The figures of a claim against its quote and its abstract: each figure of the claim found in the quote, for
the same thing (the words around it), and not given for more of those words beside another figure, in the
quote (a contradiction when that figure holds every such word) or elsewhere in the abstract (unverified).
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from ..records import SentenceVerdict
from .abstracts import Read, Reads
from .claims import ARTICLES, PREPOSITIONS, Figure, clause, listed_lead, named_things, words
from .directions import DOWN, UP

_WAY_REACH = 3  # words either side of a figure, inside its clause, whose "higher"/"reduction" says which way it goes
_CLAUSE_MARK = re.compile(r"[,;:()]")
_DIGIT = re.compile(r"\d")
# a direction word that is a noun ("growth", "a 9.5× reduction") may name what is measured: a way only beside its figure
_MEASURE_NOUN = re.compile(r"(?:th|ments?|tions?|ups?|downs?)$")

Problem = Optional[tuple[SentenceVerdict, str]]  # what one check found wrong, or None


class FigureCheck:
    """Figures tied to the words around them, weighed by rarity (a named thing counts twice)."""

    def __init__(self, idf: Callable[[str], float], same_form: int):
        self.idf, self.same_form = idf, same_form

    def elsewhere(self, claim: str, best: int, read: Read, text: str, reads: Reads) -> str:
        """A figure of the claim that its quote gives, but that another sentence of the abstract gives another figure
        of its kind for, beside more of the words around it ("the scientific-reasoning average by 19%" where 19% is
        the overall average and another sentence gives the scientific-reasoning one): which is meant is not clear."""
        wanted, (start, end) = reads.figures(claim), read.spans[best]
        quote, given = text[start:end], read.figures[best]
        for figure in wanted:
            near = self._near(claim, figure, wanted, reads)
            same = [g for g in given if figure.matches(g)]
            if not same or not figure.kind:  # a measure (% or x); a count ("three agents") is often said twice
                continue
            mine = max(self._tie(near, quote, g, given, reads) for g in same)
            for (s, e), found in zip(read.spans, read.figures):
                there = text[s:e]
                for rival in (g for g in found if g.kind == figure.kind and not figure.matches(g)) if s != start else ():
                    if not any(w.matches(rival) for w in wanted) and self._tie(near, there, rival, found, reads) > mine:
                        return rival.text.strip()
        return ""

    def check(self, claim: str, quote: str, about: bool, reads: Reads) -> Problem:
        """Each figure of the claim in the quote, for the same thing; another figure for it is a contradiction."""
        wanted, given = reads.figures(claim), reads.figures(quote)
        for figure in wanted:
            near = self._near(claim, figure, wanted, reads)
            same = [g for g in given if figure.matches(g)]
            rivals = [g for g in given if g.kind == figure.kind and not figure.matches(g)]
            if same and all(g.bound and figure.bound and g.bound != figure.bound for g in same):
                return SentenceVerdict.UNVERIFIED, (f"the quote gives {same[0].text.strip()} as the {same[0].bound}, "
                                                    f"the sentence as the {figure.bound}")
            if same:  # another figure of its kind, or another measure (% or x) the claim does not give, may be the one for that thing
                best_same = max(self._tie(near, quote, g, given, reads) for g in same)
                mine = max((self._tied(near, quote, g, given, reads) for g in same), key=lambda t: sum(near[w] for w in t))
                unclaimed = [g for g in given if g not in same and g.kind and figure.kind and not any(w.matches(g) for w in wanted)]
                for rival in rivals + [g for g in unclaimed if g not in rivals]:
                    if self._tie(near, quote, rival, given, reads) > best_same and about and not self._own(
                            claim, quote, rival, same, wanted, given, reads):
                        if mine <= self._tied(near, quote, rival, given, reads):  # the rival holds every word this one does
                            return SentenceVerdict.CONTRADICTED, f"the quote gives {rival.text.strip()} for that, not {figure.text.strip()}"
                        # each holds words the other lacks: which figure is for that thing is not clear
                        return SentenceVerdict.UNVERIFIED, f"the quote gives {rival.text.strip()} beside words of the sentence too"
                if about and all(self._turned(claim, figure, quote, g, near, given, reads) for g in same):
                    return SentenceVerdict.CONTRADICTED, f"the quote gives {same[0].text.strip()} the other way (a rise, not a fall, or the reverse)"
                continue
            tied = [r for r in rivals if self._tie(near, quote, r, given, reads) > 0]
            if tied and about:
                return SentenceVerdict.CONTRADICTED, f"the quote gives {tied[0].text.strip()}, not {figure.text.strip()}"
            return SentenceVerdict.UNVERIFIED, f"{figure.text.strip()} is not in the quote"
        return None

    def _turned(self, claim: str, figure: Figure, quote: str, given_figure: Figure, near: dict[str, float],
                given: list[Figure], reads: Reads) -> bool:
        """The claim's figure goes one way ("6.92× lower cache hit rate") and the quote's same figure, for the same thing
        (a word around it is around the quote's too), the other ("improvements of up to 6.92× in cache hit rate")."""
        mine, theirs = _way(claim, figure), _way(quote, given_figure)
        if not mine or not theirs or mine == theirs:
            return False
        return any(t not in _WAY_STEMS for t in self._tied(near, quote, given_figure, given, reads))

    def _own(self, claim: str, quote: str, rival: Figure, same: list[Figure], wanted: list[Figure], given: list[Figure],
             reads: Reads) -> bool:
        """The claim gives the rival too, and ties it to the rival's own place better than to this figure's: two
        figures listed in one breath ("31.1 and 23.4 ... respectively"), not swapped ones."""
        owner = next((w for w in wanted if w.matches(rival)), None)
        if owner is None:
            return False
        near = self._near(claim, owner, wanted, reads)
        mine = max(self._tie(near, quote, g, given, reads) for g in given if owner.matches(g))
        return mine >= max(self._tie(near, quote, g, given, reads) for g in same)

    def _near(self, text: str, figure: Figure, others: list[Figure], reads: Reads) -> dict[str, float]:
        """The words around the claim's figure, by rarity; a named thing counts twice."""
        words_there = clause(text, figure, [f for f in others if f is not figure])
        names = reads.stems(" ".join(named_things(words_there)))
        return {t: self.idf(t) * (2.0 if t in names else 1.0) for t in reads.stems(words_there) if not t.replace(".", "").isdigit()}

    def _tie(self, near: dict[str, float], quote: str, figure: Figure, given: list[Figure], reads: Reads) -> float:
        """How much of the words around the claim's figure stand around this figure of the quote."""
        return sum(near[term] for term in self._tied(near, quote, figure, given, reads))

    def _tied(self, near: dict[str, float], quote: str, figure: Figure, given: list[Figure], reads: Reads) -> set[str]:
        """The words around the claim's figure that stand around this figure of the quote."""
        lead = listed_lead(quote, figure, given)
        there = clause(quote, figure, [g for g in given if g is not figure])
        around = reads.stems(there + " " + lead if lead else there)
        return {term for term in near if around.has(term, self.same_form)}


_WAY_STEMS = {w[:5] for w in UP | DOWN}  # the direction words' own stems are no thing the figure is for


def _spoken(tokens: list[str]) -> list[str]:
    """The words that say something: "improvements of up to 6.92×" is "improvements 6.92×"."""
    return [t for t in tokens if len(t) > 2 and t not in PREPOSITIONS and t not in ARTICLES or t == "than"]


def _way(text: str, figure: Figure) -> str:
    """Which way the text says its figure goes: "up", "down", or "" (neither, or both)."""
    left = _spoken(words(_CLAUSE_MARK.split(text[:figure.at])[-1]))
    right = _spoken(words(_CLAUSE_MARK.split(text[figure.end:])[0]))
    figured = [i for i, t in enumerate(left) if _DIGIT.search(t)] + [-1]  # another figure binds the words past it
    left = left[max(figured) + 1:][-_WAY_REACH:]
    right = right[:next((i for i, t in enumerate(right) if _DIGIT.search(t)), len(right))][:_WAY_REACH]
    seq = left + right
    ways = {(abs(i - len(left) + 0.5), "up" if w in UP else "down") for i, w in enumerate(seq)
            if (w in UP or w in DOWN) and seq[i + 1:i + 2] != ["than"]  # "more than 40%" bounds, points nowhere
            and (not _MEASURE_NOUN.search(w) or abs(i - len(left) + 0.5) == 0.5)}  # "edge growth" is what is measured
    if not ways:
        return ""
    found = {way for _, way in ways}
    beside = {way for d, way in ways if d == 0.5}  # "40.9% lower edge growth": the word beside the figure, not the noun after
    return found.pop() if len(found) == 1 else beside.pop() if len(beside) == 1 else ""
