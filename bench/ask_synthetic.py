"""/api/ask at 20,000 synthetic papers: this checkout against an older one on the same data dir, in one run.

    python bench/ask_synthetic.py [--papers 20000] [--queries 200] [--old ../old] [--work DIR]

The data dir is built as bench/filters.py builds it (or reused from --work): synthetic papers
(bench/synth.py) with hash-seeded random unit vectors under MiniLM's id instead of 22 minutes of
MiniLM, for the chunks and for the ingest's sentence pass alike, so that the store, BM25, the
sentence file and the answer's composing cost what they cost with real vectors; the questions are
embedded by the real model. Then `qa-service serve` (gunicorn, 1 worker) from each checkout on that
data dir, and one client sends each generated question to each server in turn, so that every
variant meets the same machine load. Reported: p50/p95 per checkout and how many answers refused.
Loopback only; bounded; run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import ROOT, free_port, percentile, wait_until_up  # noqa: E402
from filters import build  # noqa: E402
from synth import generate  # noqa: E402


def serve(checkout: Path, data: Path) -> tuple[subprocess.Popen, str]:
    """`qa-service serve` of `checkout` (its own code first on the path), one worker, on 127.0.0.1."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(checkout), "QA_DATA_DIR": str(data), "QA_RATE_LIMIT": "", "QA_ANSWER_RATE_LIMIT": ""}
    process = subprocess.Popen([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port), "--threads", "4"],
                               env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, "/healthz", process, 120)
    return process, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--old", type=Path, default=None, help="an older checkout, measured beside this one")
    parser.add_argument("--work", type=Path, default=None, help="a folder to build the data dir in, or reuse it from")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="ask-synthetic-"))
    papers, questions = generate(args.papers)
    if not (work / "data").exists():
        _, seconds = build(work, {"iclr2026": papers})
        print(f"built {args.papers} papers in {seconds:.0f} s", flush=True)
    asked = [q["question"] for q in questions][: args.queries]
    checkouts = {"new": ROOT, **({"old": args.old} if args.old else {})}
    servers = {name: serve(path, work / "data") for name, path in checkouts.items()}
    times: dict[str, list[float]] = {name: [] for name in servers}
    refused = dict.fromkeys(servers, 0)
    session = requests.Session()
    try:
        for question in asked[:20]:  # warm: BM25, the model, the sentence file
            for _, url in servers.values():
                session.post(f"{url}/api/ask", json={"question": question}, timeout=60).raise_for_status()
        for question in asked:
            for name, (_, url) in servers.items():
                started = time.perf_counter()
                response = session.post(f"{url}/api/ask", json={"question": question}, timeout=60)
                times[name].append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                refused[name] += bool(response.json().get("insufficient_evidence"))
    finally:
        for process, _ in servers.values():
            process.terminate()
            process.wait(timeout=30)
    print(f"{args.papers} papers, {len(asked)} questions, 1 client, alternating")
    for name, got in times.items():
        print(f"{name}: /api/ask p50 {statistics.median(got):.1f} ms, p95 {percentile(got, 0.95):.1f} ms, refused {refused[name]}")


if __name__ == "__main__":
    main()
