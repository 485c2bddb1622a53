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

The same file holds each abstract's sentence roles (corpus/roles.py: role, figures, negative, one
small int a sentence, with its offsets), by the abstract's text: a role depends on the sentence's
place in its abstract, so it is kept per abstract, not per sentence text. Answers read them instead
of deriving them; a file written before roles were kept loads as before, and answers derive them, as
they do when the rules (corpus/roles.py, the sentence splitter) changed since: the next ingest
derives them anew.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from ..corpus.roles import RULES_VERSION, RoledSentence, sentence_roles
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
        self._pending_roles: dict[int, np.ndarray] = {}
        self._roles = Roles.empty()
        self._stamp: float | None = None
        self._lock = threading.Lock()

    def embed_chunks(self, embedder: Any, texts: Sequence[str]) -> np.ndarray:
        """The chunks' vectors, as the embedder gives them; their sentences' vectors from the same run, kept for save()."""
        local = getattr(embedder, "local", False)  # a paid API per sentence is too dear: answers embed what they need
        if self.mode == "off" or not local or (self.mode == "pooled" and not hasattr(embedder, "with_sentences")):
            return np.asarray(embedder(list(texts)), dtype=np.float32)
        spans = [sentence_spans(text) or [(0, len(text))] for text in texts]
        if self.mode == "alone":
            return self._alone(embedder, texts, spans)
        pooled, per_span = embedder.with_sentences(list(texts), spans)
        with self._lock:
            for text, text_spans, got in zip(texts, spans, per_span):
                for (start, end), vector in zip(text_spans, got):
                    if vector is not None:
                        self._pending[text_key(text[start:end])] = vector
        return np.asarray(pooled, dtype=np.float32)

    def _alone(self, embedder: Any, texts: Sequence[str], spans: list[list[tuple[int, int]]]) -> np.ndarray:
        """The chunks' vectors; each new sentence embedded on its own, but for one that is a whole chunk: its vector is the chunk's."""
        vectors = np.asarray(embedder(list(texts)), dtype=np.float32)
        with self._lock:
            self._load()
            new = list(dict.fromkeys(text[s:e] for text, ss in zip(texts, spans) for s, e in ss
                                     if text_key(text[s:e]) not in self._rows and text_key(text[s:e]) not in self._pending))
        whole = dict(zip(texts, vectors))
        rest = [t for t in new if t not in whole]
        found = dict(zip(rest, embedder(rest) if rest else []))
        with self._lock:
            self._pending.update({text_key(t): np.asarray(whole[t] if t in whole else found[t], dtype=np.float32) for t in new})
        return vectors

    def save(self) -> int:
        """Merge what this ingest embedded into the file (written whole, then renamed); returns the sentences kept."""
        with self._lock:
            if not self._pending and not self._pending_roles:
                return len(self._rows)
            self._load()
            keys = list(self._rows) + [k for k in self._pending if k not in self._rows]
            old = {k: self._vectors[row] for k, row in self._rows.items()}
            rows = [self._pending[k] if k in self._pending else old[k] for k in keys]
            matrix = np.stack(rows).astype(np.float16) if rows else np.zeros((0, 0), dtype=np.float16)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_name(self.path.name + ".partial")
            with open(partial, "wb") as out:
                role_keys, role_offsets, role_table = self._roles.merged(self._pending_roles)
                np.savez(out, keys=np.asarray(keys, dtype=np.int64), vectors=matrix, role_rules=np.asarray(RULES_VERSION),
                         role_keys=role_keys, role_offsets=role_offsets, role_table=role_table)
            os.replace(partial, self.path)
            self._pending.clear()
            self._pending_roles.clear()
            self._stamp = None  # read back on next use
            return len(keys)

    def keep_roles(self, texts: Iterable[str]) -> None:
        """Each abstract's sentence roles, derived once at ingest and kept for save(); abstracts the file has are skipped."""
        with self._lock:
            self._load()
            wanted = {text_key(t): t for t in texts}
            wanted = {k: t for k, t in wanted.items() if k not in self._roles.rows and k not in self._pending_roles}
        found = {k: np.asarray([(r.start, r.end, r.code) for r in sentence_roles(t)], dtype=np.int32).reshape(-1, 3)
                 for k, t in wanted.items()}
        with self._lock:
            self._pending_roles.update(found)

    def roles(self, text: str) -> list[RoledSentence] | None:
        """The abstract's sentences with their roles as the ingest derived them, or None when it kept none for it."""
        with self._lock:
            self._load()
            table = self._roles.table_of(text_key(text))
        if table is None:
            return None
        try:
            return [RoledSentence.from_code(int(start), int(end), int(code)) for start, end, code in table]
        except ValueError:  # a code this version does not know: derived instead
            return None

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
            self._rows, self._vectors, self._roles, self._stamp = {}, np.zeros((0, 0), dtype=np.float16), Roles.empty(), None
            return
        if stamp == self._stamp:
            return
        try:
            with np.load(self.path) as data:
                keys, vectors, roles = data["keys"], data["vectors"], Roles.read(data)
        except (OSError, ValueError, KeyError):  # a damaged cache is no cache: answers embed what they need
            self._rows, self._vectors, self._roles, self._stamp = {}, np.zeros((0, 0), dtype=np.float16), Roles.empty(), stamp
            return
        self._rows = {int(k): i for i, k in enumerate(keys)}
        self._vectors, self._roles, self._stamp = vectors, roles, stamp


class Roles:
    """Sentence roles as the file holds them: per abstract key, a slice of one (start, end, code) table."""

    def __init__(self, keys: np.ndarray, offsets: np.ndarray, table: np.ndarray):
        self.rows = {int(k): i for i, k in enumerate(keys)}
        self.offsets, self.table = offsets, table

    @staticmethod
    def empty() -> Roles:
        return Roles(np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros((0, 3), dtype=np.int32))

    @staticmethod
    def read(data: Any) -> Roles:
        """From an opened file; one written before roles were kept, or under other rules, has none."""
        if "role_keys" not in data.files or str(data["role_rules"]) != RULES_VERSION:
            return Roles.empty()
        roles = Roles(data["role_keys"], data["role_offsets"], data["role_table"])
        if len(roles.offsets) != len(roles.rows) + 1 or roles.table.ndim != 2 or roles.table.shape[1] != 3:
            raise ValueError("the sentence roles in the file do not fit together")
        return roles

    def table_of(self, key: int) -> np.ndarray | None:
        row = self.rows.get(key)
        return None if row is None else self.table[self.offsets[row] : self.offsets[row + 1]]

    def merged(self, pending: dict[int, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """These roles and the pending ones (which win): the keys, offsets and table save() writes."""
        tables = {key: self.table[self.offsets[row] : self.offsets[row + 1]] for key, row in self.rows.items()}
        tables.update(pending)
        counts = [len(t) for t in tables.values()]
        table = np.concatenate(list(tables.values())) if tables else np.zeros((0, 3), dtype=np.int32)
        return (np.asarray(list(tables), dtype=np.int64), np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                table.astype(np.int32))
