"""Bounded soak against the production server on loopback: N requests to /api/ask and /api/search.

    python bench/soak.py [--requests 10000] [--concurrency 16] [--data-dir DIR]

Reports 5xx count, connection errors, p50/p95/p99, and the server's RSS after the first
1,000 requests and at the end. Stops by itself; sends traffic to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, percentile, start_server, tree_rss_mb  # noqa: E402


def ensure_index(data_dir: str) -> None:
    import subprocess

    subprocess.run([sys.executable, "-m", "qa_service.cli", "ingest", str(ROOT / "seeds")], check=True, cwd=ROOT,
                   env={**__import__("os").environ, "QA_DATA_DIR": data_dir}, capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="qa-soak-")
    ensure_index(data_dir)
    questions = [json.loads(line)["question"] for line in (ROOT / "tests/data/heldout_questions.jsonl").read_text().splitlines()]
    process, url, _ = start_server(data_dir)
    counter = itertools.count()
    lock = threading.Lock()
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    errors = {"connection": 0}
    rss_after_first = [0.0]
    local = threading.local()

    def one(i: int) -> None:
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        path = "/api/ask" if i % 2 == 0 else "/api/search"
        started = time.perf_counter()
        try:
            response = session.post(url + path, json={"question": questions[i % len(questions)]}, timeout=30)
            status = response.status_code
        except requests.RequestException:
            with lock:
                errors["connection"] += 1
            return
        elapsed = (time.perf_counter() - started) * 1000
        with lock:
            latencies.append(elapsed)
            statuses[status] = statuses.get(status, 0) + 1
            if next(counter) == 999:
                rss_after_first[0] = tree_rss_mb(process.pid)

    try:
        started = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(one, range(args.requests)))
        seconds = time.perf_counter() - started
        rss_end = tree_rss_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=30)
    report = {
        "requests": args.requests, "concurrency": args.concurrency, "seconds": round(seconds, 1),
        "requests_per_s": round(args.requests / seconds, 1), "statuses": statuses,
        "server_errors_5xx": sum(n for s, n in statuses.items() if s >= 500), "connection_errors": errors["connection"],
        "p50_ms": round(percentile(latencies, 0.5), 1), "p95_ms": round(percentile(latencies, 0.95), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "rss_after_1000_mb": round(rss_after_first[0], 1), "rss_end_mb": round(rss_end, 1),
        "rss_growth": round(rss_end / rss_after_first[0] - 1, 3) if rss_after_first[0] else None,
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    ok = report["server_errors_5xx"] == 0 and report["connection_errors"] == 0 and (report["rss_growth"] or 0) <= 0.10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
