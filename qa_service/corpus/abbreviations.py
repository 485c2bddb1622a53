"""Abbreviations the abstracts define ("Mixture-of-Experts (MoE)"), so that a question in either form finds both.

A paper that writes only "MoE methods" is about mixture-of-experts too, and a question asking
for "RAG" means what another abstract spells out as retrieval-augmented generation. The
definitions are found the way Schwartz and Hearst (2003) find them: a short form in
parentheses after a long form whose words hold the short form's letters in order, the first
letter starting a word. General to scientific writing; nothing is listed by hand.
"""

from __future__ import annotations

import re
from typing import Container, Iterable

# "(XYZ)" after a word: the short form has a capital, two to ten characters, no spaces; the long form is in the words before
_DEFINED = re.compile(r"(?<=\w)\s+\(([A-Za-z][\w²³-]{1,9})\)")  # bounded: no scan to a far ")"
_BEFORE = 120  # characters before "(" the long form is looked for in: eight words
_WORD_LIKE = re.compile(r"[^\W\d_][\w'’-]*")
_WORD = re.compile(r"[^\W_]+")
LONGEST_LONG_FORM = 9  # words of the longest long form a question's phrases are looked up to (eight before "(", and one)
MAX_LONG_FORMS = 3  # a short form defined more ways than this across the corpus (PO, AR...) is too ambiguous to expand


def long_form(words: str, short: str) -> str:
    """The shortest tail of `words` that spells `short` (its letters in order, the first at a word's start); '' if none."""
    letters = [c.lower() for c in short if c.isalnum()]
    if letters and short.endswith("s") and sum(c.isupper() for c in short) > 1:
        letters = letters[:-1]  # LLMs: the plural's s is no word of its own
    text = words.lower()
    at = len(text) - 1
    for index in range(len(letters) - 1, -1, -1):
        first = index == 0
        while at >= 0 and (text[at] != letters[index] or (first and at > 0 and text[at - 1].isalnum())):
            at -= 1
        if at < 0:
            return ""
        at -= 1
    found = words[at + 1 :].strip()
    return found if len(found.split()) <= len(letters) + 1 and len(found) > len(short) else ""


def definitions(texts: Iterable[str]) -> dict[str, list[str]]:
    """Short form -> the long forms the texts define it by, normalised (lower case, hyphens as spaces)."""
    found: dict[str, set[str]] = {}
    for text in texts:
        for short, expanded in defined_in(text):
            found.setdefault(short, set()).add(normal(expanded))
    return {short: sorted(longs) for short, longs in found.items() if len(longs) <= MAX_LONG_FORMS}


def defined_in(text: str) -> list[tuple[str, str]]:
    """(short form, long form as written) for each abbreviation the text defines: "Large Language Models (LLMs)"."""
    pairs = []
    for match in _DEFINED.finditer(text):
        short = match.group(1)
        if short.islower():
            continue  # "(see)", "(e.g)": a short form has a capital
        expanded = long_form(_words_before(text[max(0, match.start() - _BEFORE) : match.start()]), short)
        if expanded:
            pairs.append((short, expanded))
    return pairs


def _words_before(window: str) -> str:
    """The last eight words before "(", back to the first that is no plain word (a comma, a figure, a bracket)."""
    tail: list[str] = []
    for token in reversed(window.split()[-8:]):
        if not _WORD_LIKE.fullmatch(token):
            break
        tail.append(token)
    return " ".join(reversed(tail))


def normal(text: str) -> str:
    """'Mixture-of-Experts' -> 'mixture of experts': the form a question's words are compared in."""
    return " ".join(_WORD.findall(text.lower()))


def expansions(question: str, defined: dict[str, list[str]], by_long: dict[str, str]) -> list[tuple[str, str]]:
    """(the form the question writes, its other form) for each abbreviation it uses: the short form of a long form it
    spells out, the long forms of a short form it uses (as written: "MoE", not "moe" inside a word)."""
    found = [(phrase, by_long[phrase]) for phrase in phrases_in(normal(question).split(), by_long)]
    tokens = set(re.findall(r"[\w²³-]+", question))
    found += [(short, long) for short, longs in defined.items() if short in tokens for long in longs]
    return list(dict.fromkeys(found))


def phrases_in(words: list[str], table: Container[str]) -> list[str]:
    """The runs of up to LONGEST_LONG_FORM of these (normalised) words that `table` holds, in the order they start."""
    runs = (" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, min(len(words), i + LONGEST_LONG_FORM) + 1))
    return [run for run in runs if run in table]


def by_long_form(defined: dict[str, list[str]]) -> dict[str, str]:
    """Long form -> short form, for the look-up of a question's phrases."""
    return {long: short for short, longs in defined.items() for long in longs}
