"""The manifest and the ledger, typed, and their files beside the data, written whole or not at all.

The manifest says which corpus version is complete (`state` ready) and so which BM25
files belong to it; with a Chroma server it also names that version's collections and the
version before. The ledger lists what the store should hold once an ingest is done, one
entry per paper (content hash, embedding hash, chunk count): `qa-service check` compares the
store against it. Both are read and written only here (and, as records in Chroma, versions.py).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..records import StoredHashes

STATES = ("ingesting", "ready")
MANIFEST_TTL = 2.0  # seconds a reader trusts the manifest it read: another process's ingest is noticed within this


@dataclass(frozen=True)
class Previous:
    """The version served before (server mode), kept a while for readers still switching away from it."""

    version: str
    chunks_collection: str
    papers_collection: str


@dataclass(frozen=True)
class Manifest:
    """One corpus version as its writer left it; the empty manifest (no state) when there is none."""

    state: str = ""
    version: str = ""
    generation: int = 0
    built_at: str | None = None
    embedding_model: str = ""
    papers: int | None = None
    chunks: int | None = None
    chunks_collection: str = ""  # server mode: the collections this version lives in
    papers_collection: str = ""
    previous: Previous | None = None

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in ("", None)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Manifest:
        previous = data.get("previous")
        prev = None
        if isinstance(previous, dict):
            prev = Previous(str(previous.get("version", "")), str(previous.get("chunks_collection", "")),
                            str(previous.get("papers_collection", "")))
        papers, chunks = data.get("papers"), data.get("chunks")
        return cls(
            state=str(data.get("state", "")), version=str(data.get("version", "")), generation=_int(data.get("generation")),
            built_at=str(data["built_at"]) if data.get("built_at") else None, embedding_model=str(data.get("embedding_model", "")),
            papers=papers if isinstance(papers, int) else None, chunks=chunks if isinstance(chunks, int) else None,
            chunks_collection=str(data.get("chunks_collection") or ""), papers_collection=str(data.get("papers_collection") or ""),
            previous=prev,
        )

    def started(self, version: str) -> Manifest:
        """The manifest while an ingest writes in place (embedded): not ready, under a new version."""
        return replace(self, state="ingesting", version=version)

    def built(self, version: str, model: str, papers: int, chunks: int, **where: Any) -> Manifest:
        """The next ready version: a new version id, the generation after this one's, counted now."""
        return replace(self, state="ready", version=version, generation=self.generation + 1,
                       built_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), embedding_model=model,
                       papers=papers, chunks=chunks, **where)


@dataclass(frozen=True)
class ManifestRead:
    """The manifest as read, and what is wrong with it ('' when it is sound)."""

    data: Manifest = field(default_factory=Manifest)
    problem: str = ""


@dataclass(frozen=True)
class Ledger:
    """What the store should hold, per paper id, and the manifest version it was written for."""

    papers: dict[str, StoredHashes]
    version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "papers": {pid: list(h) for pid, h in sorted(self.papers.items())}}

    @classmethod
    def from_json(cls, data: object) -> Ledger | None:
        """The ledger from its JSON form; None when it is not one."""
        try:
            papers = {str(pid): StoredHashes(str(c), str(e), int(n)) for pid, (c, e, n) in data["papers"].items()}  # type: ignore[index]
            return cls(papers, str(data.get("version", "")))  # type: ignore[attr-defined]
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


class ManifestFiles:
    """`<collection>.manifest.json` and `<collection>.ledger.json` in the data dir."""

    def __init__(self, folder: Path, collection: str):
        self.path = folder / f"{collection}.manifest.json"
        self.ledger_path = folder / f"{collection}.ledger.json"

    @property
    def where(self) -> str:
        return str(self.path)

    @property
    def ledger_where(self) -> str:
        return str(self.ledger_path)

    def exists(self) -> bool:
        return self.path.exists()

    def read(self) -> ManifestRead:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return ManifestRead(Manifest(), f"the manifest {self.path} is missing")
        except (OSError, ValueError) as exc:
            return ManifestRead(Manifest(), f"the manifest {self.path} is unreadable ({type(exc).__name__})")
        return checked_manifest(data, str(self.path))

    def write(self, manifest: Manifest) -> None:
        _write_atomically(self.path, manifest.to_json())

    def read_ledger(self) -> Ledger | None:
        """What the store should hold; None when the ledger is absent or unreadable."""
        try:
            return Ledger.from_json(json.loads(self.ledger_path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            return None

    def write_ledger(self, ledger: Ledger) -> None:
        _write_atomically(self.ledger_path, ledger.to_json())

    def remove(self) -> None:
        for path in (self.path, self.ledger_path):
            path.unlink(missing_ok=True)


def checked_manifest(data: object, where: str) -> ManifestRead:
    """A manifest as read from anywhere (a file, a Chroma record): sound, or what is wrong with it."""
    if not isinstance(data, dict):
        return ManifestRead(Manifest(), f"the manifest {where} is not a JSON object")
    if data.get("state") not in STATES or not isinstance(data.get("version"), str) or not data["version"]:
        return ManifestRead(Manifest(), f"the manifest {where} has no valid state and version")
    return ManifestRead(Manifest.from_json(data))


def _int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return 0


def _write_atomically(path: Path, data: dict[str, Any]) -> None:
    """Write a temp file, then rename it over the old one: a reader sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
