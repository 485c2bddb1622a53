"""A question's terms as the corpus spells them, for the share of them a paper holds (relevance).

A word the corpus's vocabulary lacks and English seldom uses (wordfreq Zipf below `respell_zipf`) is a
typo ("refusl", "safty") or a word of another language ("surmonter", "données"; or one far commoner there
than in English, "de", "sans": `other_language_*`). Neither says the
question is off the corpus's topics: the first is the nearest vocabulary term within the typo budget
names use, the second is left out (the abstracts are English). A word English uses that no abstract
does ("federated", "driving") keeps counting: the corpus lacking it is what it says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import OSA
from wordfreq import zipf_frequency

_WORD = re.compile(r"[^\W\d_]+")
_OTHER_LANGUAGES = ("es", "pt", "fr", "de")  # the accepted languages written with spaces, besides English


@dataclass(frozen=True)
class Respelling:
    """How far a question's unknown words are looked for (settings: respell_zipf, name_typo_*, max_typo_lookups)."""

    max_zipf: float
    min_length: int
    two_edits_length: int
    most: int
    other_zipf: float = 9.0  # other_language_zipf: a common word of another accepted language ...
    other_margin: float = 0.0  # other_language_margin: ... that English uses this much less ("de", "sans", "quelle")

    def strange(self, word: str) -> bool:
        """A typo, or a word of another language: English seldom uses it, or another language far more."""
        english = zipf_frequency(word, "en")
        return english < self.max_zipf or any(
            zipf_frequency(word, language, wordlist="small") >= max(self.other_zipf, english + self.other_margin)
            for language in _OTHER_LANGUAGES)

    def budget(self, length: int) -> int:
        return 0 if length < self.min_length else 1 if length < self.two_edits_length else 2


def respelt_terms(question: str, terms: set[str], vocabulary: Collection[str], listed: Callable[[str], Sequence[str]],
                  analyze: Callable[[str], set[str]], how: Respelling) -> set[str]:
    """`terms` (the question's content terms) with each term of a typo or foreign word replaced by the nearest term of
    the vocabulary, or dropped; `listed(letter)`: the vocabulary's terms that start with it (a typo keeps its first
    letter; built once by the caller). At most `how.most` words are looked up, each a scan of one letter's terms."""
    kept = set(terms)
    strange = [w for w in dict.fromkeys(_WORD.findall(question)) if how.strange(w)]
    for word in strange[: how.most]:
        for term in analyze(word) & terms:
            if term in vocabulary:
                continue
            kept.discard(term)
            edits = how.budget(len(term))
            match = process.extractOne(term, listed(term[0]), scorer=OSA.distance, score_cutoff=edits) if edits else None
            if match is not None:
                kept.add(str(match[0]))
    return kept
