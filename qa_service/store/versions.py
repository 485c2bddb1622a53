"""The corpus as a Chroma server holds it: versions, and a pointer to the one being served.

With a Chroma server (QA_CHROMA_URL) everything an app process needs is in Chroma, so app
machines keep nothing of their own: any number of them can serve, from an empty data dir.
Collections of one prefix P (the `collection` setting):
- `P_v<version>_chunks` and `P_v<version>_papers`: one corpus version each, written whole by
  one ingest and never changed once served (`P_chunks`, `P_papers`: a store from before versions).
- `P_meta`: the manifest, which names the version being served; a record naming the version
  being built (`pending`); and per version its ledger and its BM25 index, as bytes in record metadata. Not as documents:
  Chroma indexes every document for full-text search (40 MB took 57 s as documents, 2.5 s as
  metadata, on `chroma run`).
- `P_writer`: the writer lease (lease.py).
An ingest builds the next version beside the one being served and switches the manifest last,
so readers go on answering from the old version until the new one is complete. The version
before stays until the next ingest that changes the corpus, for readers that have not switched.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import json
import logging
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import QAError
from .chroma import Connection
from .collections import Pair, View
from .lexical import LexicalIndex
from .manifest import Ledger, Manifest, ManifestRead, checked_manifest

MANIFEST_ID = "manifest"
PENDING_ID = "pending"
PART_CHARS = 4_000_000  # base64 characters per metadata record: 40 MB in 10 parts read back in 0.45 s
UNIT = [1.0]  # the meta collection's records need a vector; nobody queries it
RETIRE_AFTER = 60.0  # seconds a superseded version stays at least, for readers still switching away from it

log = logging.getLogger(__name__)


__all__ = ["Pair", "Versions", "View", "Views"]  # Pair and View live in collections.py


class Views:
    """The view a process serves, and the one each request pinned (per thread). With a Chroma server
    a new version is readied in the background, then served by one assignment; a request keeps the
    view it started with, whatever happens meanwhile (the old version's collections stay well after)."""

    def __init__(self, view: View):
        self.served = view
        self._local = threading.local()
        self._polled_at = time.monotonic()
        self._switching = ""
        self._lock = threading.Lock()

    def current(self) -> View:
        return getattr(self._local, "view", None) or self.served

    @contextmanager
    def pinned(self) -> Iterator[None]:
        if getattr(self._local, "view", None) is not None:  # nested: the outer request's view
            yield
            return
        self._local.view = self.served
        try:
            yield
        finally:
            self._local.view = None

    def poll(self, read: Callable[[], ManifestRead], ready: Callable[[ManifestRead], View], every: float) -> None:
        """Re-read the manifest at most every `every` seconds; a new version is readied in a thread of its own."""
        now = time.monotonic()
        if now - self._polled_at < every:
            return
        self._polled_at = now
        try:
            found = read()
        except QAError as exc:  # the server is away: requests say so themselves
            log.warning("cannot read the manifest: %s", exc.message)
            return
        served = self.served.manifest
        version = found.data.version
        if found.problem or (served is not None and not served.problem and served.data.version == version):
            return  # nothing new (a damaged manifest keeps the version being served)
        with self._lock:
            if self._switching:
                return
            self._switching = version
        threading.Thread(target=self._switch, args=(found, ready), name=f"ready-{version}", daemon=True).start()

    def _switch(self, found: ManifestRead, ready: Callable[[ManifestRead], View]) -> None:
        try:
            self.served = ready(found)
            log.info("serving corpus version %s (%s papers)", found.data.version, found.data.papers)
        except QAError as exc:
            log.warning("cannot switch to corpus version %s yet: %s", found.data.version, exc.message)
        finally:
            self._switching = ""


def new_version() -> str:
    return uuid.uuid4().hex[:12]


class Blobs:
    """Bytes of any size in the meta collection: base64 in record metadata, in parts, checked by sha256."""

    def __init__(self, meta: Any):
        self.meta = meta

    def put(self, key: str, version: str, data: bytes) -> None:
        text = base64.b64encode(data).decode("ascii")
        digest = hashlib.sha256(data).hexdigest()
        parts = [text[i : i + PART_CHARS] for i in range(0, len(text), PART_CHARS)] or [""]
        self.meta.delete(where={"blob": key})
        for n, part in enumerate(parts):  # one call each: a call is one HTTP body, and ours stay under ~5 MB
            self.meta.upsert(ids=[f"{key}:{n}"], embeddings=[UNIT], metadatas=[{
                "kind": "blob", "blob": key, "version": version, "part": n, "parts": len(parts), "sha256": digest, "data": part}])

    def get(self, key: str) -> bytes | None:
        """The bytes as put, or None when absent, incomplete or damaged."""
        found = self.meta.get(where={"blob": key}, include=["metadatas"])
        parts = sorted((m for m in found["metadatas"] if m), key=lambda m: int(m.get("part", -1)))
        if not parts or len(parts) != int(parts[0].get("parts", 0)) or [int(m["part"]) for m in parts] != list(range(len(parts))):
            return None
        try:
            data = base64.b64decode("".join(str(m["data"]) for m in parts), validate=True)
        except (ValueError, KeyError):
            return None
        return data if hashlib.sha256(data).hexdigest() == parts[0].get("sha256") else None

    def keep_only(self, versions: set[str]) -> None:
        """Drop the blobs of every other version."""
        self.meta.delete(where={"$and": [{"kind": "blob"}, {"version": {"$nin": sorted(versions) or [""]}}]})


class SharedManifest:
    """The manifest and ledger in the meta collection, with ManifestFiles' interface (check uses either)."""

    def __init__(self, meta: Any, blobs: Blobs, where: str):
        self.meta = meta
        self.blobs = blobs
        self.where = f"{where}, record '{MANIFEST_ID}'"
        self.ledger_where = f"{where}, the ledger of the version served"

    def exists(self) -> bool:
        return bool(self.meta.get(ids=[MANIFEST_ID], include=[])["ids"])

    def read(self) -> ManifestRead:
        found = self.meta.get(ids=[MANIFEST_ID], include=["metadatas"])
        if not found["ids"]:
            return ManifestRead(Manifest(), f"the manifest ({self.where}) is missing")
        try:
            data = json.loads(str((found["metadatas"][0] or {}).get("data", "")))
        except ValueError:
            return ManifestRead(Manifest(), f"the manifest ({self.where}) is not JSON")
        return checked_manifest(data, f"({self.where})")

    def write(self, manifest: Manifest) -> None:
        """One record, replaced whole: the switch from one version to the next is this one write."""
        self.meta.upsert(ids=[MANIFEST_ID], embeddings=[UNIT], metadatas=[{"kind": "manifest", "data": json.dumps(manifest.to_json())}])

    def read_ledger(self) -> Ledger | None:
        version = self.read().data.version
        data = self.blobs.get(f"ledger:{version}") if version else None
        if data is None:
            return None
        try:
            return Ledger.from_json(json.loads(data))
        except ValueError:
            return None

    def write_ledger(self, ledger: Ledger) -> None:
        self.blobs.put(f"ledger:{ledger.version}", ledger.version, json.dumps(ledger.to_json()).encode("utf-8"))


class Versions:
    """The versions of one prefix on a Chroma server: names, opening, building the next, retiring old ones."""

    def __init__(self, connection: Connection, settings: Settings, open_collection: Callable[[str, bool], Any]):
        self.connection = connection
        self.settings = settings
        self.prefix = settings.collection
        self.where = f"the Chroma server at {settings.chroma_url} (collections {self.prefix}_*)"
        self._open = open_collection
        self.meta = connection.plain(f"{self.prefix}_meta")
        self.blobs = Blobs(self.meta)
        self.files = SharedManifest(self.meta, self.blobs, f"{settings.chroma_url} collection {self.prefix}_meta")
        self._version_name = re.compile(rf"^{re.escape(self.prefix)}_(v[0-9a-f]{{12}}_)?(chunks|papers)$")

    # -- names -------------------------------------------------------------------------
    def names(self, version: str) -> tuple[str, str]:
        return f"{self.prefix}_v{version}_chunks", f"{self.prefix}_v{version}_papers"

    def live_names(self, manifest: Manifest) -> tuple[str, str]:
        """The collections a manifest serves; a store from before versions (or none yet) uses the plain names."""
        if manifest.chunks_collection and manifest.papers_collection:
            return manifest.chunks_collection, manifest.papers_collection
        return f"{self.prefix}_chunks", f"{self.prefix}_papers"

    def open(self, names: tuple[str, str], create: bool) -> Pair:
        return Pair(self._open(names[0], create), self._open(names[1], create))

    # -- BM25 ----------------------------------------------------------------------------
    def lexical(self, version: str, cache: Path, rebuild: Callable[[], LexicalIndex]) -> tuple[LexicalIndex, str]:
        """(BM25 of a version, where it came from): this machine's cache, else the copy stored in Chroma,
        else `rebuild()`. What was fetched or built is cached for the next start; other versions' copies go."""
        lexical, source = (LexicalIndex.load(cache) if cache.exists() else None), "cache"
        if lexical is None or lexical.version != version:
            stored = self.blobs.get(f"bm25:{version}")
            lexical, source = (LexicalIndex.from_bytes(stored, cache) if stored else None), "chroma"
        if lexical is None or lexical.version != version:
            lexical, source = rebuild(), "rebuilt"
            lexical.save_new(cache)
        for path in cache.parent.glob(f"{self.prefix}_v*.bm25"):  # best effort: another worker may still read one
            if path.name != cache.name:
                shutil.rmtree(path, ignore_errors=True)
        return lexical, source

    def stored_lexical(self, version: str) -> LexicalIndex | None:
        """The copy stored in Chroma, unpacked and checked (for `check`); None when missing or damaged."""
        stored = self.blobs.get(f"bm25:{version}") if version else None
        if not stored:
            return None
        with tempfile.TemporaryDirectory(prefix="qa-check-") as tmp:
            return LexicalIndex.from_bytes(stored, Path(tmp) / "bm25")

    # -- building the next version -----------------------------------------------------
    def staging(self, served: str) -> tuple[str, Pair, Pair | None]:
        """A new version to build, and the one an interrupted ingest left (to copy its finished papers
        from), if any. A version is only ever written by the ingest that created it: a writer that
        lost the lock but still runs can finish or switch to its own version, never to another's.
        The pending record names the new version before anything is written to it."""
        left = self.pending()
        left = "" if left == served else left  # switched to, but killed before it cleared the record: it is served
        version = new_version()
        self.meta.upsert(ids=[PENDING_ID], embeddings=[UNIT], metadatas=[{"kind": "pending", "data": version, "started_at": _now()}])
        return version, self.open(self.names(version), True), (self.open(self.names(left), True) if left else None)

    def pending(self) -> str:
        """The version being built (or left half-built by an interrupted ingest); '' when none."""
        found = self.meta.get(ids=[PENDING_ID], include=["metadatas"])
        version = str((found["metadatas"][0] or {}).get("data", "")) if found["ids"] else ""
        return version if re.fullmatch(r"[0-9a-f]{12}", version) else ""

    def finish_pending(self) -> None:
        self.meta.delete(ids=[PENDING_ID])

    # -- clearing up ---------------------------------------------------------------------
    def retire_unused(self, manifest: Manifest, keep_pending: bool = True) -> None:
        """Delete the versions nobody serves: all but the one served, the one being built (or left by
        an interrupted ingest), and the one before while readers may still be switching away from it."""
        keep = set(self.live_names(manifest))
        versions = {manifest.version}
        pending = self.pending() if keep_pending else ""
        if pending:
            keep |= set(self.names(pending))
            versions.add(pending)
        previous = manifest.previous
        if previous is not None and _age(manifest.built_at) < RETIRE_AFTER:
            keep |= {previous.chunks_collection, previous.papers_collection}
            versions.add(previous.version)
        for name in self.retire(keep, versions):
            log.info("retired %s", name)

    def drop(self, pair: Pair) -> None:
        """Delete one version's collections (an interrupted version, once its papers were copied on)."""
        for collection in pair:
            self.connection.delete(collection.name)

    def drop_all(self) -> None:
        """Delete every collection of this prefix: each version, then the meta collection (a dropped corpus)."""
        meta = f"{self.prefix}_meta"
        self._delete(lambda names: [n for n in names if self._version_name.match(n)] + ([meta] if meta in names else []))

    def retire(self, keep: set[str], keep_versions: set[str]) -> list[str]:
        """Delete the version collections of this prefix not in `keep`, and the blobs of other versions."""
        gone = self._delete(lambda names: [n for n in names if self._version_name.match(n) and n not in keep])
        self.blobs.keep_only(keep_versions)
        return gone

    def _delete(self, choose: Callable[[list[str]], list[str]]) -> list[str]:
        """Delete, in order, the collections `choose` picks from the server's names; a failure is the store's error."""
        chosen = choose([name for name, _ in self.connection.listed()])
        for name in chosen:
            self.connection.delete(name)
        return chosen


def _age(stamp: Any) -> float:
    """Seconds since a manifest's built_at (its writer's clock); infinite when unknown."""
    try:
        return time.time() - calendar.timegm(time.strptime(str(stamp), "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        return float("inf")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
