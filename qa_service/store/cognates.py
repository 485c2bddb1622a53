"""The English terms of the corpus that a Spanish, Portuguese, French or German question's words are cognates of.

The abstracts are English and MiniLM reads English: "¿Qué trabajos proponen métodos de interpretabilidad?" shares no
word with an abstract on interpretability, so retrieval, the relevance judgement and the choice of sentences see nothing
of its topic. Scientific vocabulary is mostly shared across these languages: stemmed in its own language
("interpretabilidad" -> interpret, "cuantización" -> cuantiz) a word is the corpus's English stem, or one edit from it per
`cognate_letters_per_edit` letters (quantiz), or is one with a derivational suffix of its own of at most
`cognate_suffix_letters` letters ("Kalibrierung" -> kalibrier, calibr and -ier). A word with a derivational ending whose
English ending is known (-ción/-ção -tion, -idad/-ité -ity, -ierung -ation: `ENDINGS`, the languages' morphology, not
this corpus's words) is first respelt with it and compared whole with the English words of the corpus's terms
("inicialización" -> inicialization, one edit from initialization, whose stem initi is too short to look up). The match
is against the corpus's own vocabulary, so a gloss only ever
names a term some abstract uses; each is given as the commonest English word of that stem (wordfreq, installed), which
is what an embedder reads (a respelt word is glossed as the English word it matched). No dictionary: a word with no cognate ("Beobachtbarkeit", "navegador") adds nothing.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Callable, Collection

import Stemmer
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein
from wordfreq import iter_wordlist, zipf_frequency

from .filters import normalize

STEMMERS = {"es": "spanish", "pt": "portuguese", "fr": "french", "de": "german"}
# derivational endings of a language and the English ones they correspond to, longest first (Romance -ción/-ção is
# English -tion, -dad/-dade/-ité -ity, -mente/-ement -ly; German -isierung -ization, -ierung -ation, -ität -ity); where
# English has two ("evaluado": evaluated, "entrenado"... trained), the closer word wins
ENDINGS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "es": (("idades", ("ities",)), ("idad", ("ity",)), ("ciones", ("tions",)), ("cion", ("tion",)), ("siones", ("sions",)),
           ("sion", ("sion",)), ("mente", ("ly",)), ("encia", ("ence", "ency")), ("ancia", ("ance", "ancy")),
           ("ados", ("ed", "ated")), ("adas", ("ed", "ated")), ("ado", ("ed", "ated")), ("ada", ("ed", "ated")),
           ("icos", ("ic", "ical")), ("icas", ("ic", "ical")), ("ico", ("ic", "ical")), ("ica", ("ic", "ical")),
           ("ivos", ("ive",)), ("ivas", ("ive",)), ("ivo", ("ive",)), ("iva", ("ive",))),
    "pt": (("idades", ("ities",)), ("idade", ("ity",)), ("coes", ("tions",)), ("cao", ("tion",)), ("soes", ("sions",)),
           ("sao", ("sion",)), ("mente", ("ly",)), ("encia", ("ence", "ency")), ("ancia", ("ance", "ancy")),
           ("ados", ("ed", "ated")), ("adas", ("ed", "ated")), ("ado", ("ed", "ated")), ("ada", ("ed", "ated")),
           ("icos", ("ic", "ical")), ("icas", ("ic", "ical")), ("ico", ("ic", "ical")), ("ica", ("ic", "ical")),
           ("ivos", ("ive",)), ("ivas", ("ive",)), ("ivo", ("ive",)), ("iva", ("ive",))),
    "fr": (("isations", ("izations",)), ("isation", ("ization",)), ("ites", ("ities",)), ("ite", ("ity",)),
           ("iques", ("ic", "ics", "ical")), ("ique", ("ic", "ics", "ical")), ("ement", ("ly",)), ("ees", ("ed", "ated")),
           ("ee", ("ed", "ated")), ("ifs", ("ive",)), ("ives", ("ive",)), ("if", ("ive",)), ("ive", ("ive",))),
    "de": (("isierungen", ("izations",)), ("isierung", ("ization",)), ("ierungen", ("ations",)), ("ierung", ("ation",)),
           ("itaten", ("ities",)), ("itat", ("ity",)), ("isch", ("ic", "ical")), ("iert", ("ed", "ated")), ("ieren", ("", "e", "ate"))),
}
EXACT_STEM_LETTERS = 5  # a stem the corpus has as it stands counts from five letters ("pilotent": pilot; "navigateur": navig)
RESPELT_EDITS = 1  # a respelt word is its English cognate but for one sound's spelling (c for t, a single f for ff)...
RESPELT_EDIT_LETTERS = 8  # ... in a word of at least this many letters: a shorter one is as near a false friend ("lignée" -> signed)
_WORD = re.compile(r"[^\W\d_]+")


def _ending(plain: str, language: str) -> tuple[str, tuple[str, ...]] | None:
    """The derivational ending of a (folded) word in its language with the English endings it corresponds to, if any."""
    return next(((e, english) for e, english in ENDINGS.get(language, ()) if plain.endswith(e) and len(plain) - len(e) >= 3), None)


@dataclass(frozen=True)
class CognateRules:
    """How cognates are found (the `cognate_*` settings): `min_stem`, shorter stems are never matched; `letters_per_edit`,
    one edit allowed per this many letters of the shorter stem (none below it); `common_zipf`, a word its own language or
    English uses at least this often is a function or asking word ("sobre", "welche"; "control"), never glossed;
    `most_lookups`, words matched within the edit budget per question, each a scan of the vocabulary's stems of about its
    length (a question's work stays bounded); `suffix_letters`, a stem with no cognate of its length may be one with a
    derivational suffix of its own of at most this many letters ("kalibrier" is calibr and -ier)."""

    min_stem: int = 6
    letters_per_edit: int = 6
    common_zipf: float = 5.0
    most_lookups: int = 16
    suffix_letters: int = 4


class CognateBook:
    """Cognates of one corpus vocabulary (BM25's stems); built on first use, read-only after."""

    def __init__(self, vocabulary: Collection[str], english_stem: Callable[[str], str], rules: CognateRules | None = None):
        """`english_stem`: a word as the vocabulary's stemmer has it."""
        self.stem = english_stem
        self.rules = rules = rules or CognateRules()
        self._by_length: dict[int, list[str]] = {}
        for term in vocabulary:
            if term.isalpha() and term.isascii() and len(term) >= rules.min_stem:
                self._by_length.setdefault(len(term), []).append(term)
        self._vocabulary = frozenset(vocabulary)
        self._stemmers = {language: Stemmer.Stemmer(name) for language, name in STEMMERS.items()}
        self._english: list[str] | None = None  # English words that may be a term's word, sorted, for its commonest
        self._rank: dict[str, int] = {}
        self._whole: dict[int, list[str]] | None = None  # English words of the corpus's terms, by length
        self._order: dict[str, int] = {}  # ... each with its rank in English

    def gloss(self, question: str, language: str) -> dict[str, str]:
        """Each word of the question (in `language`) that is a cognate of a corpus term, with that term's English word."""
        stemmer = self._stemmers.get(language)
        if stemmer is None:
            return {}
        found: dict[str, str] = {}
        scans = 0
        for word in dict.fromkeys(_WORD.findall(question)):
            if len(word) < self.rules.min_stem or zipf_frequency(word.lower(), language, wordlist="small") >= self.rules.common_zipf:
                continue
            if self.stem(word) in self._vocabulary:
                continue  # the corpus's word already ("agents", "mobile")
            own = normalize(stemmer.stemWord(word.lower()))  # accents off, ß as ss: caracteristic
            plain = normalize(word)
            ending = _ending(plain, language)
            if own not in self._vocabulary or ending:
                if scans >= self.rules.most_lookups:
                    continue
                scans += 1
            respelt = self._respelt(plain, ending) if ending else None  # "inicialización": initialization
            term = None if respelt else self._match(own)
            english = respelt or (self._surface(term) if term is not None else "")
            if english and zipf_frequency(english, "en") < self.rules.common_zipf:  # "control", "model" say little of a topic
                found[word] = english
        return found

    def _match(self, stem: str) -> str | None:
        """The vocabulary's stem this one is (`EXACT_STEM_LETTERS` on), or is within the edit budget of (the nearest), else the
        one its start is before a suffix of its own (`cognate_min_stem` on: an edit is what makes a false friend likely);
        None when none is."""
        if stem in self._vocabulary and len(stem) >= EXACT_STEM_LETTERS:
            return stem
        if len(stem) < self.rules.min_stem:
            return None
        most = len(stem) // self.rules.letters_per_edit
        best: tuple[int, str] | None = None
        for n in range(len(stem) - most, len(stem) + most + 1):
            edits = min(n, len(stem)) // self.rules.letters_per_edit  # per letter of the shorter of the two
            if not edits or n not in self._by_length:
                continue
            match = process.extractOne(stem, self._by_length[n], scorer=Levenshtein.distance, score_cutoff=edits)
            if match is not None and (best is None or (match[1], str(match[0])) < best):
                best = (int(match[1]), str(match[0]))
        if best is None:  # a derivational suffix of its own: kalibrier -> calibr, observabil -> observ
            for n in range(max(self.rules.min_stem, len(stem) - self.rules.suffix_letters), len(stem)):
                if n not in self._by_length:
                    continue
                edits = n // self.rules.letters_per_edit
                match = process.extractOne(stem[:n], self._by_length[n], scorer=Levenshtein.distance, score_cutoff=edits)
                if match is not None and (best is None or (match[1], str(match[0])) < best):
                    best = (int(match[1]), str(match[0]))
        return best[1] if best is not None else None

    def _respelt(self, plain: str, ending: tuple[str, tuple[str, ...]]) -> str | None:
        """The English word of a corpus term a word (`plain`: folded) is once its derivational ending is the English one it
        corresponds to ("inicialización" -> inicialization: initialization; "Kalibrierung" -> kalibration: calibration),
        whole words compared (a long English word's stem is short: initialization -> initi), `RESPELT_EDITS` apart at
        most; None when no word is that close."""
        own, english = ending
        words = self._words()
        best: tuple[int, int, str] | None = None
        for respelt in (plain[: len(plain) - len(own)] + e for e in english):
            if len(respelt) < self.rules.min_stem:
                continue  # "basada" -> based is one edit from biased: a short word has too many neighbours
            edits = RESPELT_EDITS if len(respelt) >= RESPELT_EDIT_LETTERS else 0
            for n in range(len(respelt) - edits, len(respelt) + edits + 1):
                match = process.extractOne(respelt, words.get(n, []), scorer=Levenshtein.distance, score_cutoff=edits)
                if match is not None and (best is None or (match[1], self._order[match[0]]) < best[:2]):
                    best = (int(match[1]), self._order[match[0]], str(match[0]))  # the commonest of equally close words
        return best[2] if best is not None else None

    def _words(self) -> dict[int, list[str]]:
        """English words (wordfreq) that stem to a corpus term, by length: what a respelt word is matched against."""
        if self._whole is None:
            words = [w for w in iter_wordlist("en") if len(w) >= self.rules.min_stem and w.isascii() and w.isalpha()]
            whole: dict[int, list[str]] = {}
            order: dict[str, int] = {}
            for w in words:
                if self.stem(w) in self._vocabulary:
                    whole.setdefault(len(w), []).append(w)
                    order[w] = len(order)  # wordfreq lists the commonest first
            self._order = order
            self._whole = whole  # last: a request thread seeing it sees the whole list and its order
        return self._whole

    def _surface(self, term: str) -> str:
        """The commonest English word BM25 stems to this term ("interpret" -> interpretation), else the term itself. A stem
        may end as no word does ("auditori" of auditory) and be shorter than `cognate_min_stem` ("evalu", exact): words
        are read from the term's start less its last letter."""
        begin = EXACT_STEM_LETTERS - 1  # the start every word read here shares with its term (a term has five letters or more)
        if self._english is None:  # only words that begin as some term does: a few MB, not the 40 of all English
            starts = {t[:begin] for t in self._vocabulary if len(t) >= EXACT_STEM_LETTERS and t.isascii() and t.isalpha()}
            words = [w for w in iter_wordlist("en") if w[:begin] in starts and w.isascii() and w.isalpha()]
            self._rank = {w: i for i, w in enumerate(words)}  # wordfreq lists the commonest first
            self._english = sorted(words)
        head = term[:-1]
        start = bisect.bisect_left(self._english, head)
        best = None
        for word in self._english[start:]:
            if not word.startswith(head):
                break
            if self.stem(word) == term and (best is None or self._rank[word] < self._rank[best]):
                best = word
        return best or term
