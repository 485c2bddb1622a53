"""Readers for the files researchers bring: OpenReview notes (JSON), arXiv Atom feeds, CSV, and
the shared checks every reader's papers go through (safe ids, metadata types).

Each reader takes the file's text and returns Papers, or fails naming the file and the line,
note or entry at fault: nothing is written before every file has been read.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..errors import CorpusError
from ..records import Paper
from .textclean import clean_text

# Ids go into the prompt's <source id="..."> fence, URLs and chunk ids ('#' separates a chunk's
# position): OpenReview, arXiv (2401.12345v2, hep-th/9901001) and seed ids (stem:n) fit this set.
SAFE_ID = re.compile(r"[A-Za-z0-9._:/+-]+")
# Longest paper id: arXiv and OpenReview ids are under 30 characters, a seed id under 30, and /api/papers/<id>
# with ?corpus= must stay far below serve's max_request_line (a 10,000-character id was stored, then its URL got 414).
MAX_ID_CHARS = 200
METADATA = ("authors", "year", "venue", "url", "keywords")
CSV_COLUMNS = ("title", "abstract", *METADATA)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_ARXIV_ID = re.compile(r"arxiv\.org/abs/(\S+)$")
# A document type declaration is where entities (billion laughs) and external files (XXE) are declared;
# the arXiv API sends none, so a file with one is refused before the parser sees it.
_DTD = re.compile(r"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)


def decode(path: Path, data: bytes) -> str:
    """UTF-8 text (a BOM is dropped), or an error naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from exc


def make_paper(pid: str, raw: str, where: str, *, source: str, title: str = "", **metadata: Any) -> Paper:
    """A Paper with a safe id and a cleaned text; `metadata` (authors, year, ...) is checked by type."""
    if len(pid) > MAX_ID_CHARS:
        raise CorpusError(f"{where}: paper id {pid[:40]!r}... is {len(pid):,} characters, over {MAX_ID_CHARS}: its page "
                          f"(/api/papers/<id>) could not be asked for; give it a shorter id")
    if not SAFE_ID.fullmatch(pid):
        raise CorpusError(
            f"{where}: paper id {pid[:60]!r} may only hold letters, digits and . _ : / + - "
            "(a seed file's id is its file name without .txt, then :n)"
        )
    if not isinstance(raw, str) or not raw.strip():
        raise CorpusError(f"{where}: missing or empty 'abstract'")
    if not isinstance(title, str):
        raise CorpusError(f"{where}: 'title' must be a string")
    text = clean_text(raw)
    if not text:
        raise CorpusError(f"{where}: the abstract is empty after cleaning")
    paper = Paper(id=pid, abstract=raw, text=text, title=clean_text(title) if title else "", source=source)
    for name, value in metadata.items():
        if value is not None and value != "":
            setattr(paper, name, optional_field(name, value, where))
    return paper


def optional_field(name: str, value: object, where: str) -> object:
    """authors and keywords: a list of strings (or one string, ';'- or ','-separated); year: a number; others: text."""
    if name in ("authors", "keywords"):
        if isinstance(value, str):
            parts = value.split(";") if ";" in value else value.split(",")
            return [" ".join(v.split()) for v in parts if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return [" ".join(v.split()) for v in value if v.strip()]
        raise CorpusError(f"{where}: '{name}' must be a list of strings")
    if name == "year":
        try:
            return int(value)  # type: ignore[call-overload]  # any value: int() refuses what is not a number
        except (TypeError, ValueError):
            raise CorpusError(f"{where}: 'year' must be a number") from None
    if not isinstance(value, str):
        raise CorpusError(f"{where}: '{name}' must be a string")
    return value.strip()


# -- OpenReview ---------------------------------------------------------------------------


def read_openreview(path: Path, text: str) -> list[Paper]:
    """OpenReview API notes as `GET /notes` returns them ({"notes": [...]}), or a bare list of notes.

    API v2 wraps each field as {"value": ...}; v1's plain values are read as well."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from exc
    notes = data.get("notes") if isinstance(data, dict) else data
    if not isinstance(notes, list):
        raise CorpusError(f"{path}:1: expected OpenReview notes: a list of notes, or {{\"notes\": [...]}} as the API returns")
    if not notes:
        raise CorpusError(f"{path}:1: no notes in the file")
    return [_openreview_note(note, f"{path}: notes[{i}]", str(path)) for i, note in enumerate(notes)]


def _value(content: dict, key: str) -> Any:
    field = content.get(key)
    return field.get("value") if isinstance(field, dict) else field


def _openreview_note(note: Any, where: str, source: str) -> Paper:
    if not isinstance(note, dict) or not isinstance(note.get("content"), dict):
        raise CorpusError(f"{where}: not an OpenReview note (no 'content' object)")
    pid = note.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise CorpusError(f"{where}: missing 'id'")
    content = note["content"]
    venue = _value(content, "venue") or ""
    return make_paper(
        pid.strip(), _value(content, "abstract"), f"{where} (id {pid[:40]!r})", source=source, title=_value(content, "title") or "",
        authors=_value(content, "authors"), keywords=_value(content, "keywords"), venue=venue,
        year=_note_year(venue, note), url=f"https://openreview.net/forum?id={note.get('forum') or pid}",
    )


def _note_year(venue: Any, note: dict) -> int | None:
    """The venue's year ("ICLR 2026 Poster"), else the publication or creation date (ms since 1970)."""
    found = _YEAR.search(venue) if isinstance(venue, str) else None
    if found:
        return int(found.group(0))
    stamp = note.get("pdate") or note.get("cdate")
    if isinstance(stamp, (int, float)) and not isinstance(stamp, bool) and 0 < stamp < 1e14:
        return datetime.fromtimestamp(stamp / 1000, tz=timezone.utc).year
    return None


# -- arXiv ----------------------------------------------------------------------------------


def read_arxiv(path: Path, text: str) -> list[Paper]:
    """An arXiv API Atom feed: each <entry> is a paper; its id is the arXiv id (2401.01234v2)."""
    if _DTD.search(text):
        raise CorpusError(f"{path}: the XML declares a DTD or entities, which untrusted input may not (the arXiv API sends none)")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise CorpusError(f"{path}:{exc.position[0]}: not well-formed XML ({exc})") from exc
    if root.tag != f"{_ATOM}feed":
        raise CorpusError(f"{path}:1: expected an Atom <feed> as the arXiv API returns, found <{root.tag.rpartition('}')[2]}>")
    entries = root.findall(f"{_ATOM}entry")
    if not entries:
        raise CorpusError(f"{path}: no <entry> in the feed")
    return [_arxiv_entry(entry, f"{path}: entry {i}", str(path)) for i, entry in enumerate(entries, start=1)]


def _text(element: ET.Element, tag: str) -> str:
    return " ".join((element.findtext(tag) or "").split())


def _arxiv_entry(entry: ET.Element, where: str, source: str) -> Paper:
    link = _text(entry, f"{_ATOM}id")
    found = _ARXIV_ID.search(link)
    if not found:
        said = _text(entry, f"{_ATOM}summary")[:120]
        raise CorpusError(f"{where}: <id> {link[:80]!r} is not an arXiv abstract URL" + (f" (the entry says: {said})" if said else ""))
    primary = entry.find(f"{_ARXIV}primary_category")
    terms = [primary.get("term", "")] if primary is not None else []
    terms += [c.get("term", "") for c in entry.findall(f"{_ATOM}category")]
    published = _text(entry, f"{_ATOM}published")
    alternate = next((a.get("href", "") for a in entry.findall(f"{_ATOM}link") if a.get("rel") == "alternate"), "")
    return make_paper(
        found.group(1), _text(entry, f"{_ATOM}summary"), where, source=source, title=_text(entry, f"{_ATOM}title"),
        authors=[_text(author, f"{_ATOM}name") for author in entry.findall(f"{_ATOM}author")],
        keywords=list(dict.fromkeys(t for t in terms if t)), venue=_text(entry, f"{_ARXIV}journal_ref") or "arXiv",
        year=int(published[:4]) if published[:4].isdigit() else None, url=alternate or link,
    )


# -- CSV ------------------------------------------------------------------------------------


def read_csv(path: Path, text: str) -> list[Paper]:
    """A header row naming the columns (title and abstract, then any of authors, year, venue, url,
    keywords), one paper a row; its id is the file's stem and the row's number, as seeds do.
    Authors and keywords are separated by ';' within their cell."""
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [name.strip().lower() for name in next(rows, [])]
        missing = [name for name in ("title", "abstract") if name not in header]
        unknown = [name for name in header if name not in CSV_COLUMNS]
        if missing or unknown or len(set(header)) < len(header):
            raise CorpusError(
                f"{path}:1: the header row must name the columns title,abstract[,{','.join(METADATA)}] once each; "
                f"got {','.join(header)[:120]!r}"
            )
        papers: list[Paper] = []
        start = rows.line_num + 1
        for row in rows:
            where, start = f"{path}:{start}", rows.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise CorpusError(f"{where}: {len(row)} fields where the header names {len(header)}")
            fields: dict[str, Any] = dict(zip(header, row))
            for name in ("authors", "keywords"):  # a cell's list is ';'-separated: "Lovelace, Ada; Turing, Alan"
                if name in fields:
                    fields[name] = [part for part in fields[name].split(";") if part.strip()]
            papers.append(make_paper(f"{path.stem}:{len(papers) + 1}", fields.pop("abstract"), where, source=str(path), **fields))
    except csv.Error as exc:
        raise CorpusError(f"{path}:{rows.line_num}: not readable as CSV ({exc})") from exc
    if not papers:
        raise CorpusError(f"{path}:2: no papers after the header row")
    return papers
