"""What a question is about at its core, and whether a paper's text, title or keywords hold it.

The core is the question's rarest content terms (stemmed, idf from the corpus): "speech" in "Which
papers do speech recognition with transformers?", not "transformers". A term matches a paper's term
exactly or within the typo budget names use. Words that say what is asked for ("paper", "method",
"results") are never the core: they are how questions are put, in any field.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from rapidfuzz import process
from rapidfuzz.distance import OSA

from ..config import Settings
from ..corpus.names import name_key, typo_budget
from ..corpus.roles import Role, sentence_roles
from ..store.lexical import content_terms, content_terms_each

# how questions are put, not what they are about (stemmed like the question)
_ASKING_WORDS = content_terms(
    "paper papers work works method methods approach approaches model models study studies research propose proposed "
    "use using used result results show shows new novel way ways anything something looking look find tell explain "
    "describe summarize summary give list question questions answer help idea ideas technique techniques system systems "
    "article articles author authors report reports reported main key achieve achieves improve improves better best good "
    "specific exactly kind type number numbers figure figures score scores"
)

_UNSEEN = " "  # no term the analyser yields: as rare as a term no abstract uses


def core_terms(question: str, idf: Callable[[str], float], share: float, most: int, seen_only: bool = False) -> set[str]:
    """The rarest `share` of the question's content terms (at least one, at most `most`); `seen_only`: of those some
    abstract uses (a question in another language: its words the English abstracts lack say nothing of its topic)."""
    terms = sorted(content_terms(question) - _ASKING_WORDS, key=lambda t: (-idf(t), t))
    if seen_only:
        terms = [t for t in terms if idf(t) < idf(_UNSEEN)]
    if not terms:
        return set()
    return set(terms[: max(1, min(most, math.ceil(len(terms) * share)))])


_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def corpus_words(question: str, idf: Callable[[str], float]) -> dict[str, str]:
    """The question's content terms that some abstract uses, each with the word it came from, for an embedder
    ("hallucin" -> "hallucination"; a hyphenated word's terms -> the whole word, "vision-language")."""
    parts = [part for word in _WORD.findall(question.lower()) for part in dict.fromkeys([word, *word.split("-")])]
    unseen = idf(_UNSEEN)
    words: dict[str, str] = {}
    for part, terms in zip(parts, content_terms_each(parts)):
        for term in sorted(terms - _ASKING_WORDS):
            if idf(term) < unseen:
                words.setdefault(term, part)
    return words


def has_core(core: set[str], text: str, settings: Settings, analyse: Callable[[str], set[str]] = content_terms) -> bool:
    """Does the text hold one of the core terms, exactly or within the typo budget? (`analyse`: its terms, cached by the caller)"""
    if not text.strip():
        return False
    terms = analyse(text)
    if core & terms:
        return True
    for term in core:
        budget = typo_budget(len(term), settings)
        if budget and terms and process.extractOne(term, terms, scorer=OSA.distance, score_cutoff=budget) is not None:
            return True
    return False


def mentions(text: str, thing: str) -> bool:
    """Does the text mention this name or figure, in any spelling of it (case, hyphens, spaces, × for x)?"""
    key = name_key(thing.replace("×", "x"))
    return bool(key) and key in name_key(text.replace("×", "x"))


def reports_close(text: str, figures: bool) -> bool:
    """Has the abstract something close to give in place of an absent thing: a result (with a figure, if figures are asked)?"""
    return any(r.role is Role.RESULT and (r.figures or not figures) for r in sentence_roles(text))
