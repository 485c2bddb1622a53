"""BM25 over the chunks (bm25s + Snowball stemming), persisted beside the Chroma data.

Local Chroma has no sparse or hybrid search, so the lexical side lives here. It is
saved under a corpus version and loaded, never recomputed, at start. With a Chroma
server it travels as bytes (`to_bytes`), stored in Chroma beside the version it indexes.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

from ..checksums import file_sha256
from ..corpus.abbreviations import by_long_form, definitions, expansions
from ..records import paper_of
from .chinese import ChineseGlossary, GlossRules
from .cognates import CognateBook, CognateRules
from .katakana import KatakanaGlossary
from .spelling import Respelling, respelt_terms

G = TypeVar("G")  # a reader of a question's words in another language
R = TypeVar("R")  # its settings

META = "qa_meta.json"
NAMES_VERSION = 4  # the rules names.py and abbreviations.py find names by (3: abbreviations kept; 4: a hyphened word marks its name); a saved index under others is rebuilt
_STEMMER = Stemmer.Stemmer("english")
_CONTENT_STOP = frozenset(STOPWORDS_EN_PLUS)  # 179 words; BM25 itself ranks best with bm25s's 33 ("en")


def analyze(text: str) -> list[str]:
    """The terms BM25 sees: lower-cased, stop words out, stemmed."""
    return bm25s.tokenize(text, stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)[0]


def stem(word: str) -> str:
    """One word as BM25 stems it: routers -> router, GPUs -> gpu."""
    return str(_STEMMER.stemWord(word.lower()))


def content_terms(text: str) -> set[str]:
    """The terms that carry meaning: BM25's, less the wider English stop list (how, have, does...)."""
    words = bm25s.tokenize(text, stopwords=sorted(_CONTENT_STOP), stemmer=_STEMMER, return_ids=False, show_progress=False)[0]
    return set(words)


def content_terms_each(texts: list[str]) -> list[set[str]]:
    """content_terms of many texts in one pass (the tokenizer's set-up is most of the cost of one short text)."""
    if not texts:
        return []
    words = bm25s.tokenize(texts, stopwords=sorted(_CONTENT_STOP), stemmer=_STEMMER, return_ids=False, show_progress=False)
    return [set(w) for w in words]


class LexicalIndex:
    """BM25 scores for chunks, and paper-level document frequencies for term rarity."""

    def __init__(self, retriever: bm25s.BM25, chunk_ids: list[str], paper_df: dict[str, int], papers: int, version: str,
                 labels: dict[str, str] | None = None, names: dict[str, dict] | None = None,
                 authors: dict[str, list[str]] | None = None, abbreviations: dict[str, list[str]] | None = None):
        self.retriever = retriever
        self.abbreviations = abbreviations or {}  # short form -> the long forms the abstracts define it by
        self._by_long = by_long_form(self.abbreviations)
        self._rare: dict[float, tuple[dict[str, list[str]], dict[str, str]]] = {}
        self.labels = labels or {}
        self.names = names or {}  # name key -> {name, papers}: see names.py
        self.authors = authors or {}  # paper id -> its authors as the corpus gives them: see authors.py
        self.chunk_ids = chunk_ids
        self.paper_df = paper_df
        self.papers = papers
        self.version = version
        self._vocab = getattr(retriever, "vocab_dict", None) or {}
        self._paper_ids = sorted({paper_of(cid) for cid in chunk_ids})
        self._paper_index = {pid: i for i, pid in enumerate(self._paper_ids)}
        self._chunk_paper = np.array([self._paper_index[paper_of(cid)] for cid in chunk_ids], dtype=np.int64)
        self._chunk_array: np.ndarray | None = None
        self._vocab_terms: dict[str, list[str]] | None = None  # the vocabulary by first letter, for spelling look-ups
        self._cognates: dict[CognateRules, CognateBook] = {}  # by its settings, built on the first foreign question
        self._glossaries: dict[GlossRules, ChineseGlossary] = {}  # by its settings, built on the first Chinese question
        self._katakana: dict[GlossRules, KatakanaGlossary] = {}  # by its settings, built on the first katakana word

    @classmethod
    def build(cls, chunk_ids: Sequence[str], texts: Sequence[str], paper_ids: Sequence[str], version: str,
              labels: dict[str, str] | None = None, names: dict[str, dict] | None = None,
              authors: dict[str, list[str]] | None = None) -> LexicalIndex:
        tokenized = bm25s.tokenize(list(texts), stopwords="en", stemmer=_STEMMER, show_progress=False)
        retriever = bm25s.BM25()
        retriever.index(tokenized, show_progress=False)
        words = {i: w for w, i in tokenized.vocab.items()}
        per_paper: dict[str, set[str]] = {}
        for pid, ids in zip(paper_ids, tokenized.ids):
            per_paper.setdefault(pid, set()).update(words[i] for i in ids)
        paper_df: dict[str, int] = {}
        for terms in per_paper.values():
            for term in terms:
                paper_df[term] = paper_df.get(term, 0) + 1
        return cls(retriever, list(chunk_ids), paper_df, len(per_paper), version, labels, names, authors, definitions(texts))

    def knows(self, word: str) -> bool:
        """Is this word (as BM25 analyses it) a word of the corpus? Then it is no typo."""
        terms = analyze(word)
        return bool(terms) and all(t in self._vocab for t in terms)

    def idf(self, term: str) -> float:
        """Rarity of a term across papers; unseen terms count as rare as a singleton."""
        df = self.paper_df.get(term, 0)
        return math.log((self.papers + 1) / (df + 0.5))

    def presence(self, terms: set[str], paper_ids: list[str]) -> dict[str, np.ndarray]:
        """For each term, which of `paper_ids` contain it (read off the BM25 matrix, no text, no sets)."""
        scores = getattr(self.retriever, "scores", None)
        wanted = np.array([self._paper_index.get(pid, -1) for pid in paper_ids], dtype=np.int64)
        found: dict[str, np.ndarray] = {}
        for term in terms:
            tid = self._vocab.get(term)
            if tid is None or not scores:
                found[term] = np.zeros(len(paper_ids), dtype=bool)
                continue
            docs = scores["indices"][scores["indptr"][tid] : scores["indptr"][tid + 1]]
            found[term] = np.isin(wanted, self._chunk_paper[docs])
        return found

    def respelt(self, question: str, terms: set[str], how: Respelling) -> set[str]:
        """The question's terms as this corpus spells them: typos respelt, words of another language left out."""
        return respelt_terms(question, terms, self._vocab, self._vocab_list, content_terms_each, how)

    def _vocab_list(self, letter: str) -> list[str]:
        """The vocabulary's terms that start with this letter (grouped on first use: a twentieth of a scan of all)."""
        groups = self._vocab_terms
        if groups is None:  # built whole, then published: a second thread never reads a half-built one
            groups = {}
            for term in sorted(self._vocab):
                groups.setdefault(term[:1], []).append(term)
            self._vocab_terms = groups
        return groups.get(letter, [])

    def cognates(self, question: str, language: str, rules: CognateRules) -> dict[str, str]:
        """The question's words (in `language`) that are cognates of a term of this corpus, each with its English word."""
        return self._reader(self._cognates, rules, lambda: CognateBook(self._vocab, stem, rules)).gloss(question, language)

    def chinese(self, question: str, rules: GlossRules) -> dict[str, str]:
        """The question's Chinese words (or Japanese kanji compounds) with the English senses of them this corpus uses."""
        return self._reader(self._glossaries, rules, lambda: ChineseGlossary(self._vocab, stem, rules)).gloss(question)

    def katakana(self, question: str, rules: GlossRules) -> dict[str, str]:
        """The question's katakana words (Japanese loanwords) with the English senses of them this corpus uses."""
        return self._reader(self._katakana, rules, lambda: KatakanaGlossary(self._vocab, content_terms_each, rules)).gloss(question)

    @staticmethod
    def _reader(built: dict[R, G], rules: R, build: Callable[[], G]) -> G:
        """The reader of another language's words (cognate book, glossary) for these settings: built whole on the first
        question that needs it, then published."""
        reader = built.get(rules)
        if reader is None:
            reader = build()
            built[rules] = reader
        return reader

    def coverage(self, terms: set[str], paper_ids: list[str]) -> dict[str, float]:
        """Share of the terms' IDF weight each paper contains."""
        total = sum(self.idf(t) for t in terms)
        if not terms or total <= 0:
            return {pid: 0.0 for pid in paper_ids}
        weights = np.zeros(len(paper_ids))
        for term, present in self.presence(terms, paper_ids).items():
            weights += present * self.idf(term)
        return {pid: float(w) / total for pid, w in zip(paper_ids, weights)}

    def search(self, question: str, n: int, weights: np.ndarray | None = None, expand_share: float = 0.0) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first; empty when no term of the question is indexed. `weights`
        (see `allow`) zeroes chunks before the top n are taken, so a filter still returns n when n match.
        `expand_share`: the question's abbreviations in their other form too, those at most this share of papers use."""
        others = [other for _, other in self.expanded(question, expand_share)]
        terms = [t for t in analyze(" ".join([question, *others])) if t in self._vocab]
        if not terms or not self.chunk_ids:
            return []
        scores = self.retriever.get_scores(terms, weight_mask=weights)
        # the top n among the chunks that score at all: numpy's partition over every chunk degrades when most
        # scores tie (the zeros, and many equal ones): 12-24 ms at 70,000 chunks against 0.7 ms this way
        hits = np.flatnonzero(scores > 0)
        if len(hits) > n:
            hits = hits[np.argpartition(-scores[hits], n - 1)[:n]]
        order = hits[np.lexsort((hits, -scores[hits]))]  # best first; equal scores in index order, so the same every time
        return [(self.chunk_ids[int(i)], float(scores[i])) for i in order]

    def expanded(self, question: str, share: float) -> list[tuple[str, str]]:
        """The other forms of the abbreviations the question uses or spells out ("mixture-of-experts" -> MoE), of those
        at most `share` of the papers use (LLM is everywhere: its long form would add only common words)."""
        if share <= 0 or not self.papers or not self.abbreviations:
            return []
        if share not in self._rare:  # once per share: a question's look-up is then a few dict reads
            shorts = list(self.abbreviations)
            used = [max((self.paper_df.get(t, 0) for t in terms), default=0) for terms in content_terms_each(shorts)]
            rare = {short: self.abbreviations[short] for short, df in zip(shorts, used) if df <= share * self.papers}
            self._rare[share] = (rare, {long: short for long, short in self._by_long.items() if short in rare})
        return expansions(question, *self._rare[share])

    def chunks_of(self, weights: np.ndarray) -> list[str]:
        """The chunk ids `allow` gave weight: the same restriction, for the dense side."""
        if self._chunk_array is None:
            self._chunk_array = np.array(self.chunk_ids, dtype=object)
        return list(self._chunk_array[weights > 0])

    def allow(self, paper_ids: Iterable[str]) -> np.ndarray:
        """A weight per chunk: 1 for the chunks of these papers, 0 for every other (BM25 over the allowed chunks)."""
        allowed = np.zeros(len(self._paper_ids), dtype=np.float32)
        for pid in paper_ids:
            at = self._paper_index.get(pid)
            if at is not None:
                allowed[at] = 1.0
        return allowed[self._chunk_paper]

    def save(self, folder: Path) -> None:
        """Write to a temp folder, then swap it in, so a reader never sees half an index.

        Each file's sha256 goes into qa_meta.json, so that a truncated or overwritten file
        is found at load instead of failing (or answering wrongly) at query time."""
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".bm25-"))
        self.retriever.save(str(tmp), show_progress=False)
        files = {p.name: file_sha256(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        meta = {"version": self.version, "chunk_ids": self.chunk_ids, "paper_df": self.paper_df, "papers": self.papers,
                "labels": self.labels, "names": self.names, "authors": self.authors, "abbreviations": self.abbreviations, "files": files,
                "names_version": NAMES_VERSION}
        (tmp / META).write_text(json.dumps(meta), encoding="utf-8")
        old = folder.with_name(folder.name + ".old")
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)

    def save_new(self, folder: Path) -> bool:
        """Save as a cache entry that never changes once written: when `folder` exists already (another
        process saved the same version), keep it. False when it cannot be written (read-only disk)."""
        if folder.exists():
            return True
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".bm25-"))
            try:
                self.save(tmp / "index")
                os.rename(tmp / "index", folder)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            return folder.exists()  # lost a race to another process (fine), or cannot write (no cache)
        return True

    def to_bytes(self) -> bytes:
        """The saved files (checksums included) as one uncompressed tar: what Chroma stores."""
        with tempfile.TemporaryDirectory(prefix="qa-bm25-") as tmp:
            folder = Path(tmp) / "index"
            self.save(folder)
            buffer = io.BytesIO()
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                for path in sorted(folder.iterdir()):
                    tar.add(path, arcname=path.name)
            return buffer.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, folder: Path) -> LexicalIndex | None:
        """Unpack `to_bytes` output into `folder` (a cache entry) and load it, checked as files are; None if damaged."""
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".bm25-"))
        except OSError:  # no writable cache: unpack in a temp folder, load, forget it
            tmp = Path(tempfile.mkdtemp(prefix="qa-bm25-"))
        try:
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
                tar.extractall(tmp / "index", filter="data")
            lexical = cls.load(tmp / "index")
            if lexical is not None and not folder.exists():
                try:
                    os.rename(tmp / "index", folder)
                except OSError:
                    pass  # another process put the same version there first, or no cache
            return lexical
        except (tarfile.TarError, OSError, ValueError):
            return None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    @classmethod
    def load(cls, folder: Path) -> LexicalIndex | None:
        """The saved index, or None when it is absent, written by an older version, or damaged:
        BM25 is a cache of the store, so the caller rebuilds it rather than serve a broken one."""
        try:
            meta = json.loads((folder / META).read_text(encoding="utf-8"))
            files = meta.get("files")
            if not isinstance(files, dict) or not files:
                return None  # written before checksums were kept: rebuild
            if "names" not in meta or any("word" not in entry for entry in meta["names"].values()):
                return None  # written before names (or their word marks) were kept: rebuild
            if "authors" not in meta:
                return None  # written before authors were kept: rebuild
            if meta.get("names_version") != NAMES_VERSION:
                return None  # its name book was built by other rules: rebuild
            if any(file_sha256(folder / name) != digest for name, digest in files.items()):
                return None  # a file was truncated or overwritten
            retriever = bm25s.BM25.load(str(folder), show_progress=False)
            lexical = cls(retriever, meta["chunk_ids"], meta["paper_df"], meta["papers"], meta["version"],
                          meta.get("labels", {}), meta.get("names", {}), meta["authors"], meta["abbreviations"])
        except Exception:  # noqa: BLE001 - whatever a damaged file raises (OSError, ValueError, KeyError...), rebuild
            return None
        return lexical


def empty_lexical(version: str = "") -> LexicalIndex:
    return LexicalIndex(bm25s.BM25(), [], {}, 0, version)

