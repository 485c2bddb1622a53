"""The English terms of the corpus that the katakana words of a Japanese question mean, by JMdict.

Japanese writes the terms of a field it borrowed in katakana, as they sound: "キャリブレーション" is calibration,
"ファインチューニング" fine-tuning. MiniLM and BM25 read neither the script nor the sound, and CC-CEDICT (`chinese.py`)
reads only the question's kanji, so "キャリブレーション指標では捉えられないグルーピング損失" reached retrieval as "indicator"
and "loss". JMdict (the `jamdict-data` package, installed: nothing is downloaded) gives each word its English senses; as
for Chinese, a sense is kept only when it is short and all its words are the corpus's own, so a gloss only ever names
what some abstract says. A run of katakana is one word, or a compound of the dictionary's words ("マルチエージェント"):
it is cut by longest match, as the Chinese reader cuts.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path

from .chinese import GlossRules, longest_cut, term_senses

_RUN = re.compile("[\u30a1-\u30fa\u30fc]+")  # katakana and the long-vowel mark; the middle dot (・) parts words
_WORD = re.compile("^[\u30a1-\u30fa\u30fc]+$")
# every English sense of every headword that starts in katakana, in the dictionary's order (entry, sense, gloss)
_QUERY = """
SELECT k.text, g.text FROM Kana k JOIN Sense s ON s.idseq = k.idseq JOIN SenseGloss g ON g.sid = s.ID
WHERE g.lang = 'eng' AND k.text GLOB '[ァ-ヺー]*' ORDER BY k.ID, s.ID, g.rowid
"""


def has_katakana(text: str) -> bool:
    """Does the text hold a katakana word (a Japanese loanword)?"""
    return bool(_RUN.search(text))


def dictionary_path() -> Path:
    """JMdict as the jamdict-data package installs it (an SQLite file)."""
    import jamdict_data

    return Path(jamdict_data.JAMDICT_DB_PATH)


class KatakanaGlossary:
    """The corpus's English senses of JMdict's katakana words, for one vocabulary (BM25's stems); built on first use,
    read-only after. `terms_each` gives the content terms of many texts at once, as BM25 stems them."""

    def __init__(self, vocabulary: Collection[str], terms_each: Callable[[list[str]], list[set[str]]],
                 rules: GlossRules | None = None, path: Path | None = None):
        rules = rules or GlossRules()
        every: dict[str, list[str]] = {}  # headword -> its term-like senses, the dictionary's order
        uri = (path or dictionary_path()).resolve().as_uri() + "?mode=ro&immutable=1"  # never written, never locked
        with sqlite3.connect(uri, uri=True) as db:
            for word, gloss in db.execute(_QUERY):
                if not _WORD.match(word):
                    continue
                have = every.setdefault(word, [])
                have.extend(s for s in term_senses(gloss.replace("-", " "), rules.sense_words) if s not in have)
        self.words = frozenset(every)  # every headword, to cut a run where its readers would
        self.longest = max(map(len, self.words), default=1)
        known = frozenset(vocabulary)
        heads = [(word, sense) for word, senses in every.items() if len(word) >= rules.min_chars for sense in senses[: rules.senses]]
        terms = terms_each([sense for _, sense in heads])
        self.senses: dict[str, str] = {}  # headword -> its first sense the corpus's words say
        for (word, sense), said in zip(heads, terms):
            if said and said <= known:
                self.senses.setdefault(word, sense)

    def gloss(self, question: str) -> dict[str, str]:
        """Each katakana word of the question that has an English sense the corpus says, with that sense, in the
        question's order."""
        found: dict[str, str] = {}
        for run in _RUN.findall(question):
            for word in self.cut(run):
                sense = self.senses.get(word)
                if sense and word not in found:
                    found[word] = sense
        return found

    def cut(self, run: str) -> list[str]:
        """A run of katakana as the dictionary's words, the longest first from the left."""
        return longest_cut(run, self.words, self.longest)
