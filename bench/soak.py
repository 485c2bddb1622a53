"""Bounded soak against the production server on loopback: N requests to /api/ask and /api/search.

    python bench/soak.py [--requests 10000] [--concurrency 16] [--data-dir DIR] [--two-writers]

Reports 5xx count, connection errors, p50/p95/p99, and the server's RSS after the first
1,000 requests and at the end. Stops by itself; sends traffic to 127.0.0.1 only.

--two-writers: meanwhile, again and again, two `qa-service ingest --sync` start at once on
the server's data dir (the whole seeds folder and one seed file, alternating), and
`qa-service check` runs at the end. 503 (an ingest is writing) is counted apart from other
5xx; the run passes with no other 5xx, every writer exiting 0 and the check clean.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
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
    subprocess.run([sys.executable, "-m", "qa_service.cli", "ingest", str(ROOT / "seeds")], check=True, cwd=ROOT,
                   env={**os.environ, "QA_DATA_DIR": data_dir}, capture_output=True)


def cli(data_dir: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "qa_service.cli", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "QA_DATA_DIR": data_dir})


def two_writers(data_dir: str, stop: threading.Event, report: dict) -> None:
    """Rounds of two concurrent ingests until `stop`: each round one corpus, then the other, at once."""
    corpora = [str(ROOT / "seeds"), str(ROOT / "seeds" / "004_b7de3c5bc70ac347.txt")]
    while not stop.is_set():
        order = corpora if report["rounds"] % 2 == 0 else corpora[::-1]
        writers = [subprocess.Popen([sys.executable, "-m", "qa_service.cli", "ingest", "--sync", path], cwd=ROOT,
                                    env={**os.environ, "QA_DATA_DIR": data_dir}, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for path in order]
        for writer in writers:
            code = writer.wait()
            report["exit_codes"][code] = report["exit_codes"].get(code, 0) + 1
        report["rounds"] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--two-writers", action="store_true", help="Meanwhile run two concurrent ingests, round after round.")
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
        if status == 503 and args.two_writers:  # a client that backs off while an ingest writes (Retry-After: 1)
            time.sleep(0.25)
        with lock:
            latencies.append(elapsed)
            statuses[status] = statuses.get(status, 0) + 1
            if next(counter) == 999:
                rss_after_first[0] = tree_rss_mb(process.pid)

    stop = threading.Event()
    writing = {"rounds": 0, "exit_codes": {}}
    writers = threading.Thread(target=two_writers, args=(data_dir, stop, writing)) if args.two_writers else None
    try:
        started = time.perf_counter()
        if writers:
            writers.start()
        with ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(one, range(args.requests)))
        seconds = time.perf_counter() - started
        stop.set()
        if writers:
            writers.join()
        rss_end = tree_rss_mb(process.pid)
    finally:
        stop.set()
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
    ok = report["server_errors_5xx"] == 0 and report["connection_errors"] == 0 and (report["rss_growth"] or 0) <= 0.10
    if args.two_writers:
        check = cli(data_dir, "check")
        busy = statuses.get(503, 0)
        report.update(writer_rounds=writing["rounds"], writer_exit_codes=writing["exit_codes"], busy_503=busy,
                      server_errors_5xx=report["server_errors_5xx"] - busy, check_exit_code=check.returncode,
                      check_output=check.stdout.strip().splitlines()[:12])
        ok = (report["server_errors_5xx"] == 0 and report["connection_errors"] == 0 and check.returncode == 0
              and set(writing["exit_codes"]) <= {0} and (report["rss_growth"] or 0) <= 0.10)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
