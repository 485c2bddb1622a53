"""A question in another language, read for an English corpus: its words' English terms, found in the corpus's vocabularies.

Two readings come out (`Reading`): the question with the English terms beside its words, which BM25, the judge and the
offline model's word tests read; and its English words alone, which retrieval's dense side and the offline model's choice
of sentences embed in its place. MiniLM was trained on English: fed the mixed text, it meets mostly words it cannot read
("trabajos", "的") and places the question far from the abstracts that answer it."""

from __future__ import annotations

import re

from wordfreq import zipf_frequency

from .evidence import spaced_language
from ..config import Settings
from ..corpus.labels import is_name_like
from ..records import Reading
from ..store.chinese import GlossRules, has_han
from ..store.cognates import CognateRules
from ..store.katakana import has_katakana
from ..store.scope import Scope

_WORD = re.compile(r"[\w²³]+(?:[-.'][\w²³]+)*")
_ASCII_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9²³]*(?:[-.][A-Za-z0-9²³]+)*")  # a Latin-script word inside Chinese or Japanese


class Bridge:
    """Reads questions against the vocabularies of a request's corpora, by the settings' rules."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._cognate_rules = CognateRules(settings.cognate_min_stem, settings.cognate_letters_per_edit, settings.cognate_common_zipf,
                                           settings.max_typo_lookups, settings.cognate_suffix_letters)
        self._gloss_rules = GlossRules(settings.chinese_min_chars, settings.chinese_senses, settings.chinese_sense_words)
        self._katakana_rules = GlossRules(settings.katakana_min_chars, settings.chinese_senses, settings.chinese_sense_words)

    def read(self, question: str, scope: Scope) -> Reading:
        """A question in Spanish, Portuguese, French or German with, after each of its words that is a cognate of a term of
        the corpus, that term's English word ("métodos de interpretabilidad (interpretation)"). A question in Chinese
        characters, or Japanese katakana, is followed by its words' English senses ("...过程奖励模型... (process reward model)"),
        after the question rather than in it: its own words stay whole for the question's reading ("多少" asks for a figure).
        Its meaning, with `english_reading` on, is its English words alone in its order. Others are read as asked."""
        chinese = bool(self.settings.chinese_min_chars and has_han(question))
        katakana = bool(self.settings.katakana_min_chars and has_katakana(question))
        if chinese or katakana:
            gloss = scope.glosses(lambda lexical: lexical.chinese(question, self._gloss_rules)) if chinese else {}
            if katakana:
                gloss.update(scope.glosses(lambda lexical: lexical.katakana(question, self._katakana_rules)))
            if not gloss:
                return Reading(question)
            text = f"{question} ({' '.join(gloss[word] for word in sorted(gloss, key=question.find))})"
            return Reading(text, _unspaced_meaning(question, gloss) if self.settings.english_reading else "")
        language = spaced_language(question, self.settings) if self.settings.cognate_min_stem else None
        if language is None:
            return Reading(question)
        gloss = scope.glosses(lambda lexical: lexical.cognates(question, language, self._cognate_rules))
        if not gloss:
            return Reading(question)
        text = question
        for word, english in gloss.items():
            text = re.sub(rf"(?<![\w-]){re.escape(word)}(?![\w-])", lambda m: f"{m.group()} ({english})", text, count=1)
        return Reading(text, self._spaced_meaning(question, gloss, language) if self.settings.english_reading else "")

    def _spaced_meaning(self, question: str, gloss: dict[str, str], language: str) -> str:
        """Each word as English has it: its cognate's term, or the word itself when it is a name ("LLMs", "GPT-4o"), English
        uses it at least as often as its language does ("benchmark", "reasoning"), or it is a word of its language with no English
        term in the corpus ("federado": what the question is about that the abstracts are not); the words it asks with, those
        its language uses at least `cognate_common_zipf` ("sobre", "welche"), go."""
        words = []
        for word in _WORD.findall(question):
            if word in gloss:
                words.append(gloss[word])
            elif (is_name_like(word) or word.isupper() or any(c.isdigit() for c in word) or _english(word, language)
                  or zipf_frequency(word.lower(), language, wordlist="small") < self.settings.cognate_common_zipf):
                words.append(word)
        return _meaning(words, question)


def _unspaced_meaning(question: str, gloss: dict[str, str]) -> str:
    """The question's Latin-script words (names, "LLM") and its glossed words' senses, in the question's order."""
    placed = [(m.start(), m.group()) for m in _ASCII_WORD.finditer(question)]
    placed += [(question.find(word), english) for word, english in gloss.items()]
    return _meaning([word for _, word in sorted(placed, key=lambda pair: pair[0])], question)


def _english(word: str, language: str) -> bool:
    """English has the word, at least as often as the question's language does ("benchmark"; not "décodage", in neither list)."""
    english = zipf_frequency(word.lower(), "en")
    return english > 0 and english >= zipf_frequency(word.lower(), language, wordlist="small")


def _meaning(words: list[str], question: str) -> str:
    meaning = " ".join(words)
    return meaning if meaning and meaning != question else ""
