"""Ingest and query benchmarks at 57, 2,000 and 20,000 papers, with baselines measured in the same run.

    python bench/scale.py [--sizes 57,2000,20000] [--out bench/results] [--queries 200]

Per size: ingest (papers/s, chunks/s, peak RSS, disk) beside the raw onnxruntime throughput of
the same model on the same chunks; re-ingest unchanged and with 1% of papers edited; start-up
until /healthz with the index on disk; /api/search and /api/ask over HTTP against the production
server (gunicorn), 1 client and 8 concurrent clients; and the baselines every query pays: the
query embedding alone, brute-force numpy cosine top-k over the same vectors, and a plain dense
Chroma query as Chroma's docs write it. Writes results.json, results.md and latency.png.
Loopback only; bounded; run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import json
import re
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import ROOT, percentile, start_server, tree_rss_mb  # noqa: E402
from synth import generate  # noqa: E402

from qa_service.config import load_settings  # noqa: E402
from qa_service.store.embeddings import MiniLMEmbedding  # noqa: E402
from qa_service.store.index import Index  # noqa: E402


def write_corpus(n: int, folder: Path) -> tuple[Path, list[dict]]:
    if n == 57:
        questions = [json.loads(line) for line in (ROOT / "tests/data/heldout_questions.jsonl").read_text().splitlines()]
        return ROOT / "seeds", questions
    papers, questions = generate(n)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "papers.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return path, questions


def cli(*args: str, env: dict) -> tuple[float, str, int]:
    """Run the CLI in a child process; (seconds, stdout, peak RSS of the child in MB)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "qa_service.cli", *args], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return time.perf_counter() - started, done.stdout.strip(), int(peak)


def raw_embedding_rate(texts: list[str]) -> dict:
    """onnxruntime alone on the same chunks, best of a few batch sizes (length-sorted)."""
    best = {}
    sample = texts[: min(len(texts), 1000)]
    for batch in (1, 4, 8, 32):
        model = MiniLMEmbedding(batch_size=batch)
        model(sample[:8])  # load
        started = time.perf_counter()
        model(sample)
        rate = len(sample) / (time.perf_counter() - started)
        if rate > best.get("chunks_per_s", 0):
            best = {"batch": batch, "chunks_per_s": round(rate, 1)}
    return best


def timed_requests(url: str, path: str, questions: list[str], clients: int, count: int) -> dict:
    session_pool = [requests.Session() for _ in range(clients)]

    def one(i: int) -> float:
        started = time.perf_counter()
        response = session_pool[i % clients].post(url + path, json={"question": questions[i % len(questions)]}, timeout=60)
        response.raise_for_status()
        return (time.perf_counter() - started) * 1000

    for i in range(min(20, count)):
        one(i)  # warm the caches a user would warm too
    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = list(pool.map(one, range(count)))
    seconds = time.perf_counter() - started
    return {"p50": round(percentile(latencies, 0.5), 1), "p95": round(percentile(latencies, 0.95), 1),
            "p99": round(percentile(latencies, 0.99), 1), "rps": round(count / seconds, 1)}


def baselines(index: Index, questions: list[str]) -> dict:
    """What every query pays at the least, measured on the same store."""
    embedder = MiniLMEmbedding(cache_size=0)
    embedder(["warm up"])
    got = index.chunks.get(include=["embeddings"])
    matrix = np.asarray(got["embeddings"], dtype=np.float32)
    embed_ms, numpy_ms, chroma_ms = [], [], []
    for question in questions:
        started = time.perf_counter()
        vector = embedder([question])[0]
        embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        scores = matrix @ vector
        np.argpartition(-scores, min(60, len(scores) - 1))[:60]
        numpy_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        index.chunks.query(query_embeddings=[vector], n_results=min(60, len(scores)))
        chroma_ms.append((time.perf_counter() - started) * 1000)
    med = lambda xs: round(percentile(xs, 0.5), 2)  # noqa: E731
    return {"query_embedding_ms": med(embed_ms), "numpy_topk_ms": med(numpy_ms), "chroma_dense_query_ms": med(chroma_ms),
            "embedding_plus_chroma_ms": round(med(embed_ms) + med(chroma_ms), 2)}


def bench_size(n: int, work: Path, query_count: int, previous: dict | None = None) -> dict:
    """All figures for one size; with `previous`, reuse its index and ingest figures, re-measure queries."""
    data = work / f"data-{n}"
    corpus, questions = write_corpus(n, work / f"corpus-{n}")
    if previous:
        return {**previous, **query_figures(data, questions, query_count)}
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "QA_DATA_DIR": str(data), "QA_RATE_LIMIT": "", "QA_ANSWER_RATE_LIMIT": ""}
    result: dict = {"papers": n}
    seconds, out, peak = cli("ingest", str(corpus), env=env)
    chunks = int(re.search(r"(\d+) chunks embedded", out).group(1))
    result["ingest"] = {"seconds": round(seconds, 1), "papers_per_s": round(n / seconds, 1), "chunks": chunks,
                        "chunks_per_s": round(chunks / seconds, 1), "peak_rss_mb": peak,
                        "disk_mb": round(sum(f.stat().st_size for f in data.rglob("*") if f.is_file()) / 1e6, 1)}
    seconds, out, _ = cli("ingest", str(corpus), env=env)
    result["reingest_unchanged_s"] = round(seconds, 2)
    if corpus.suffix == ".jsonl":
        lines = corpus.read_text().splitlines()
        step = 100
        for i in range(0, len(lines), step):  # edit 1% of the papers
            record = json.loads(lines[i])
            record["abstract"] += " An edited sentence that changes this abstract."
            lines[i] = json.dumps(record)
        edited = work / f"corpus-{n}" / "edited.jsonl"
        edited.write_text("\n".join(lines) + "\n")
        seconds, out, _ = cli("ingest", str(edited), env=env)
        result["reingest_1pct_edited"] = {"seconds": round(seconds, 1), "summary": out}
    result.update(query_figures(data, questions, query_count))
    return result


def query_figures(data: Path, questions: list[dict], query_count: int) -> dict:
    """Start-up, HTTP latencies, raw embedding rate and baselines on an existing index."""
    result: dict = {}
    question_texts = [q["question"] for q in questions]
    process, url, startup = start_server(str(data), threads=8)
    try:
        result["startup_s"] = round(startup, 2)
        result["search_1"] = timed_requests(url, "/api/search", question_texts, 1, query_count)
        result["search_8"] = timed_requests(url, "/api/search", question_texts, 8, query_count)
        result["ask_1"] = timed_requests(url, "/api/ask", question_texts, 1, query_count)
        result["ask_8"] = timed_requests(url, "/api/ask", question_texts, 8, query_count)
        result["serving_rss_mb"] = round(tree_rss_mb(process.pid), 1)
    finally:
        process.terminate()
        process.wait(timeout=30)
    # This process opens the store only now, after every writer has exited: Chroma's local
    # client caches state per process and is not safe beside writers in other processes.
    index = Index(load_settings(data_dir=str(data)))
    texts = index.chunks.get(include=["documents"])["documents"]
    result["raw_embedding"] = raw_embedding_rate(texts)
    result["baselines"] = baselines(index, question_texts[:100])
    result["search_p50_ratio_to_embedding_plus_chroma"] = round(result["search_1"]["p50"] / result["baselines"]["embedding_plus_chroma_ms"], 2)
    return result


def markdown(results: list[dict]) -> str:
    rows = ["| papers | chunks | ingest chunks/s (raw) | re-ingest unchanged | start-up | search p50/p95 (1 client) | search p50 (8) rps | ask p50/p95 (1) | ask p50 (8) rps | search p50 / (embed + Chroma) | RSS |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        rows.append(
            f"| {r['papers']:,} | {r['ingest']['chunks']:,} | {r['ingest']['chunks_per_s']} ({r['raw_embedding']['chunks_per_s']}) | "
            f"{r['reingest_unchanged_s']} s | {r['startup_s']} s | {r['search_1']['p50']}/{r['search_1']['p95']} ms | "
            f"{r['search_8']['p50']} ms, {r['search_8']['rps']}/s | {r['ask_1']['p50']}/{r['ask_1']['p95']} ms | "
            f"{r['ask_8']['p50']} ms, {r['ask_8']['rps']}/s | {r['search_p50_ratio_to_embedding_plus_chroma']}x | {r['serving_rss_mb']} MB |")
    return "\n".join(rows)


def plot(results: list[dict], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    sizes = [r["papers"] for r in results]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (("search_1", "/api/search p50"), ("ask_1", "/api/ask p50")):
        ax.plot(sizes, [r[key]["p50"] for r in results], marker="o", label=label)
        ax.plot(sizes, [r[key]["p95"] for r in results], marker="x", linestyle="--", label=label.replace("p50", "p95"))
    ax.plot(sizes, [r["baselines"]["embedding_plus_chroma_ms"] for r in results], marker="s", label="query embedding + plain Chroma query")
    ax.set_xscale("log")
    ax.set_xlabel("papers")
    ax.set_ylabel("ms (one client, HTTP)")
    ax.set_title("Latency against corpus size (2 cores)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="57,2000,20000")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--queries-only", action="store_true", help="Reuse --work's indexes and the ingest figures in --out; re-measure queries.")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="qa-bench-"))
    args.out.mkdir(parents=True, exist_ok=True)
    previous = {r["papers"]: r for r in json.loads((args.out / "results.json").read_text())} if args.queries_only else {}
    results = []
    for n in (int(x) for x in args.sizes.split(",")):
        print(f"--- {n} papers", flush=True)
        results.append(bench_size(n, work, args.queries, previous.get(n)))
        results[-1]["ingest"]["ratio_to_raw"] = round(results[-1]["ingest"]["chunks_per_s"] / results[-1]["raw_embedding"]["chunks_per_s"], 2)
        print(json.dumps(results[-1], indent=2), flush=True)
        (args.out / "results.json").write_text(json.dumps(results, indent=2))
    (args.out / "results.md").write_text(markdown(results) + "\n")
    plot(results, args.out / "latency.png")
    print(markdown(results))


if __name__ == "__main__":
    main()
