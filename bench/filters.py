"""Metadata filters and several corpora at scale: filtered against unfiltered /api/search at 20,000 papers,
and start-up with five corpora against one.

    python bench/filters.py [--papers 20000] [--queries 200] [--startup-papers 2000] [--out bench/results]

Search: one data dir of N synthetic papers (bench/synth.py) given years, venues, authors and keywords;
the production server (gunicorn, 1 worker); one client sends each question unfiltered and then under
each filter, in turn, so that every variant meets the same machine load ("in one run"). Beside it, in
this process, the plain Chroma query with and without the same `where`, to show where the time goes.
Start-up: seconds from `qa-service serve` to the first /healthz (a worker readies the default corpus
before it serves, the others in a thread of its own), and to the answer of a first search over every
corpus sent right then, with one corpus and with five of the same size, three starts each.

The papers are written with hash-seeded random unit vectors under MiniLM's model id instead of
embedding 70,000 chunks with MiniLM (22 minutes here): search cost (HNSW, where, BM25) does not depend
on what the vectors mean, and queries are embedded by the real model as always. Loopback only; bounded;
run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import percentile, start_server  # noqa: E402
from synth import generate  # noqa: E402

from qa_service.config import load_settings  # noqa: E402
from qa_service.store.corpora import Corpora  # noqa: E402
from qa_service.corpus.reading import load_corpus  # noqa: E402
from qa_service.store.embeddings import MiniLMEmbedding  # noqa: E402
from qa_service.store.filters import MetadataFilter  # noqa: E402

VENUES = ["ICLR 2026", "NeurIPS 2025", "ICML 2025", "ACL 2024"]
KEYWORDS = [f"topic-{i}" for i in range(50)]
FILTERS = {  # name -> the body's filters; the share of papers each allows is reported beside it
    "year 2026": {"year": 2026},
    "venue ICLR 2026 and year 2026": {"venue": "ICLR 2026", "year": 2026},
    "one keyword": {"keyword": "topic-7"},
    "one author": {"author": "Author 0042"},
}


class HashedVectors(MiniLMEmbedding):
    """Unit vectors seeded by each text's hash, under MiniLM's id: the store's cost without 22 minutes of embedding."""

    def _load(self) -> None:
        return None

    def _encode(self, texts):
        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            vector = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
            out.append(vector / np.linalg.norm(vector))
        return np.asarray(out)


def with_metadata(papers: list[dict], prefix: str = "") -> list[dict]:
    for i, paper in enumerate(papers):
        rng = random.Random(i)
        paper.update(id=prefix + paper["id"], year=2024 + i % 3, venue=VENUES[i % 4],
                     authors=[f"Author {rng.randrange(2000):04d}", f"Author {rng.randrange(2000):04d}"],
                     keywords=rng.sample(KEYWORDS, 2))
    return papers


def build(folder: Path, corpora: dict[str, list[dict]]) -> tuple[Path, float]:
    """Write each corpus into one data dir; returns the data dir and the seconds it took."""
    data = folder / "data"
    folder.mkdir(parents=True, exist_ok=True)
    settings = load_settings(env={}, data_dir=str(data), rate_limit="", answer_rate_limit="")
    registry = Corpora(settings)
    started = time.perf_counter()
    for name, papers in corpora.items():
        source = folder / f"{name}.jsonl"
        source.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
        index = registry.open(name)
        index.embedder = HashedVectors()  # only this process writes with it; the server embeds queries with MiniLM
        index.ingest(load_corpus([source]))
    return data, time.perf_counter() - started


def search_run(data: Path, questions: list[str], extra_env: dict | None = None) -> dict:
    process, url, _ = start_server(str(data), extra_env, threads=4)
    session = requests.Session()
    variants = {"unfiltered": None, **FILTERS}
    timings: dict[str, list[float]] = {name: [] for name in variants}
    counts: dict[str, int] = {}
    try:
        for question in questions[:20]:  # warm: the query vectors, BM25 and each filter's allowed set
            for body in variants.values():
                session.post(f"{url}/api/search", json={"question": question, "k": 10, **({"filters": body} if body else {})})
        for question in questions:
            for name, body in variants.items():
                payload = {"question": question, "k": 10, **({"filters": body} if body else {})}
                started = time.perf_counter()
                response = session.post(f"{url}/api/search", json=payload, timeout=60)
                timings[name].append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                counts[name] = len(response.json()["results"])
        allowed = {name: session.get(f"{url}/api/papers", params=body).json()["total"] for name, body in FILTERS.items()}
    finally:
        process.terminate()
        process.wait(timeout=30)
    base = statistics.median(timings["unfiltered"])
    return {name: {"p50_ms": round(statistics.median(t), 1), "p95_ms": round(percentile(t, 0.95), 1),
                   "vs_unfiltered": round(statistics.median(t) / base, 2), "results": counts[name],
                   "papers_allowed": allowed.get(name)} for name, t in timings.items()}


def chroma_baseline(data: Path, questions: list[str]) -> dict:
    """The plain Chroma chunk query, 60 results, with and without each filter's `where`: the store's own cost."""
    settings = load_settings(env={}, data_dir=str(data))
    index = Corpora(settings).default
    vectors = index.embedder.embed_query(questions[:100])
    out = {}
    for name, body in {"unfiltered": None, **FILTERS}.items():
        where = MetadataFilter(**{k: (v,) for k, v in body.items()}).where() if body else None
        times = []
        for vector in vectors:
            started = time.perf_counter()
            index.chunks.query(query_embeddings=[vector], n_results=60, include=["documents", "metadatas", "distances"],
                               **({"where": where} if where else {}))
            times.append((time.perf_counter() - started) * 1000)
        out[name] = round(statistics.median(times), 1)
    return out


def startup_run(folder: Path, papers: int) -> dict:
    """Seconds to the first /healthz with one corpus and with five (each `papers` strong), three starts each."""
    base, _ = generate(papers)
    one = {"iclr2026": with_metadata([dict(p) for p in base], "a-")}
    five = {"iclr2026": one["iclr2026"], **{f"c{i}": with_metadata([dict(p) for p in base], f"c{i}-") for i in range(1, 5)}}
    out = {}
    for label, corpora in (("1 corpus", one), ("5 corpora", five)):
        data, _ = build(folder / label.replace(" ", "-"), corpora)
        times, first = [], []
        for _ in range(3):
            process, url, seconds = start_server(str(data), threads=4)
            times.append(seconds)
            asked = time.perf_counter()  # the first search over every corpus, right after /healthz answered
            requests.post(url + "/api/search", json={"question": "Which papers study retrieval?", "k": 10}, timeout=120).raise_for_status()
            first.append(seconds + time.perf_counter() - asked)
            process.terminate()
            process.wait(timeout=30)
        out[label] = round(statistics.median(times), 2)
        out[f"{label}, to a first search over every corpus"] = round(statistics.median(first), 2)
    out["added by 4 more corpora"] = round(out["5 corpora"] - out["1 corpus"], 2)
    out["added by 4 more corpora, to a first search"] = round(
        out["5 corpora, to a first search over every corpus"] - out["1 corpus, to a first search over every corpus"], 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--startup-papers", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="qa-filters-") as tmp:
        folder = Path(tmp)
        papers, questions = generate(args.papers)
        data, seconds = build(folder / "search", {"iclr2026": with_metadata(papers)})
        print(f"wrote {args.papers} papers in {seconds:.0f} s", file=sys.stderr)
        asked = [q["question"] for q in questions][: args.queries]
        asked += [f"Which papers improve on prior work for {k}?" for k in KEYWORDS][: max(0, args.queries - len(asked))]
        report = {"papers": args.papers, "queries": len(asked), "search": search_run(data, asked),
                  "chroma_query_ms": chroma_baseline(data, asked), "startup_s": startup_run(folder, args.startup_papers),
                  "startup_papers_per_corpus": args.startup_papers}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "filters.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
