"""The Chroma boundary: the one client of a process, its collections, and every failure of a store call
turned into one clear error, here and nowhere else.

ChromaDB's local store fails in several ways on damaged files: an InternalError naming
SQLite, a Rust panic (a BaseException, which `except Exception` misses), and, on the next
attempt, "'RustBindingsAPI' object has no attribute 'bindings'" from the half-started
client it cached. A caller sees none of these: it gets StoreDamaged (503) with a message
that says which file is damaged and what repairs it, the same message every time.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import chromadb
from chromadb.config import Settings as ChromaSettings
from chromadb.errors import NotFoundError

from ..config import Settings
from ..errors import EmbeddingMismatch, QAError, StoreDamaged
from .locking import StoreLocks

_PASS_THROUGH = (KeyboardInterrupt, SystemExit, GeneratorExit, QAError)


def chroma_path(settings: Settings) -> Path:
    return settings.data_path / "chroma"


def open_client(settings: Settings) -> Any:
    """PersistentClient in data_dir, or HttpClient when a Chroma server URL is set; failures become StoreDamaged."""
    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    if settings.chroma_url:
        url = urlparse(settings.chroma_url)
        return chromadb.HttpClient(
            host=url.hostname or "127.0.0.1",
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            settings=chroma_settings,
        )
    path = chroma_path(settings)
    path.mkdir(parents=True, exist_ok=True)
    with converted(settings):
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)


@contextmanager
def converted(settings: Settings) -> Iterator[None]:
    """Around a Chroma call: any failure but ours and an interrupt becomes store_error (a Rust panic is a BaseException)."""
    try:
        yield
    except BaseException as exc:  # noqa: BLE001
        if isinstance(exc, _PASS_THROUGH):
            raise
        raise store_error(settings, exc) from exc


def close_client(client: Any) -> None:
    """Release the client, so that the next open reads the files again (Chroma caches one per path)."""
    close = getattr(client, "close", None)
    if close is None:
        return
    try:
        close()
    except BaseException as exc:  # noqa: BLE001 - a client that never started may fail to stop
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise


def store_error(settings: Settings, exc: BaseException) -> QAError:
    """The one error for a failed store call: which part is damaged and what repairs it."""
    if settings.chroma_url:
        return StoreDamaged(
            f"the Chroma server at {settings.chroma_url} failed ({type(exc).__name__}: {_first_line(exc)}); "
            f"check that it runs and QA_CHROMA_URL, then run `qa-service check`"
        )
    damage = sqlite_damage(chroma_path(settings) / "chroma.sqlite3")
    if damage:
        return StoreDamaged(
            f"the vector store {chroma_path(settings)} is damaged ({damage}): move that folder aside and run "
            f"`qa-service ingest` with your corpus to rebuild it, or restore it from a backup"
        )
    return StoreDamaged(
        f"the vector store {chroma_path(settings)} failed ({type(exc).__name__}: {_first_line(exc)}); "
        f"run `qa-service check` to see what is damaged and `qa-service check --repair` to repair it"
    )


@functools.lru_cache(maxsize=8)
def _sqlite_damage(path: str, size: int, mtime_ns: int) -> str:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = db.execute("PRAGMA quick_check").fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        return str(exc)
    findings = [str(row[0]) for row in rows]
    return "" if findings == ["ok"] else "; ".join(findings[:3])


def sqlite_damage(path: Path) -> str:
    """What SQLite's own check finds wrong with the file ('' when sound); cached while the file is unchanged."""
    try:
        stat = path.stat()
    except OSError:
        return ""
    return _sqlite_damage(str(path), stat.st_size, stat.st_mtime_ns)


class GuardedCollection:
    """A Chroma collection whose calls fail only with StoreDamaged: library errors converted once, here."""

    def __init__(self, collection: Any, settings: Settings):
        self._collection = collection
        self._settings = settings

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._collection, name)
        if not callable(value):
            return value
        return self._guard(value)

    def _guard(self, call: Callable) -> Callable:
        @functools.wraps(call)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            with converted(self._settings):
                return call(*args, **kwargs)

        return guarded


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


class Connection:
    """The client of one data dir or Chroma server, shared by every corpus of a process, with the data dir's
    locks and the store generation it last read (embedded: a newer one means reopen, locking.py)."""

    def __init__(self, settings: Settings, client: Any = None):
        self.settings = settings
        self.shared = bool(settings.chroma_url)
        self.locks = StoreLocks(settings.data_path, readers=not self.shared)
        self.generation = self.locks.generation()  # read before opening: a write after it is noticed
        self.client = client or open_client(settings)
        self.epoch = 0  # counts reopenings: a store's collections of an older epoch are opened again
        self._lock = threading.Lock()

    def follow(self, generation: str | None) -> bool:
        """Reopen the client when another process wrote the store since we read it (Chroma's local client
        keeps the vector index in memory and would go on answering from the old one). True if reopened."""
        if self.shared or generation is None or generation == self.generation:
            return False
        with self._lock:
            if generation == self.generation:
                return False
            close_client(self.client)
            self.client = open_client(self.settings)  # on failure the generation stays old: the next request tries again
            self.generation = generation
            self.epoch += 1
        return True

    def wrote(self) -> None:
        """After our own write: our client saw every change."""
        self.generation = self.locks.generation()

    def collection(self, name: str, embedder: Any, model_id: str, create: bool = True) -> GuardedCollection:
        """A collection opened with our embedding function; one built with another model is refused."""
        with converted(self.settings):
            try:
                if create:
                    found = self.client.get_or_create_collection(name, embedding_function=embedder, metadata={"embedding_model": model_id},
                                                                 configuration={"hnsw": {"space": "cosine"}})
                else:
                    found = self.client.get_collection(name, embedding_function=embedder)
            except ValueError as exc:
                raise EmbeddingMismatch(f"collection {name!r} was built with another embedding function ({exc}); "
                                        f"re-ingest into a new data dir or collection") from exc
        stored = (found.metadata or {}).get("embedding_model")
        if stored and stored != model_id:
            raise EmbeddingMismatch(
                f"the index in {self.settings.chroma_url or self.settings.data_dir} was built with {stored}, but {model_id} "
                f"is configured: re-ingest (qa-service ingest) into an empty data dir or a new collection, or configure {stored}"
            )
        return GuardedCollection(found, self.settings)

    def plain(self, name: str) -> GuardedCollection:
        """A collection of records that need no embedding function (server mode's meta collection)."""
        with converted(self.settings):
            return GuardedCollection(self.client.get_or_create_collection(name, embedding_function=None), self.settings)

    def listed(self) -> list[tuple[str, dict[str, Any]]]:
        """(name, metadata) of every collection the store holds."""
        with converted(self.settings):
            return [(c if isinstance(c, str) else c.name, {} if isinstance(c, str) else dict(c.metadata or {}))
                    for c in self.client.list_collections()]

    def delete(self, name: str) -> None:
        """Delete a collection; one already gone is fine (a drop interrupted midway)."""
        try:
            with converted(self.settings):
                self.client.delete_collection(name)
        except StoreDamaged as exc:
            cause = exc.__cause__
            if not (isinstance(cause, NotFoundError) or "does not exist" in str(cause).lower() or "not found" in str(cause).lower()):
                raise
