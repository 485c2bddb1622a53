"""Paper records and the readers for the seed text format and JSONL, with stable ids."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Iterable, Iterator

from .errors import CorpusError
from .labels import assign_labels
from .records import Paper
from .textclean import clean_text

SEED_HEADER = "ICLR 2026 Papers"
CORPUS_SUFFIXES = (".txt", ".jsonl")
_OPTIONAL_FIELDS = ("authors", "year", "venue", "url", "keywords")
# Ids go into the prompt's <source id="..."> fence, URLs and chunk ids ('#' separates a chunk's
# position): OpenReview, arXiv (2401.12345v2, hep-th/9901001) and seed ids (stem:n) fit this set.
_SAFE_ID = re.compile(r"[A-Za-z0-9._:/+-]+")


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise CorpusError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from exc


def read_seed_file(path: Path) -> list[Paper]:
    """The seed format: a header line, then one abstract per blank-line-separated paragraph."""
    text = _decode(path, path.read_bytes())
    if not text.strip():
        raise CorpusError(f"{path}:1: the file is empty")
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip())
    if lines[first].strip() != SEED_HEADER:
        raise CorpusError(
            f"{path}:{first + 1}: expected the header line '{SEED_HEADER}', got {lines[first].strip()[:60]!r}"
        )
    papers: list[Paper] = []
    paragraph: list[str] = []
    for lineno, line in enumerate(lines[first + 1 :] + [""], start=first + 2):
        if line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph:
            raw = " ".join(paragraph)
            n = len(papers) + 1
            papers.append(_make_paper(f"{path.stem}:{n}", raw, str(path), lineno - len(paragraph)))
            paragraph = []
    if not papers:
        raise CorpusError(f"{path}:{first + 1}: no abstracts after the header")
    return papers


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a bad line is an error naming it."""
    text = _decode(path, path.read_bytes())
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise CorpusError(f"{path}:{lineno}: expected a JSON object")
        yield lineno, obj


def read_jsonl_file(path: Path) -> list[Paper]:
    """One JSON object per line: id, title, abstract and optional OpenReview-style fields."""
    papers = [_paper_from_json(obj, path, lineno) for lineno, obj in iter_jsonl(path)]
    if not papers:
        raise CorpusError(f"{path}:1: no papers in the file")
    return papers


def _paper_from_json(obj: dict, path: Path, lineno: int) -> Paper:
    where = f"{path}:{lineno}"
    abstract = obj.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise CorpusError(f"{where}: missing or empty 'abstract'")
    pid = obj.get("id")
    if not isinstance(pid, (str, int)) or not str(pid).strip():
        raise CorpusError(f"{where}: missing 'id'")
    title = obj.get("title") or ""
    if not isinstance(title, str):
        raise CorpusError(f"{where}: 'title' must be a string")
    paper = _make_paper(str(pid).strip(), abstract, str(path), lineno, title=clean_text(title))
    for name in _OPTIONAL_FIELDS:
        if obj.get(name) is not None:
            setattr(paper, name, _optional(name, obj[name], where))
    return paper


def _optional(name: str, value: object, where: str) -> object:
    if name in ("authors", "keywords"):
        if isinstance(value, str):
            return [v.strip() for v in value.split(",") if v.strip()]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        raise CorpusError(f"{where}: '{name}' must be a list of strings")
    if name == "year":
        try:
            return int(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise CorpusError(f"{where}: 'year' must be a number") from None
    if not isinstance(value, str):
        raise CorpusError(f"{where}: '{name}' must be a string")
    return value


def _make_paper(pid: str, raw: str, source: str, lineno: int, title: str = "") -> Paper:
    if not _SAFE_ID.fullmatch(pid):
        raise CorpusError(
            f"{source}:{lineno}: paper id {pid[:60]!r} may only hold letters, digits and . _ : / + - "
            "(a seed file's id is its file name without .txt, then :n)"
        )
    text = clean_text(raw)
    if not text:
        raise CorpusError(f"{source}:{lineno}: the abstract is empty after cleaning")
    return Paper(id=pid, abstract=raw, text=text, title=title, source=source)


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders into their corpus files; every path must exist."""
    files: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in CORPUS_SUFFIXES and p.is_file())
            if not found:
                raise CorpusError(f"{path}: no .txt or .jsonl files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise CorpusError(f"{path}: no such file or folder")
    return files


def load_corpus(paths: Iterable[str | Path]) -> list[Paper]:
    """Read and validate every file before anything is written; ids must be unique."""
    papers: list[Paper] = []
    seen: dict[str, str] = {}
    for path in corpus_files(paths):
        try:
            batch = read_jsonl_file(path) if path.suffix == ".jsonl" else read_seed_file(path)
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read ({exc.strerror})") from exc
        for paper in batch:
            if paper.id in seen:
                raise CorpusError(f"{path}: paper id {paper.id!r} already came from {seen[paper.id]}")
            seen[paper.id] = str(path)
        papers.extend(batch)
    assign_labels(papers)
    return papers
