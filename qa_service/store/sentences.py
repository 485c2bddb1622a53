"""Sentence vectors kept beside a corpus, from the chunk pass of the ingest: answers embed no sentence.

Choosing sentences by meaning needs each abstract sentence's vector. Embedding them when a question
first needs them made /api/ask at 20,000 papers miss its latency budget, so the ingest embeds them
(`sentence_vectors`): each new sentence on its own ("alone", the default), or from the chunk's own
run of the model, its token embeddings mean-pooled inside the sentence ("pooled",
`MiniLMEmbedding.with_sentences`: no second run, but measured to pick sentences a little worse and to
move the cosines the relevance floors were tuned on). They are kept by sentence text (a 64-bit
hash), float16, in one file per corpus beside its BM25 index; a text's vector holds in any version
of the corpus, so the file only grows by what an ingest embedded. A store whose embedding is a paid
API (OpenAI) keeps none, and answers embed what they need, as before.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..corpus.textclean import sentence_spans
from ..errors import ConfigError

MODES = ("alone", "pooled", "off")


def text_key(text: str) -> int:
    """A sentence's key: 64 bits of its blake2b hash."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


class SentenceVectors:
    """One corpus's sentence vectors by text: filled by the ingest's chunk pass, saved once at its end, read by answers."""

    def __init__(self, path: Path, mode: str = "alone"):
        """`mode`: "alone" embeds each new sentence on its own at ingest (a second, shorter run of the
        model); "pooled" takes it from the chunk's run; "off" keeps none (answers embed what they need)."""
        if mode not in MODES:
            raise ConfigError(f"sentence_vectors must be one of {', '.join(MODES)}, not {mode!r}")
        self.path = path
        self.mode = mode
        self._pending: dict[int, np.ndarray] = {}
        self._rows: dict[int, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float16)
        self._stamp: float | None = None
        self._lock = threading.Lock()

    def embed_chunks(self, embedder: Any, texts: Sequence[str]) -> np.ndarray:
        """The chunks' vectors, as the embedder gives them; their sentences' vectors from the same run, kept for save()."""
        local = getattr(embedder, "local", False)  # a paid API per sentence is too dear: answers embed what they need
        if self.mode == "off" or not local or (self.mode == "pooled" and not hasattr(embedder, "with_sentences")):
            return np.asarray(embedder(list(texts)), dtype=np.float32)
        spans = [sentence_spans(text) or [(0, len(text))] for text in texts]
        if self.mode == "alone":
            vectors = np.asarray(embedder(list(texts)), dtype=np.float32)
            with self._lock:
                self._load()
                new = list(dict.fromkeys(text[s:e] for text, ss in zip(texts, spans) for s, e in ss
                                         if text_key(text[s:e]) not in self._rows and text_key(text[s:e]) not in self._pending))
            found = embedder(new) if new else []
            with self._lock:
                self._pending.update({text_key(t): np.asarray(v, dtype=np.float32) for t, v in zip(new, found)})
            return vectors
        pooled, per_span = embedder.with_sentences(list(texts), spans)
        with self._lock:
            for text, text_spans, got in zip(texts, spans, per_span):
                for (start, end), vector in zip(text_spans, got):
                    if vector is not None:
                        self._pending[text_key(text[start:end])] = vector
        return np.asarray(pooled, dtype=np.float32)

    def save(self) -> int:
        """Merge what this ingest embedded into the file (written whole, then renamed); returns the sentences kept."""
        with self._lock:
            if not self._pending:
                return len(self._rows)
            self._load()
            keys = list(self._rows) + [k for k in self._pending if k not in self._rows]
            old = {k: self._vectors[row] for k, row in self._rows.items()}
            matrix = np.stack([self._pending[k] if k in self._pending else old[k] for k in keys]).astype(np.float16)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(self.path.name + ".partial")
            with open(partial, "wb") as out:
                np.savez(out, keys=np.asarray(keys, dtype=np.int64), vectors=matrix)
            os.replace(partial, self.path)
            self._pending.clear()
            self._stamp = None  # read back on next use
            return len(keys)

    def lookup(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        """Each text's stored vector, or None when the ingest kept none for it."""
        with self._lock:
            self._load()
            rows = [self._rows.get(text_key(t)) for t in texts]
            return [None if row is None else self._vectors[row].astype(np.float32) for row in rows]

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._rows)

    def _load(self) -> None:
        """(Re)read the file when it changed since it was last read: another process may have ingested."""
        try:
            stamp = self.path.stat().st_mtime
        except OSError:
            self._rows, self._vectors, self._stamp = {}, np.zeros((0, 0), dtype=np.float16), None
            return
        if stamp == self._stamp:
            return
        try:
            with np.load(self.path) as data:
                keys, vectors = data["keys"], data["vectors"]
        except (OSError, ValueError, KeyError):  # a damaged cache is no cache: answers embed what they need
            self._rows, self._vectors, self._stamp = {}, np.zeros((0, 0), dtype=np.float16), stamp
            return
        self._rows = {int(k): i for i, k in enumerate(keys)}
        self._vectors, self._stamp = vectors, stamp
