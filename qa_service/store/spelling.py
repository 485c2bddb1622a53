"""A question's terms as the corpus spells them, for the share of them a paper holds (relevance).

A word the corpus's vocabulary lacks is one of three things. A word of another accepted language
(far commoner there than in English: "de", "sans", "surmonter"; `other_language_margin`) says
nothing for or against an English abstract: it is left out. A word English seldom uses
(`respell_zipf`) may be a typo ("refusl", "safty"): it counts as the vocabulary's nearest term within
the typo budget names use, when there is one. Any other word ("federated", "retrosynthesis") keeps
counting against the paper: the corpus lacking it is what it says.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import OSA
from wordfreq import zipf_frequency

from ..config import Settings
from ..corpus.names import OTHER_LANGUAGES, typo_budget

_WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Respelling:
    """How far a question's unknown words are looked for: the settings respell_zipf, max_typo_lookups,
    other_language_margin, and the typo budget names use (name_typo_*)."""

    settings: Settings

    def foreign(self, word: str) -> bool:
        """A word of another accepted language: far commoner there than in English ("de", "sans", "surmonter")."""
        english = zipf_frequency(word, "en")
        return any(zipf_frequency(word, language, wordlist="small") >= english + self.settings.other_language_margin
                   for language in OTHER_LANGUAGES)


def respelt_terms(question: str, terms: set[str], vocabulary: Collection[str], listed: Callable[[str], Sequence[str]],
                  analyze: Callable[[list[str]], list[set[str]]], how: Respelling) -> set[str]:
    """`terms` (the question's content terms) with each term of a foreign word dropped and of a typo replaced by the
    vocabulary's nearest term; `listed(letter)`: the vocabulary's terms that start with it (a typo keeps its first
    letter; built once by the caller); `analyze`: each word's terms, in one pass. At most max_typo_lookups words are looked up, each a scan of one letter's terms."""
    kept = set(terms)
    missing = {t for t in terms if t not in vocabulary}
    if not missing:
        return kept  # most questions: every term is the corpus's
    words = list(dict.fromkeys(_WORD.findall(question)))
    looked = 0
    for word, own in zip(words, analyze(words)):  # one tokenizer pass for all the words
        unknown = sorted(own & missing)
        if not unknown:
            continue
        if how.foreign(word):
            kept.difference_update(unknown)  # the abstracts are English: it says nothing for or against a paper
        elif zipf_frequency(word, "en") < how.settings.respell_zipf and looked < how.settings.max_typo_lookups:  # a typo?
            looked += 1
            for term in unknown:
                edits = typo_budget(len(term), how.settings)
                match = process.extractOne(term, listed(term[0]), scorer=OSA.distance, score_cutoff=edits) if edits else None
                if match is not None:
                    kept.discard(term)
                    kept.add(str(match[0]))
    return kept
