"""Reading a corpus: which reader each file gets, plain text and JSONL, unique ids, labels.

The other formats (OpenReview notes, arXiv Atom, CSV) are read in formats.py; every file is
read and validated before anything is written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..config import Settings
from ..errors import CorpusError
from .formats import METADATA, decode, make_paper, read_arxiv, read_csv, read_openreview
from .labels import assign_labels
from ..records import Paper

SEED_HEADER = "ICLR 2026 Papers"
log = logging.getLogger(__name__)


def read_text_file(path: Path) -> list[Paper]:
    """One abstract per blank-line-separated paragraph; the seed files' header line is skipped when present."""
    return read_text(path, decode(path, path.read_bytes()))


def read_text(path: Path, text: str) -> list[Paper]:
    if not text.strip():
        raise CorpusError(f"{path}:1: the file is empty")
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.strip())
    if lines[first].strip() == SEED_HEADER:
        first += 1
    papers: list[Paper] = []
    paragraph: list[str] = []
    for lineno, line in enumerate(lines[first:] + [""], start=first + 1):
        if line.strip():
            paragraph.append(line.strip())
            continue
        if paragraph:
            where = f"{path}:{lineno - len(paragraph)}"
            papers.append(make_paper(f"{path.stem}:{len(papers) + 1}", " ".join(paragraph), where, source=str(path)))
            paragraph = []
    if not papers:
        raise CorpusError(f"{path}:{first}: no abstracts after the header")
    return papers


read_seed_file = read_text_file  # the seed files are plain text with a header line


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a bad line is an error naming it."""
    text = decode(path, path.read_bytes())
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
    papers = [_paper_from_json(obj, f"{path}:{lineno}", str(path)) for lineno, obj in iter_jsonl(path)]
    if not papers:
        raise CorpusError(f"{path}:1: no papers in the file")
    return papers


def _paper_from_json(obj: dict, where: str, source: str) -> Paper:
    abstract = obj.get("abstract")
    if not isinstance(abstract, str) or not abstract.strip():
        raise CorpusError(f"{where}: missing or empty 'abstract'")
    pid = obj.get("id")
    if not isinstance(pid, (str, int)) or not str(pid).strip():
        raise CorpusError(f"{where}: missing 'id'")
    return make_paper(str(pid).strip(), abstract, where, source=source, title=obj.get("title") or "",
                      **{name: obj.get(name) for name in METADATA})


def _reading(reader: Callable[[Path, str], list[Paper]]) -> Callable[[Path], list[Paper]]:
    return lambda path: reader(path, decode(path, path.read_bytes()))


# Each file's reader by its suffix; anything else is refused, naming these.
READERS: dict[str, tuple[Callable[[Path], list[Paper]], str]] = {
    ".txt": (read_text_file, "plain text, one abstract per paragraph"),
    ".jsonl": (read_jsonl_file, "JSON lines with id, title, abstract"),
    ".json": (_reading(read_openreview), "OpenReview API notes"),
    ".xml": (_reading(read_arxiv), "an arXiv API Atom feed"),
    ".atom": (_reading(read_arxiv), "an arXiv API Atom feed"),
    ".csv": (_reading(read_csv), "CSV with a title,abstract header"),
}
SUPPORTED = ", ".join(f"{suffix} ({what})" for suffix, (_, what) in READERS.items())


def _reader(path: Path) -> Callable[[Path], list[Paper]]:
    found = READERS.get(path.suffix.lower())
    if found is None:
        kind = f"'{path.suffix}' files" if path.suffix else "files without a suffix"
        raise CorpusError(f"{path}: {kind} are not read; supported: {SUPPORTED}")
    return found[0]


def corpus_files(paths: Iterable[str | Path], notice: Callable[[str], None] | None = None) -> list[tuple[Path, str]]:
    """Expand folders into the files of a supported type, each with its name relative to what was given (a
    paper's `source`: never the server's absolute path); every path must exist and be of one. A folder's other
    files are named in one notice line (hidden files are passed over quietly)."""
    say = notice or log.warning
    files: list[tuple[Path, str]] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            entries = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            found = [p for p in entries if p.suffix.lower() in READERS]
            if not found:
                raise CorpusError(f"{path}: no corpus files in this folder; supported: {SUPPORTED}")
            skipped = [p.name for p in entries if p.suffix.lower() not in READERS]
            if skipped:
                say(f"{path}: skipped {len(skipped)} file{'s' if len(skipped) > 1 else ''} no reader takes ({', '.join(skipped)}); "
                    f"read are {', '.join(READERS)}")
            files.extend((p, p.relative_to(path).as_posix()) for p in found)
        elif path.is_file():
            _reader(path)  # an unsupported type is refused before any file is read
            files.append((path, path.name))
        else:
            raise CorpusError(f"{path}: no such file or folder")
    return files


def load_corpus(paths: Iterable[str | Path], settings: Settings | None = None,
                notice: Callable[[str], None] | None = None) -> list[Paper]:
    """Read and validate every file before anything is written; ids must be unique, ids and abstracts
    within the settings' limits (the defaults when none are given). `notice` hears of files skipped in a
    folder (default: the log)."""
    limits = settings or Settings()
    papers: list[Paper] = []
    seen: dict[str, str] = {}
    for path, name in corpus_files(paths, notice):
        try:
            batch = _reader(path)(path)
        except OSError as exc:
            raise CorpusError(f"{path}: cannot read ({exc.strerror})") from exc
        for paper in batch:
            _check_unicode(paper, path)
            _check_size(paper, path, limits)
            if paper.id in seen:
                raise CorpusError(f"{path}: paper id {paper.id!r} already came from {seen[paper.id]}")
            seen[paper.id] = str(path)
            paper.source = name
        papers.extend(batch)
    assign_labels(papers)
    return papers


def _check_size(paper: Paper, path: Path, limits: Settings) -> None:
    """An abstract over max_abstract_chars is refused, not cut: a cut abstract would be served as if it were the paper's, and a file that holds one
    is usually broken (a whole paper pasted, a missing line break); the file is fixed, or the limit raised."""
    if len(paper.abstract) > limits.max_abstract_chars:
        raise CorpusError(f"{path}: paper {paper.id!r}: the abstract is {len(paper.abstract):,} characters, over max_abstract_chars "
                          f"({limits.max_abstract_chars:,}; OpenReview caps abstracts at 5,000): is it a whole paper, or several "
                          f"abstracts run together? Fix the file, or raise QA_MAX_ABSTRACT_CHARS")


def _check_unicode(paper: Paper, path: Path) -> None:
    """JSON lets a file carry half of a surrogate pair ("\\ud800"): no tokenizer, hash or store can
    encode it, so the file is refused here, before anything is written, naming the paper and field."""
    fields = [("id", paper.id), ("title", paper.title), ("abstract", paper.abstract), ("venue", paper.venue),
              ("url", paper.url), *(("authors", a) for a in paper.authors), *(("keywords", k) for k in paper.keywords)]
    for name, value in fields:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise CorpusError(f"{path}: paper {paper.id!a}: '{name}' is not valid Unicode: it holds a lone surrogate "
                              f"({value[exc.start]!a} at character {exc.start}); write UTF-8, or \\u escapes in high-low pairs") from None
