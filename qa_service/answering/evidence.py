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
from wordfreq import zipf_frequency
from rapidfuzz.distance import OSA

from ..config import Settings
from ..corpus.names import occurs_keyed, typo_budget
from ..corpus.roles import Role, sentence_roles
from ..store.lexical import content_terms, content_terms_each
from ..corpus.names import OTHER_LANGUAGES

# how questions are put, not what they are about (stemmed like the question)
ASKING_WORDS = content_terms(
    "paper papers work works method methods approach approaches model models study studies research propose proposed "
    "use using used result results show shows new novel way ways anything something looking look find tell explain "
    "describe summarize summary give list question questions answer help idea ideas technique techniques system systems "
    "article articles author authors report reports reported main key achieve achieves improve improves better best good "
    "specific exactly kind type number numbers figure figures score scores "
    # the verbs that say a paper is about something: "papers that involve / deal with / tackle / address X"
    "involve involves involving deal deals dealing tackle tackles tackling address addresses addressing concern concerns "
    "concerning cover covers covering discuss discusses discussing focus focuses focusing"
)

UNSEEN = " "  # no term the analyser yields: as rare as a term no abstract uses


# a verb and the particle that makes it a way of asking: "touch on", "look at", "dwell upon", "zoom into"
_PHRASAL = re.compile(r"\b([a-z]+)\s+(?:on|at|upon|into)\b", re.I)


def core_terms(question: str, idf: Callable[[str], float], share: float, most: int, seen_only: bool = False,
               function_zipf: float = 99.0) -> set[str]:
    """The rarest `share` of the question's content terms (at least one, at most `most`); `seen_only`: of those some
    abstract uses (a question in another language: its words the English abstracts lack say nothing of its topic). A
    word no abstract uses before "on", "at", "upon", "into" ("Which papers touch on mixture-of-experts?") is the
    asking verb, not the topic; nor is a word English (of a question in another language, that language too) uses at least
    `function_zipf` ("much": Zipf 6, once in 1,000 words; "de")."""
    unseen = idf(UNSEEN)
    asking = {t for m in _PHRASAL.finditer(question) for t in content_terms(m.group(1)) if idf(t) >= unseen}
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(question)))
    others = OTHER_LANGUAGES if seen_only else ()  # "de", "en" of a Spanish question are its "of", "in"
    asking |= {t for word, terms in zip(words, content_terms_each(words)) for t in terms
               if max([zipf_frequency(word, "en"), *(zipf_frequency(word, lang, wordlist="small") for lang in others)])
               >= function_zipf}
    terms = sorted(content_terms(question) - ASKING_WORDS - asking, key=lambda t: (-idf(t), t))
    if seen_only:
        terms = [t for t in terms if idf(t) < unseen]
    if not terms:
        return set()
    return set(terms[: max(1, min(most, math.ceil(len(terms) * share)))])


_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def corpus_words(question: str, idf: Callable[[str], float]) -> dict[str, str]:
    """The question's content terms that some abstract uses, each with the word it came from, for an embedder
    ("hallucin" -> "hallucination"; a hyphenated word's terms -> the whole word, "vision-language")."""
    parts = [part for word in _WORD.findall(question.lower()) for part in dict.fromkeys([word, *word.split("-")])]
    unseen = idf(UNSEEN)
    words: dict[str, str] = {}
    for part, terms in zip(parts, content_terms_each(parts)):
        for term in sorted(terms - ASKING_WORDS):
            if idf(term) < unseen:
                words.setdefault(term, part)
    return words


def _meeting(question: str, terms: set[str]) -> list[tuple[re.Match[str], bool]]:
    """Each word of the question, and whether its content terms meet `terms`."""
    words = list(_WORD.finditer(question))
    return [(m, bool(own & terms)) for m, own in zip(words, content_terms_each([m.group() for m in words]))]


def words_meeting(question: str, terms: set[str]) -> list[str]:
    """The question's words whose content terms meet `terms`, as it writes them, adjacent ones as one phrase ("speech
    recognition", "Whisper"), each once."""
    marked = _meeting(question, terms)
    phrases: list[str] = []
    start = None
    for i, (m, meets) in enumerate(marked):
        if meets and start is None:
            start = m.start()
        joined = i + 1 < len(marked) and marked[i + 1][1] and not question[m.end():marked[i + 1][0].start()].strip(" -")
        if meets and not joined:
            phrases.append(question[start:m.end()])
            start = None
    return list(dict.fromkeys(phrases))


def without_words(question: str, terms: set[str]) -> str:
    """The question with each word whose content terms meet `terms` taken out ("quantizing speech recognition models"
    less speech and recognition: "quantizing models"), to see what the rest of it is close to."""
    for m, meets in reversed(_meeting(question, terms)):
        if meets:
            question = question[: m.start()] + question[m.end():]
    return " ".join(question.split())


_TOKEN = re.compile(r"[^\W_]+|[^\w\s-]")  # words and stops; a hyphen joins a kind to its thing as a space does: "Medusa-style"
_VERBAL = re.compile(r"(?:ing|ed|en)$", re.I)  # "incoming query", "downloaded", "chosen": how a thing is, not a kind of it
_CODED = re.compile(r"\d|[A-Za-z][A-Z]")  # GUI, kNN, GPT-5: names, which the name tests weigh


def unseen_kinds(question: str, core: set[str], idf: Callable[[str], float], kind_zipf: float,
                 function_zipf: float) -> list[str]:
    """Core words no abstract uses that say which kind of the next word is meant, where some abstract uses that next word:
    "quantum" in "quantum error-correcting codes", "jailbreak" in "jailbreak attacks". The abstracts have the thing
    but not this kind of it. Only words the language uses less than `kind_zipf` (not "much", "deal"), never a verbal
    form or a name, and a next word the language uses less than `function_zipf` (a thing, not "like" or "whether").
    Two such core words in a row that no abstract uses name a field the corpus lacks: "speech recognition"."""
    words = _TOKEN.findall(question)
    terms = content_terms_each(words)
    unseen = idf(UNSEEN)
    kinds = []
    for (word, own), (after, theirs) in zip(zip(words, terms), zip(words[1:], terms[1:])):
        if not own or not own <= core or any(idf(t) < unseen for t in own):
            continue
        if _VERBAL.search(word) or _CODED.search(word) or zipf_frequency(word, "en") >= kind_zipf:
            continue
        if theirs and all(idf(t) < unseen for t in theirs) and zipf_frequency(after, "en") < function_zipf:
            kinds.append(word)
        elif (theirs and theirs <= core and all(idf(t) >= unseen for t in theirs) and not _VERBAL.search(after)
              and not _CODED.search(after) and zipf_frequency(after, "en") < kind_zipf):
            kinds.append(f"{word} {after}")
    return kinds


_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")  # Japanese, Chinese, Korean
_LETTERS = re.compile(r"[^\W\d_]+")


def in_other_language(question: str, settings: Settings) -> bool:
    """Written in another accepted language: a script without spaces, or `other_language_words` words that are among one
    other language's commonest (`other_language_zipf`) and far rarer in English ("sur", "des"; "Lake Como" has one)."""
    return bool(_UNSPACED.search(question)) or spaced_language(question, settings) is not None


def spaced_language(question: str, settings: Settings) -> str | None:
    """The other accepted language written with spaces that the question is in, by the same count of its commonest words."""
    counts = dict.fromkeys(OTHER_LANGUAGES, 0)
    for word in {w.lower() for w in _LETTERS.findall(question) if not w.isupper()}:
        english = zipf_frequency(word, "en")
        for language in OTHER_LANGUAGES:
            other = zipf_frequency(word, language, wordlist="small")  # their commonest words: 8 MB, not 200
            counts[language] += other >= settings.other_language_zipf and other - english >= settings.other_language_margin
    language = max(counts, key=lambda lang: counts[lang])
    return language if counts[language] >= settings.other_language_words else None


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
    return occurs_keyed(text.replace("×", "x"), thing.replace("×", "x"))


def reports_close(text: str, figures: bool) -> bool:
    """Has the abstract something close to give in place of an absent thing: a result (with a figure, if figures are asked)?"""
    return any(r.role is Role.RESULT and (r.figures or not figures) for r in sentence_roles(text))
