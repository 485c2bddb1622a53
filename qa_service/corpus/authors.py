"""Which of the corpus's authors a question names, looked up in the papers' metadata, never their text.

An author is named by the full name ("Grace Hopper", any case), by initials and surname
("G. Hopper", "E. W. Dijkstra"), or by a full given name where the corpus keeps only initials.
A surname alone names no one: "Hopper" or "Long" may be an ordinary word.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..records import NameMatch

_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’-](?=[^\W\d_]))*\.?")
_POSSESSIVE = re.compile(r"['’]s$")


def fold(word: str) -> str:
    """Gödel, GÖDEL, Godel -> godel; "W." -> w; "Lovelace's" -> lovelace."""
    word = _POSSESSIVE.sub("", word.rstrip("."))
    plain = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return plain.casefold()


@dataclass(frozen=True)
class AuthorName:
    """An author as the corpus writes them, split into given names (or initials) and a surname, folded."""

    shown: str
    given: tuple[str, ...]
    surname: str


def given_first(name: str) -> str:
    """'Lovelace, Ada' -> 'Ada Lovelace': the one comma of a name sets the surname first; anything else is as written."""
    if name.count(",") != 1:
        return name
    last, first = name.split(",")
    return f"{first.strip()} {last.strip()}"


def parse_author(name: str) -> AuthorName | None:
    """'Ada Lovelace', 'Lovelace, Ada', 'John von Neumann'; None for a one-word name or one with digits (a collaboration)."""
    shown = " ".join(name.split())
    if any(c.isdigit() for c in shown):
        return None
    shown = given_first(shown)
    keys = [k for k in (fold(w) for w in _WORD.findall(shown)) if k]
    if len(keys) < 2:
        return None
    return AuthorName(shown, tuple(keys[:-1]), keys[-1])


def _fits(typed: str, key: str, given: str) -> bool:
    """Does a word of the question stand for this given name? An initial must be written as one (a capital)."""
    if len(key) == 1:
        return typed[:1].isupper() and given[0] == key
    if len(given) == 1:  # the corpus keeps only the initial
        return typed[:1].isupper() and key[0] == given
    return key == given


class AuthorBook:
    """The corpus's authors by surname, each with the papers they wrote."""

    def __init__(self, authors_by_paper: dict[str, list[str]]):
        self.by_surname: dict[str, dict[tuple[str, ...], tuple[str, list[str]]]] = {}
        for pid, names in authors_by_paper.items():
            for name in names:
                author = parse_author(name)
                if author is None:
                    continue
                same = self.by_surname.setdefault(author.surname, {})
                shown, papers = same.setdefault(author.given, (author.shown, []))
                if pid not in papers:
                    papers.append(pid)

    def find(self, question: str) -> list[NameMatch]:
        """Authors the question names: a surname preceded by their given names or initials."""
        words = [(typed, fold(typed)) for typed in _WORD.findall(question)]
        found: dict[str, NameMatch] = {}
        for i, (_, key) in enumerate(words):
            for given, (shown, papers) in self.by_surname.get(key, {}).items():
                start = self._given_start(words, i, given)
                if start is not None:
                    typed = " ".join(w for w, _ in words[start:i + 1])
                    found.setdefault(shown, NameMatch(typed, shown, tuple(papers), True))
        return list(found.values())

    @staticmethod
    def _given_start(words: list[tuple[str, str]], at: int, given: tuple[str, ...]) -> int | None:
        """Where the given names before words[at] begin, when they include the first given name; else None."""
        start, first = at, False
        while start > 0 and at - start < len(given):
            typed, key = words[start - 1]
            if not any(_fits(typed, key, name) for name in given):
                break
            first = first or _fits(typed, key, given[0])
            start -= 1
        return start if first else None
