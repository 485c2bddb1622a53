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

from .chinese import Glossary, GlossRules, term_senses

_RUN = re.compile("[\u30a1-\u30fa\u30fc]+")  # katakana and the long-vowel mark; the middle dot (・) parts words
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


class KatakanaGlossary(Glossary):
    """The corpus's English senses of JMdict's katakana words, for one vocabulary (BM25's stems). `terms_each` gives the
    content terms of many texts at once, as BM25 stems them."""

    script = _RUN

    def __init__(self, vocabulary: Collection[str], terms_each: Callable[[list[str]], list[set[str]]],
                 rules: GlossRules | None = None, path: Path | None = None):
        rules = rules or GlossRules()
        every: dict[str, list[str]] = {}  # headword -> its term-like senses, the dictionary's order
        uri = (path or dictionary_path()).resolve().as_uri() + "?mode=ro&immutable=1"  # never written, never locked
        with sqlite3.connect(uri, uri=True) as db:
            for word, gloss in db.execute(_QUERY):
                if not _RUN.fullmatch(word):
                    continue
                have = every.setdefault(word, [])
                have.extend(s for s in term_senses(gloss.replace("-", " "), rules.sense_words) if s not in have)
        self.words = frozenset(every)
        self.longest = max(map(len, self.words), default=1)
        known = frozenset(vocabulary)
        heads = [(word, sense) for word, senses in every.items() if len(word) >= rules.min_chars for sense in senses[: rules.senses]]
        terms = terms_each([sense for _, sense in heads])
        self.senses = {}
        for (word, sense), said in zip(heads, terms):
            if said and said <= known:
                self.senses.setdefault(word, sense)
