"""The manifest and the ledger beside the data, written whole or not at all.

The manifest says which corpus version is complete (`state` ready) and so which BM25
files belong to it. The ledger lists what the store should hold once an ingest is done,
one entry per paper (content hash, embedding hash, chunk count): `qa-service check`
compares the store against it.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..records import StoredHashes

STATES = ("ingesting", "ready")


@dataclass(frozen=True)
class ManifestRead:
    """The manifest as read, and what is wrong with it ('' when it is sound)."""

    data: dict
    problem: str = ""


class ManifestFiles:
    """`<collection>.manifest.json` and `<collection>.ledger.json` in the data dir."""

    def __init__(self, folder: Path, collection: str):
        self.path = folder / f"{collection}.manifest.json"
        self.ledger_path = folder / f"{collection}.ledger.json"

    def read(self) -> ManifestRead:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return ManifestRead({}, f"the manifest {self.path} is missing")
        except (OSError, ValueError) as exc:
            return ManifestRead({}, f"the manifest {self.path} is unreadable ({type(exc).__name__})")
        return checked_manifest(data, str(self.path))

    def write(self, data: dict) -> None:
        _write_atomically(self.path, data)

    def read_ledger(self) -> tuple[dict[str, StoredHashes] | None, str]:
        """(paper id -> what the store should hold, the manifest version it was written for); None when absent or unreadable."""
        try:
            data = json.loads(self.ledger_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None, ""
        papers = ledger_from(data)
        return (papers, str(data.get("version", ""))) if papers is not None else (None, "")

    def write_ledger(self, papers: dict[str, StoredHashes], version: str) -> None:
        _write_atomically(self.ledger_path, ledger_json(papers, version))


def checked_manifest(data: object, where: str) -> ManifestRead:
    """A manifest as read from anywhere (a file, a Chroma record): sound, or what is wrong with it."""
    if not isinstance(data, dict):
        return ManifestRead({}, f"the manifest {where} is not a JSON object")
    if data.get("state") not in STATES or not isinstance(data.get("version"), str) or not data["version"]:
        return ManifestRead({}, f"the manifest {where} has no valid state and version")
    return ManifestRead(data)


def ledger_from(data: object) -> dict[str, StoredHashes] | None:
    """The ledger's papers from its JSON form; None when it is not one."""
    try:
        return {pid: StoredHashes(str(c), str(e), int(n)) for pid, (c, e, n) in data["papers"].items()}  # type: ignore[index]
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def ledger_json(papers: dict[str, StoredHashes], version: str) -> dict:
    return {"version": version, "papers": {pid: list(h) for pid, h in sorted(papers.items())}}


def _write_atomically(path: Path, data: dict) -> None:
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
