"""What one request reads: corpora by name (Part), under a metadata filter (Scope), and the small caches the
registry keeps per corpus version (Kept). The registry itself is corpora.py's Corpora."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import BadRequest, NotIndexed
from ..records import IndexInfo, Paper
from .filters import MetadataFilter
from .index import Index
from .lexical import LexicalIndex


class Registry(Protocol):
    """What a scope asks of the registry of corpora (corpora.Corpora)."""

    def allowed(self, part: Part, filter: MetadataFilter) -> frozenset[str] | None: ...
    def records(self, part: Part) -> list[Paper]: ...
    def mask(self, part: Part, filter: MetadataFilter, lexical: LexicalIndex) -> Any: ...
    def vectors(self, part: Part, filter: MetadataFilter, lexical: LexicalIndex, ids: list[str]) -> tuple[list[str], Any]: ...
    def known(self, part: Part) -> Known: ...


NAME_PATTERN = "^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$"
NAME_RE = re.compile(NAME_PATTERN)
NAMES_TTL = 2.0  # seconds a process trusts its list of corpora: another process's new corpus shows within this
#: A named corpus's collections say whose they are: the default corpus of the service that made them. A Chroma
#: server may hold other services' collections; only ours are corpora here.
FAMILY = "qa_corpus_of"


def corpus_name(value: Any, what: str = "corpus") -> str:
    """A corpus name: lower-case letters, digits and inner hyphens, at most 40 characters."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise BadRequest(f"'{what}' must be a corpus name: 1 to 40 lower-case letters, digits and inner hyphens "
                         f"(such as neurips2025), got {str(value)[:60]!r}", param=what)
    return value


def corpus_names(value: Any, what: str = "corpus", default: str = "") -> list[str] | None:
    """A request's `corpus`: one name or a non-empty list of names; None (absent) is every corpus. The
    default corpus keeps the name its `collection` setting gives it, whatever its form."""
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if not values:
        raise BadRequest(f"'{what}' must not be an empty list: leave it out to search every corpus", param=what)
    return list(dict.fromkeys(v if default and v == default else corpus_name(v, what) for v in values))


@dataclass(frozen=True)
class Known:
    """What a corpus's records name, normalised (filters.normalize) -> as first written."""

    authors: dict[str, str]
    venues: dict[str, str]
    years: set[int]


@dataclass(frozen=True)
class Part:
    """One corpus of a scope: its name and its index."""

    name: str
    index: Index


@dataclass(frozen=True)
class Scope:
    """What one request reads: these corpora, restricted by this filter inside retrieval."""

    parts: tuple[Part, ...]
    filter: MetadataFilter
    registry: Registry

    @property
    def names(self) -> list[str]:
        return [part.name for part in self.parts]

    def allowed(self, part: Part) -> frozenset[str] | None:
        """The paper ids of `part` the filter allows; None when there is no filter (every paper)."""
        return self.registry.allowed(part, self.filter)

    def matching(self) -> int:
        """How many papers the filter allows over the scope (every paper when there is no filter)."""
        total = 0
        for part in self.parts:
            allowed = self.allowed(part)
            total += part.index.stats().papers if allowed is None else len(allowed)
        return total

    def require_ready(self) -> None:
        """At least one corpus of the scope holds papers."""
        if not any(part.index.stats().papers for part in self.parts):
            which = "the corpus" if len(self.parts) == 1 else "the corpora"
            raise NotIndexed(f"{which} {', '.join(self.names)} {'is' if len(self.parts) == 1 else 'are'} empty: "
                             f"run `qa-service ingest` (or `make run`) first")

    def info(self) -> IndexInfo:
        """Papers, build date and embedding model over the scope, for the answer's `index`."""
        stats = [part.index.stats() for part in self.parts]
        built = [s.built_at for s in stats if s.built_at]
        return IndexInfo(sum(s.papers for s in stats), max(built) if built else None,
                         stats[0].embedding_model if stats else None)

    def glosses(self, read: Callable[[LexicalIndex], dict[str, str]]) -> dict[str, str]:
        """What `read` finds of a question's words in each corpus's BM25 index (a cognate, a dictionary sense), the
        first corpus's word first. Each index is loaded here: a question is read before its search, and the first
        question of a process (`qa-service ask` in another language) would otherwise meet no vocabulary at all."""
        found: dict[str, str] = {}
        for part in self.parts:
            for word, english in read(part.index.load_lexical()).items():
                found.setdefault(word, english)
        return found

    def part_of(self, name: str) -> Part:
        return next(part for part in self.parts if part.name == name)

    def records(self) -> list[tuple[str, Paper]]:
        """(corpus, paper) for every paper of the scope the filter allows, metadata only."""
        return [(part.name, paper) for part in self.parts for paper in self.registry.records(part)
                if not self.filter or self.filter.matches(paper)]


class Kept:
    """Values kept per key, least recently used first out, while their weights (1 each unless `weight` says)
    add up to at most `size`; the newest always stays. Safe to share between request threads."""

    def __init__(self, size: int, weight: Callable[[Any], int] = lambda value: 1):
        self.size = size
        self.weight = weight
        self._values: OrderedDict[tuple, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Any:
        """The value kept for `key` (now the most recently used), or None."""
        with self._lock:
            if key not in self._values:
                return None
            self._values.move_to_end(key)
            return self._values[key]

    def put(self, key: tuple, value: Any) -> Any:
        with self._lock:
            self._values[key] = value
            while len(self._values) > 1 and sum(self.weight(v) for v in self._values.values()) > self.size:
                self._values.popitem(last=False)
        return value
