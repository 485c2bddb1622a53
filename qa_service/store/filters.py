"""Metadata filters (year, venue, author, keyword): parsed once, then one Chroma `where` for both sides.

A filter is an AND over fields and an OR over each field's values: `{"year": [2025, 2026],
"author": "Ada Marchetti"}` is a paper from 2025 or 2026 with Ada Marchetti among its authors;
`{"year": {"from": 2024, "to": 2026}}` is a range (either end may be left out; one that runs
backwards holds no year, and the answer says that no paper matches). A venue matches
word by word at either end, as OpenReview writes venues: "ICLR 2025" is "ICLR 2025", "ICLR 2025
Poster", "ICLR 2025 Oral" and "Submitted to ICLR 2025", not "ICLR 2024".
Text matches ignore case, accents and extra spaces (`normalize`), so every paper record
carries its filter fields in that form (`record_fields`), on its chunks too: the dense side
is a Chroma query with `where`, and the lexical side scores only the papers the same
`where` selects in the paper records.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..config import Settings
from ..corpus.authors import given_first
from ..errors import BadRequest
from ..inputs import YEAR_PATTERN, has_visible, unicode_text
from ..records import Paper

FIELDS = ("year", "venue", "author", "keyword")
#: The metadata keys the filter fields are stored under, beside the record's own fields.
STORED = {"year": "f_year", "venue": "f_venue", "author": "f_authors", "keyword": "f_keywords"}
#: Set on every record written with filter fields: records from before are backfilled by the next ingest.
MARK, FIELDS_VERSION = "f_v", 3  # 2: authors as "given surname"; 3: a venue's word-prefixes and -suffixes, not the venue alone
RANGE = ("year_from", "year_to")  # a year range in a query string, /v1 metadata and the command line
YEAR_MIN, YEAR_MAX = 1, 9999
_YEAR_TEXT = re.compile(YEAR_PATTERN)
_TEXT_FIELDS = ("venue", "author", "keyword")


def normalize(text: str) -> str:
    """Case, accents and spacing do not matter: 'Ada  Marchetti', 'ada marchetti' and 'Adà Marchetti' match."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


def author_key(name: str) -> str:
    """An author as filters and metadata questions match them: 'Lovelace, Ada' is 'Ada Lovelace'."""
    return normalize(given_first(name))


def field_key(name: str, value: str) -> str:
    """A text field's value as stored and matched."""
    return author_key(value) if name == "author" else normalize(value)


def venue_keys(venue: str) -> list[str]:
    """What a venue filter value may be to match this venue: its words from the first, or up to the last."""
    words = normalize(venue).split()
    return sorted({" ".join(words[:n]) for n in range(1, len(words) + 1)} | {" ".join(words[n:]) for n in range(len(words))})


def record_fields(paper: Paper) -> dict[str, Any]:
    """The filter fields of a paper as Chroma metadata; an empty field is None (Chroma refuses empty
    lists, and None removes the key when a record is updated)."""
    authors = sorted({author_key(a) for a in paper.authors if author_key(a)})
    keywords = sorted({normalize(k) for k in paper.keywords if normalize(k)})
    return {
        MARK: FIELDS_VERSION,
        STORED["year"]: paper.year if paper.year else None,
        STORED["venue"]: venue_keys(paper.venue) or None,
        STORED["author"]: authors or None,
        STORED["keyword"]: keywords or None,
    }


@dataclass(frozen=True)
class MetadataFilter:
    """What a request restricts papers to; empty: no restriction. Values as given (for display)."""

    year: tuple[int, ...] = ()
    venue: tuple[str, ...] = ()
    author: tuple[str, ...] = ()
    keyword: tuple[str, ...] = ()
    year_from: int | None = None  # a range, both ends included
    year_to: int | None = None

    def __bool__(self) -> bool:
        return any(getattr(self, name) for name in FIELDS) or self.year_from is not None or self.year_to is not None

    def where(self) -> dict | None:
        """The Chroma `where` that selects the records this filter allows; None when it allows all."""
        clauses: list[dict] = []
        if self.year:
            clauses.append({STORED["year"]: {"$in": list(self.year)}})
        if self.year_from is not None:
            clauses.append({STORED["year"]: {"$gte": self.year_from}})
        if self.year_to is not None:
            clauses.append({STORED["year"]: {"$lte": self.year_to}})
        for name in ("venue", "author", "keyword"):
            values = sorted({field_key(name, v) for v in getattr(self, name)})
            alternatives = [{STORED[name]: {"$contains": v}} for v in values]
            if alternatives:
                clauses.append(alternatives[0] if len(alternatives) == 1 else {"$or": alternatives})
        if not clauses:
            return None
        return clauses[0] if len(clauses) == 1 else {"$and": clauses}

    def matches(self, paper: Paper) -> bool:
        """The same test in Python, for records already in memory (metadata questions, /api/papers)."""
        if self.year and paper.year not in self.year:
            return False
        if not self.in_range(paper.year):
            return False
        if self.venue and not {normalize(v) for v in self.venue} & set(venue_keys(paper.venue)):
            return False
        for name, values in (("author", paper.authors), ("keyword", paper.keywords)):
            wanted = {field_key(name, v) for v in getattr(self, name)}
            if wanted and not wanted & {field_key(name, v) for v in values}:
                return False
        return True

    def in_range(self, year: int | None) -> bool:
        """Within the year range (True when there is none); a paper of no known year is in none."""
        if self.year_from is None and self.year_to is None:
            return True
        return year is not None and (self.year_from or YEAR_MIN) <= year <= (self.year_to or YEAR_MAX)

    def describe(self) -> str:
        """'year 2026, author Ada Marchetti': how an answer names the filters it ran under."""
        parts = []
        for name in FIELDS:
            values = getattr(self, name)
            if values:
                parts.append(f"{name} " + " or ".join(str(v) for v in values))
        if self.year_from is not None or self.year_to is not None:
            ends = [f"from {self.year_from}"] if self.year_from is not None else []
            parts.append("year " + " ".join(ends + ([f"to {self.year_to}"] if self.year_to is not None else [])))
        return ", ".join(parts)

    def to_dict(self) -> dict[str, list]:
        given = {name: list(getattr(self, name)) for name in FIELDS if getattr(self, name)}
        return given | {name: [getattr(self, name)] for name in RANGE if getattr(self, name) is not None}

    @property
    def key(self) -> tuple:
        """Equal for filters that select the same records (a cache key)."""
        return ((tuple(sorted(set(self.year))), self.year_from, self.year_to)
                + tuple(tuple(sorted({field_key(n, v) for v in getattr(self, n)})) for n in _TEXT_FIELDS))


NO_FILTER = MetadataFilter()


def parse_filters(value: Any, settings: Settings, what: str = "filters") -> MetadataFilter:
    """A request's `filters` object: each field one value or a list of them; anything else is a 400 naming it."""
    if value is None:
        return NO_FILTER
    if not isinstance(value, dict):
        raise BadRequest(f"'{what}' must be an object with any of {', '.join(FIELDS)}", param=what)
    for key in value:
        if key not in FIELDS:
            raise BadRequest(f"'{what}.{key}' is not a filter: the filters are {', '.join(FIELDS)}", param=f"{what}.{key}")
    found: dict[str, Any] = {}
    for name in FIELDS:
        if name == "year" and isinstance(value.get(name), dict):
            found.update(_year_range(value[name], f"{what}.year"))
        elif name in value:
            found[name] = _values(name, value[name], settings, f"{what}.{name}")
    return MetadataFilter(**found)


def _year_range(value: dict, where: str) -> dict[str, int]:
    """{"from": 2024, "to": 2026}, either end optional, both included: the fields year_from and year_to."""
    unknown = [key for key in value if key not in ("from", "to")]
    if unknown or not value:
        raise BadRequest(f"'{where}' as a range is {{\"from\": year, \"to\": year}} (either may be left out)"
                         + (f": '{unknown[0]}' is not one of them" if unknown else ""), param=where)
    return {f"year_{end}": _year(value[end], f"{where}.{end}") for end in ("from", "to") if value.get(end) is not None}


def parse_metadata(value: Any, settings: Settings, what: str = "metadata") -> MetadataFilter:
    """/v1's `metadata` object: OpenAI's metadata values are strings, so a year comes as "2026"."""
    if value is None:
        return NO_FILTER
    if not isinstance(value, dict):
        raise BadRequest(f"'{what}' must be an object with any of {', '.join(FIELDS)}", param=what)
    converted = {key: given for key, given in value.items() if key not in RANGE}
    years = {name: _year_text(value[name], f"{what}.{name}") for name in ("year", *RANGE) if name in value}
    if "year" in years:
        converted["year"] = years.pop("year")
    for name in _TEXT_FIELDS:
        if name in converted and not isinstance(converted[name], str):
            raise BadRequest(f"'{what}.{name}' must be a string", param=f"{what}.{name}")
    found = parse_filters(converted, settings, what)
    return with_range(found, years)


def with_range(found: MetadataFilter, ends: Mapping[str, int]) -> MetadataFilter:
    """The filter with the year range's ends that were given (year_from, year_to)."""
    if not ends:
        return found
    return replace(found, year_from=ends.get("year_from", found.year_from), year_to=ends.get("year_to", found.year_to))


def _year_text(value: Any, where: str) -> int:
    """A year as OpenAI's metadata (a string) and query strings carry it."""
    if not isinstance(value, str):
        raise BadRequest(f"'{where}' must be a string, such as \"2026\"", param=where)
    if not _YEAR_TEXT.fullmatch(value):
        raise BadRequest(f"'{where}' must be a year from 1 to 9999, such as \"2026\"", param=where)
    return int(value)


def filters_from_options(settings: Settings, year_from: int | None = None, year_to: int | None = None,
                         **options: Iterable[Any]) -> MetadataFilter:
    """The command line's repeated --year/--venue/--author/--keyword options and --year-from/--year-to; an error names the option."""
    chosen: dict[str, Any] = {name: _values(name, list(values), settings, f"--{name}") for name, values in options.items() if values}
    found = MetadataFilter(**chosen)
    ends = {name: _year(value, f"--{name.replace('_', '-')}") for name, value in (("year_from", year_from), ("year_to", year_to))
            if value is not None}
    return with_range(found, ends)


def filters_from_query(args: Mapping[str, Any], settings: Settings) -> MetadataFilter:
    """?year=2026&author=...: a query string's repeated parameters (each a value)."""
    given: dict[str, list] = {}
    for name in FIELDS:
        values = args.getlist(name) if hasattr(args, "getlist") else ([args[name]] if name in args else [])
        if not values:
            continue
        if name == "year":
            if not all(_YEAR_TEXT.fullmatch(v) for v in values):
                raise BadRequest("'year' must be a year from 1 to 9999, such as 2026", param="year")
            values = [int(v) for v in values]
        given[name] = values
    checked: dict[str, Any] = {name: _values(name, values, settings, name) for name, values in given.items()}
    found = MetadataFilter(**checked)
    ends = {name: _year_text(args[name], name) for name in RANGE if name in args}
    return with_range(found, ends)


def _values(name: str, value: Any, settings: Settings, where: str) -> tuple:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise BadRequest(f"'{where}' must not be an empty list: leave it out to allow every {name}", param=where)
    if len(values) > settings.max_filter_values:
        raise BadRequest(f"'{where}' holds more than {settings.max_filter_values} values", param=where)
    return tuple(_year(v, where) if name == "year" else _text(v, settings, where) for v in values)


def _year(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not YEAR_MIN <= value <= YEAR_MAX:
        raise BadRequest(f"'{where}' must be a year (a whole number from {YEAR_MIN} to {YEAR_MAX}, such as 2026) "
                         f"or a list of them", param=where)
    return value


def _text(value: Any, settings: Settings, where: str) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"'{where}' must be a string or a list of strings", param=where)
    unicode_text(value, f"'{where}'")
    if not has_visible(value):
        raise BadRequest(f"'{where}' must not be empty: it needs a visible character", param=where)
    if len(value) > settings.max_filter_chars:
        raise BadRequest(f"'{where}' is longer than {settings.max_filter_chars} characters", param=where)
    return " ".join(value.split())
