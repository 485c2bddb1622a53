"""One ingest, whichever store holds the corpus.

1. The input is read and validated before (corpus/reading.py); here it is diffed against what the
   version served holds: each paper is new or re-embedded (its text, the chunking or the model
   changed, or its chunks in the store are missing or extra), relabelled (metadata only: nothing
   re-embedded), kept, or — with `sync` — removed because the input no longer has it.
2. Nothing to do: the store settles (a half-built version is cleared, a lost manifest rewritten)
   and the summary says every paper is unchanged.
3. Else the store stages the next version (embedded: the served collections, in place, readers held
   off; server: a new version beside the one served) and the plan is written into it in batches of
   `ingest_batch_papers`, each paper's chunks before its record, so that a paper present is whole and
   an interrupted ingest resumes by running it again: papers already written as planned are kept.
4. The stage is finished: a new manifest, ledger and BM25 index (server: the switch, in one write).

Per-paper derived data: an IngestHooks is told of each batch of papers right after their chunks
and vectors are written (`embedded`), of papers carried over unchanged (`kept`) and of papers
removed (`removed`), so a sidecar computed at ingest lives and dies with the papers it derives from.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..errors import QAError
from ..records import Chunk, Paper, StoredHashes
from .collections import Pair, expected_chunk_ids

Progress = Callable[[int], None]
INGEST_PROBES = 4  # chunks an ingest looks up by their own stored vector before it trusts the vector index (~5 ms each)


@dataclass
class IngestSummary:
    papers: int
    added: int
    updated: int
    unchanged: int
    removed: int
    chunks: int
    seconds: float
    repaired: int = 0  # unchanged papers re-embedded because their chunks in the store were missing or extra
    resumed: int = 0  # papers an interrupted ingest had already written to the next version (server mode)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class EmbeddedPaper:
    """One paper as this ingest wrote it: its chunks and their vectors (one row per chunk)."""

    paper: Paper
    chunks: list[Chunk]
    vectors: np.ndarray


class IngestHooks:
    """Where per-paper derived data is written; every method is called inside the stage, before it is finished."""

    def embedded(self, target: Pair, papers: Sequence[EmbeddedPaper]) -> None:
        """A batch of papers was embedded and written into `target`."""

    def kept(self, source: Pair, target: Pair, paper_ids: Sequence[str]) -> None:
        """Papers carried over without re-embedding (server mode: copied from `source`; embedded: source is target)."""

    def removed(self, target: Pair, paper_ids: Sequence[str]) -> None:
        """Papers the next version no longer holds."""


@dataclass(frozen=True)
class Encoder:
    """How papers become chunks and vectors, and the hash of everything the vectors depend on."""

    chunk: Callable[[Paper], list[Chunk]]
    embed: Callable[[list[str]], Any]
    embed_hash: Callable[[Paper], str]

    def encode(self, papers: Sequence[Paper]) -> tuple[list[list[Chunk]], np.ndarray]:
        chunks = [self.chunk(p) for p in papers]
        texts = [c.text for mine in chunks for c in mine]
        return chunks, np.asarray(self.embed(texts), dtype=np.float32)


@dataclass
class Plan:
    """What an ingest will do, decided before anything is written."""

    papers: list[Paper]
    existing: dict[str, StoredHashes]  # what the version served holds
    embed: list[Paper] = field(default_factory=list)  # new, changed, or whole no more (a kept one read back from its record)
    relabel: list[Paper] = field(default_factory=list)  # metadata only
    keep: dict[str, StoredHashes] = field(default_factory=dict)  # unchanged, carried over as they are
    remove: list[str] = field(default_factory=list)  # papers the next version does not hold (sync)
    strays: set[str] = field(default_factory=set)  # chunk ids to drop: of no paper, or of a paper removed
    repaired: set[str] = field(default_factory=set)
    rebuild: bool = False  # the vector index is unsound: every paper re-embedded into collections made anew
    wanted: dict[str, tuple[str, str]] = field(default_factory=dict)  # (content hash, embed hash) the next version holds

    @property
    def changed(self) -> bool:
        return bool(self.embed or self.relabel or self.remove or self.strays)


class Staging(Protocol):
    """Where one ingest writes the next version: the served collections in place, or a new version."""

    source: Pair  # the version served, what unchanged papers are carried over from
    held: dict[str, set[str]]  # the chunk ids `target` holds per paper, before this ingest writes
    resumed: dict[str, StoredHashes]  # papers an interrupted ingest already wrote into `target` as planned

    @property
    def target(self) -> Pair: ...
    def checkpoint(self) -> None: ...
    def keep(self, hashes: dict[str, StoredHashes], papers: dict[str, Paper]) -> None: ...
    def relabel(self, papers: Sequence[Paper], hashes: dict[str, StoredHashes]) -> None: ...
    def remove(self, paper_ids: Sequence[str], chunk_ids: set[str]) -> None: ...
    def finish(self, ledger: dict[str, StoredHashes], wanted: dict[str, tuple[str, str]]) -> None: ...


class IngestTarget(Protocol):
    """What ingest needs of a store (store/protocol.py's Store has it)."""

    def live(self) -> Pair: ...
    def settle(self, existing: dict[str, StoredHashes]) -> None: ...
    def stage(self, plan: Plan) -> AbstractContextManager[Staging]: ...


def index_sound(pair: Pair) -> bool:
    """The vector index finds chunks by their own stored vectors (one it cannot read, or a query that fails, is unsound)."""
    try:
        return not pair.unfound_stored(INGEST_PROBES)
    except QAError:
        return False


def make_plan(papers: Sequence[Paper], live: Pair, encoder: Encoder, sync: bool, sound: bool = True) -> Plan:
    """Diff the input against the version served (see the module's docstring)."""
    existing, held = live.stored_hashes(), live.chunk_ids_by_paper()
    marked = live.marked() if existing else set()
    plan = Plan(list(papers), existing, rebuild=not sound)
    whole = {pid for pid, h in existing.items() if held.get(pid, set()) == expected_chunk_ids(pid, h.n_chunks)}
    given = {p.id for p in papers}
    for paper in papers:
        stored = existing.get(paper.id)
        if stored is None or stored.embed_hash != encoder.embed_hash(paper) or paper.id not in whole or not sound:
            plan.embed.append(paper)
            if stored is not None and paper.id not in whole:
                plan.repaired.add(paper.id)
        elif stored.content_hash != paper.content_hash or paper.id not in marked:
            plan.relabel.append(paper)
        else:
            plan.keep[paper.id] = stored
    others = sorted(set(existing) - given)
    if sync:
        plan.remove = others
        plan.strays = {cid for pid in set(held) - given for cid in held[pid]}
    else:
        broken = [pid for pid in others if pid not in whole or not sound]
        plan.embed += live.get_papers(broken).values()  # a kept paper no longer whole: re-embedded from its record
        plan.keep.update({pid: existing[pid] for pid in others if pid not in broken})
        plan.strays = {cid for pid in set(held) - set(existing) - given for cid in held[pid]}  # chunks of no paper
    plan.wanted = {pid: (h.content_hash, h.embed_hash) for pid, h in plan.keep.items()}
    plan.wanted.update({p.id: (p.content_hash, encoder.embed_hash(p)) for p in [*plan.embed, *plan.relabel]})
    return plan


def ingest(store: IngestTarget, papers: Sequence[Paper], encoder: Encoder, batch_papers: int, sync: bool = False,
           progress: Progress | None = None, hooks: IngestHooks | None = None, rebuild: bool = False) -> IngestSummary:
    """Bring the store to hold the input (and, without `sync`, whatever else it holds): see the module's docstring.
    `rebuild` (or a vector index that does not find its own chunks): every paper embedded anew."""
    started = time.perf_counter()

    def tell(n: int) -> None:
        if progress is not None and n:
            progress(n)

    hooks = hooks or IngestHooks()
    live = store.live()
    plan = make_plan(papers, live, encoder, sync, not rebuild and index_sound(live))
    given = {p.id for p in papers}
    resumed: dict[str, StoredHashes] = {}
    chunk_count = 0
    if not plan.changed:
        store.settle(plan.existing)
        tell(len(papers))
    else:
        with store.stage(plan) as stage:
            resumed = stage.resumed
            chunk_count = _write(stage, plan, encoder, resumed, max(1, batch_papers), tell, hooks, given)
    return _summary(plan, given, resumed, chunk_count, started)


def _write(stage: Staging, plan: Plan, encoder: Encoder, resumed: dict[str, StoredHashes], size: int, tell: Progress,
           hooks: IngestHooks, given: set[str]) -> int:
    """The plan written into the stage in batches; returns the chunks embedded."""
    by_id = {p.id: p for p in plan.papers}
    ledger = dict(resumed)
    tell(sum(1 for pid in resumed if pid in given))
    keep = [pid for pid in plan.keep if pid not in resumed]
    for begin in range(0, len(keep), size * 10):  # copying costs no embedding: larger steps
        kept = {pid: plan.keep[pid] for pid in keep[begin : begin + size * 10]}
        stage.checkpoint()
        stage.keep(kept, {pid: by_id[pid] for pid in kept if pid in by_id})
        hooks.kept(stage.source, stage.target, list(kept))
        ledger.update(kept)
        tell(sum(1 for pid in kept if pid in given))
    relabel = [p for p in plan.relabel if p.id not in resumed]
    if relabel:
        stage.checkpoint()
        stage.relabel(relabel, plan.existing)
        hooks.kept(stage.source, stage.target, [p.id for p in relabel])
        ledger.update({p.id: plan.existing[p.id]._replace(content_hash=p.content_hash) for p in relabel})
        tell(len(relabel))
    embed = [p for p in plan.embed if p.id not in resumed]
    chunk_count = 0
    for begin in range(0, len(embed), size):
        batch = embed[begin : begin + size]
        stage.checkpoint()
        chunks, vectors = encoder.encode(batch)
        hashes = [encoder.embed_hash(p) for p in batch]
        stage.target.put(batch, chunks, vectors, hashes, stage.held)
        hooks.embedded(stage.target, _per_paper(batch, chunks, vectors))  # the place for per-paper derived data
        ledger.update({p.id: StoredHashes(p.content_hash, h, len(c)) for p, h, c in zip(batch, hashes, chunks)})
        chunk_count += len(vectors)
        tell(sum(1 for p in batch if p.id in given))
    if plan.remove or plan.strays:
        stage.checkpoint()
        stage.remove(plan.remove, plan.strays | {cid for pid in plan.remove for cid in
                                                 expected_chunk_ids(pid, plan.existing[pid].n_chunks) | stage.held.get(pid, set())})
        hooks.removed(stage.target, plan.remove)
    stage.finish(ledger, plan.wanted)
    return chunk_count


def _per_paper(papers: Sequence[Paper], chunks: Sequence[list[Chunk]], vectors: np.ndarray) -> list[EmbeddedPaper]:
    out, offset = [], 0
    for paper, mine in zip(papers, chunks):
        out.append(EmbeddedPaper(paper, mine, vectors[offset : offset + len(mine)]))
        offset += len(mine)
    return out


def _summary(plan: Plan, given: set[str], resumed: dict[str, StoredHashes], chunks: int, started: float) -> IngestSummary:
    rewritten = {p.id for p in [*plan.embed, *plan.relabel] if p.id in given and p.id not in resumed}
    added = sum(1 for pid in rewritten if pid not in plan.existing)
    updated = len(rewritten) - added
    return IngestSummary(
        papers=len(plan.papers), added=added, updated=updated, unchanged=len(plan.papers) - added - updated,
        removed=len(plan.remove), chunks=chunks, seconds=round(time.perf_counter() - started, 2),
        repaired=len(plan.repaired - set(resumed)), resumed=sum(1 for pid in resumed if pid in given),
    )
