"""The Chroma boundary: open a client, and turn every failure of a store call into one clear error.

ChromaDB's local store fails in several ways on damaged files: an InternalError naming
SQLite, a Rust panic (a BaseException, which `except Exception` misses), and, on the next
attempt, "'RustBindingsAPI' object has no attribute 'bindings'" from the half-started
client it cached. A caller sees none of these: it gets StoreDamaged (503) with a message
that says which file is damaged and what repairs it, the same message every time.
"""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import chromadb
from chromadb.config import Settings as ChromaSettings

from ..config import Settings
from ..errors import QAError, StoreDamaged

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
    try:
        return chromadb.PersistentClient(path=str(path), settings=chroma_settings)
    except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException
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
            try:
                return call(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - a Rust panic is a BaseException
                if isinstance(exc, _PASS_THROUGH):
                    raise
                raise store_error(self._settings, exc) from exc

        return guarded


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]
