"""Which paper a question names: exact, case- and hyphen-blind, or within a small typo budget.

Names are the name-shaped words of each abstract and its one-word label, gathered when
the lexical index is built. A question's words (and adjacent pairs, for "Router Arena")
are compared by a normalised key, so K²-Agent, k2-agent and "K2 Agent" are one name, in
any language around them; a word that is no name and no corpus word is matched within an
edit budget that grows with its length (optimal string alignment, so a swap of two letters
is one edit; rapidfuzz, C speed at 20,000 papers). Digits must agree: a version is another name.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import AbstractSet, Callable, Iterable

from rapidfuzz import process
from wordfreq import zipf_frequency
from rapidfuzz.distance import OSA

from ..config import Settings
from .abbreviations import normal, phrases_in
from .labels import HYPHEN, VERSION_DOT, is_name_like, name_candidates
from ..records import NameMatch

_WORD = re.compile(rf"(?:[\w²³'’\-\u2010\u2011]|{VERSION_DOT})+")
_POSSESSIVE = re.compile(r"['’]s$")
_LIKENESS = {"style", "like", "based", "inspired", "type", "esque", "ish", "alike", "artig", "ähnlich", "similar"}  # "X-style": akin to X


_TITLE_NAME = re.compile(r"^\s*([^\W_][\w.+-]{1,38}[\w+]):\s")  # one word, then ": " and the rest of the title


def own_names(label: str) -> list[str]:
    """What a paper calls itself: its label, and a title's one word before the colon ("Ember: Stable 4-bit Training"
    is Ember), how a question names a titled paper."""
    label = label.strip()
    titled = _TITLE_NAME.match(label)
    return [label, titled.group(1)] if titled else [label]


def own_keys(label: str) -> set[str]:
    """The name keys of what a paper calls itself (own_names), to match against a question's or a text's names."""
    return {name_key(name) for name in own_names(label)}


def name_key(text: str) -> str:
    """RouterArena, router-arena, 'Router Arena', K²-Agent -> routerarena, k2agent."""
    return "".join(c for c in unicodedata.normalize("NFKC", text).lower() if c.isalnum())


_LATER_VERSION = re.compile(r"[.,]?\d")  # "GPT-4" before ".1", "H10" before "0": the front of another name
_EARLIER_VERSION = re.compile(r"\d[.,]?$")  # "7B" after "1.": the tail of another size


def _apart(text: str, start: int, end: int, name: str) -> bool:
    """Does the name at text[start:end] stand as itself, not as the front or the tail of a longer version?"""
    if name[-1:].isdigit() and _LATER_VERSION.match(text, end):
        return False
    return not (name[:1].isdigit() and _EARLIER_VERSION.search(text[max(0, start - 2):start]))


def occurs(text: str, name: str) -> bool:
    """The name stands in the text as the thing it names: GPT-4 does not occur in "GPT-4.1", nor Qwen2 in
    "Qwen2.5-7B", nor 7B in "Qwen3-1.7B"; a version is another model. Both as given (the caller folds case)."""
    start = text.find(name)
    while start >= 0:
        if _apart(text, start, start + len(name), name):
            return True
        start = text.find(name, start + 1)
    return False


@lru_cache(maxsize=2048)  # the same abstracts are asked about each name of each question
def _keyed(text: str) -> tuple[str, tuple[int, ...]]:
    """The text's name key, and where in the text each of its characters stands."""
    chars: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        for k in unicodedata.normalize("NFKC", c).lower():
            if k.isalnum():
                chars.append(k)
                where.append(i)
    return "".join(chars), tuple(where)


def occurs_keyed(text: str, thing: str) -> bool:
    """`occurs` in any spelling of the name (case, hyphens, spaces: "Router Arena" is RouterArena), its version kept."""
    key = name_key(thing)
    if not key:
        return False
    keyed, where = _keyed(text)
    start = keyed.find(key)
    while start >= 0:
        first, last = where[start], where[start + len(key) - 1]
        if _apart(text, first, last + 1, key):
            return True
        start = keyed.find(key, start + 1)
    return False


def paper_names(label: str, texts: Iterable[str]) -> set[str]:
    """The names a paper can be called by: the name-shaped words of its text, its label when one word,
    and the one word before a title's colon ("Murmur: Streaming Speech Recognition..."), which is how
    papers call themselves even when the name is an ordinary word."""
    names = {n for text in texts for n in name_candidates(text)}
    return names | {n for n in own_names(label or "") if n and " " not in n}


def lowercase_words(texts: Iterable[str]) -> set[str]:
    """The words a corpus writes in lower case: 'math' in 'math tasks' is a word, whatever 'MATH' names."""
    return {w for text in texts for w in _WORD.findall(text) if w.islower()}


def build_name_book(names_by_paper: dict[str, set[str]], max_papers: int, words: AbstractSet[str] = frozenset()) -> dict[str, dict]:
    """key -> {name, papers, word}; a name shared by more than `max_papers` papers names no one paper.

    `word` marks a name the corpus also uses as an ordinary lower-case word (the MATH benchmark
    and "math"): typed in lower case, it is that word, not the name."""
    book: dict[str, dict] = {}
    word_keys = {name_key(w) for w in words}  # "multi-agent" is the word "Multi‑Agent" (any hyphen) is typed as
    for pid, names in names_by_paper.items():
        for name in names:
            key = name_key(name)
            if len(key) >= 3:
                entry = book.setdefault(key, {"name": name, "papers": [], "word": key in word_keys})
                entry["papers"].append(pid)
    return {k: v for k, v in book.items() if len(v["papers"]) <= max_papers}


def _names_it(typed: str, entry: dict) -> bool:
    """An exact key match names the paper, unless the name is also a corpus word typed as that word."""
    return not (entry.get("word") and typed.islower())


OTHER_LANGUAGES = ("es", "pt", "fr", "de")  # the accepted languages written with spaces, besides English
# a word is another language's ("Architekturen") when that language uses it ten times as often as English does (Zipf + 1):
# "Flash-Shepherd" joins an English word, and stays a name
_FOREIGN_MARGIN = 1.0


def joined_name(word: str) -> list[str]:
    """The name in a name joined to an ordinary word ("MMEVOKE-Benchmark", "RLP-Arbeit"); none in a version or a
    compound of names (GPT-5, Qwen3-8B: digits make another name), nor in "GPTQ-style" (like GPTQ, not it)."""
    parts = HYPHEN.split(word)
    if parts[-1].lower() in _LIKENESS:
        return []
    names = [p for p in parts if is_name_like(p)]
    words = [p for p in parts if p.isalpha() and len(p) >= 3 and not is_name_like(p)]
    return names if len(names) == 1 and len(names) + len(words) == len(parts) else []


def _digits(key: str) -> str:
    return "".join(c for c in key if c.isdigit())


def _family(key: str) -> str:
    """A name key with each run of digits as one mark: eagle3 and eagle4 are one family, gpt4o another than gpt5."""
    return re.sub(r"\d+", "#", key)


_NAMED_FAMILY = re.compile(r"[a-z]{3}")  # a family named by letters (EAGLE, GPT), not a size or a count (12B, 7B)


def typo_budget(length: int, settings: Settings) -> int:
    """Edits allowed for a word of this length: none for short words, more for long ones."""
    if length < settings.name_typo_min_length:
        return 0
    return 1 if length < settings.name_typo_two_edits_length else 2


def spelt_out_names(defined: dict[str, list[str]], labels: Iterable[str], book: dict[str, dict]) -> dict[str, str]:
    """Long form -> name key, for the short forms that are a paper's own name (its label, "TRM") and name one paper in
    `book`; a general abbreviation ("mixture of experts" for MoE) stays a topic, not a paper."""
    own = {key for label in labels for key in own_keys(label)}
    return {long: name_key(short) for short, longs in defined.items() if name_key(short) in own and name_key(short) in book
            for long in longs if len(long.split()) > 1}


class NameResolver:
    """Resolves a question's words against the corpus's names."""

    def __init__(self, book: dict[str, dict], known_word: Callable[[str], bool], settings: Settings,
                 spelt_out: dict[str, str] | None = None):
        """`spelt_out`: a paper's own short name's long form, as the abstracts define it -> the name's key in `book`
        ("tool call reward model" -> trm): a question that spells the name out calls the paper."""
        self.book = book
        self.spelt_out = spelt_out or {}
        self.keys = list(book)
        self.known_word = known_word
        self.settings = settings
        self._versions: dict[str, list[str]] = {}  # a name's letters -> the version numbers the corpus writes it with
        for key in self.keys:
            if _digits(key) and _NAMED_FAMILY.search(_family(key)):
                self._versions.setdefault(_family(key), []).append(_digits(key))

    def closest(self, key: str, budget: int) -> str | None:
        """The name key within `budget` edits of `key`: one scan of every name in the corpus."""
        found = process.extractOne(key, self.keys, scorer=OSA.distance, score_cutoff=budget)
        if found is None or _digits(found[0]) != _digits(key):  # FlashAttention-3 is not FlashAttention
            return None
        return found[0]

    def resolve(self, question: str) -> tuple[list[NameMatch], list[str]]:
        """(names matched, name-shaped words that match nothing in the corpus).

        Only the first `max_typo_lookups` words that could be typos are looked up, each a scan of
        every name: a question's work stays bounded however many name-shaped words it holds."""
        words = [_POSSESSIVE.sub("", w).strip("'’-\u2010\u2011") for w in _WORD.findall(question)[: self.settings.max_question_words]]
        words = [w for w in words if w]
        # a name typed as two words ("Router Arena", "k2 agent", "VI 2N"); two short lower-case words are the sentence's own
        # ("problemas de código o de software": "o de" is no ODE), as a short word is never a name a typo away
        pairs = [(f"{a} {b}", name_key(a + b)) for a, b in zip(words, words[1:])]
        candidates = [(w, name_key(w)) for w in words] + [
            (typed, key) for typed, key in pairs if not (typed.islower() and len(key) < self.settings.name_typo_min_length)]
        candidates += [(part, name_key(part)) for w in words if name_key(w) not in self.book for part in joined_name(w)]
        known = {w: self.known_word(w) for w in words}  # each word analysed once
        matches: dict[str, NameMatch] = {}
        covered: set[str] = set()
        for typed, key in candidates:
            entry = self.book.get(key) if len(key) >= 3 else None
            if entry is not None and _names_it(typed, entry):
                matches.setdefault(key, NameMatch(typed, entry["name"], tuple(entry["papers"]), True))
                covered.update(typed.split())
        for phrase in self._spelt(question):
            entry = self.book[self.spelt_out[phrase]]
            matches.setdefault(self.spelt_out[phrase], NameMatch(phrase, entry["name"], tuple(entry["papers"]), True))
            covered.update(w for w in words if set(normal(w).split()) <= set(phrase.split()))
        covered.update(w for w in words if any(part in covered for part in HYPHEN.split(w)))
        lookups = 0
        for typed, key in candidates:
            if typed in covered or " " in typed or key in self.book or known.get(typed, True):  # a joined part is matched exactly only
                continue
            if self.settings.respell_zipf and zipf_frequency(typed.lower(), "en") >= self.settings.respell_zipf:
                continue  # a word of the language ("Claude", "clause") is what was typed, not a misspelt name (CLAUSE)
            budget = typo_budget(len(key), self.settings)
            if budget and self.keys and lookups < self.settings.max_typo_lookups:
                lookups += 1
                found = self.closest(key, budget)
                if found is not None:
                    entry = self.book[found]
                    matches.setdefault(found, NameMatch(typed, entry["name"], tuple(entry["papers"]), False))
                    covered.add(typed)
        unknown = [w for w in words if is_name_like(w) and w not in covered
                   and (not known[w] or self._other_version(name_key(w))) and not self._headed(w)]
        return list(matches.values()), list(dict.fromkeys(unknown))

    def _spelt(self, question: str) -> list[str]:
        """The long forms of papers' own short names the question writes ("the Tool-call Reward Model"), longest first."""
        if not self.spelt_out:
            return []
        words = normal(question).split()[: self.settings.max_question_words]
        return sorted(set(phrases_in(words, self.spelt_out)), key=len, reverse=True)

    def _other_version(self, key: str) -> bool:
        """A version of a name the corpus writes only with other numbers ("EAGLE-4" where abstracts name EAGLE-2 and
        EAGLE-3): its parts are words of the corpus, but the thing is not ("Qwen2" is of Qwen2.5's family, 2 before .5)."""
        written = _digits(key)
        found = self._versions.get(_family(key), [])
        return bool(written and found) and not any(v.startswith(written) or written.startswith(v) for v in found)

    def _headed(self, word: str) -> bool:
        """A term of the corpus with a word of the question's language joined after it ("Mixture-of-Experts-Architekturen",
        "Diffusion-Modelle"): the compound names the term, nothing the abstracts lack."""
        parts = HYPHEN.split(word)
        head = parts[-1]
        if len(parts) < 2 or not head.isalpha() or len(head) < 3 or is_name_like(head):
            return False
        english = zipf_frequency(head, "en")
        foreign = any(zipf_frequency(head, language) > english + _FOREIGN_MARGIN for language in OTHER_LANGUAGES)
        return foreign and self.known_word("-".join(parts[:-1]))
