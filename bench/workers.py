"""Throughput of 1 vs 4 gunicorn workers on the same Chroma server (loopback, bounded).

    python bench/workers.py [--requests 1500] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, free_port, percentile, wait_until_up  # noqa: E402


def load(url: str, questions: list[str], count: int, concurrency: int) -> dict:
    sessions = [requests.Session() for _ in range(concurrency)]

    def one(i: int) -> float:
        started = time.perf_counter()
        sessions[i % concurrency].post(url + "/api/ask", json={"question": questions[i % len(questions)]}, timeout=60).raise_for_status()
        return (time.perf_counter() - started) * 1000

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(50)))  # warm every worker
        started = time.perf_counter()
        latencies = list(pool.map(one, range(count)))
    seconds = time.perf_counter() - started
    return {"rps": round(count / seconds, 1), "p50_ms": round(percentile(latencies, 0.5), 1), "p95_ms": round(percentile(latencies, 0.95), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="qa-workers-"))
    chroma_port = free_port()
    chroma = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path", str(work / "chroma"), "--host", "127.0.0.1",
                               "--port", str(chroma_port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chroma_url = f"http://127.0.0.1:{chroma_port}"
    env = {**os.environ, "QA_DATA_DIR": str(work / "data"), "QA_CHROMA_URL": chroma_url, "QA_RATE_LIMIT": "", "QA_ANSWER_RATE_LIMIT": ""}
    results = {}
    try:
        wait_until_up(chroma_url, "/api/v2/heartbeat", chroma)
        subprocess.run([sys.executable, "-m", "qa_service.cli", "ingest", str(ROOT / "seeds")], env=env, cwd=ROOT, check=True, capture_output=True)
        questions = [json.loads(line)["question"] for line in (ROOT / "tests/data/heldout_questions.jsonl").read_text().splitlines()]
        print(f"logs in {work}", flush=True)
        for workers in (1, 4):
            port = free_port()
            server = subprocess.Popen([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port), "--workers", str(workers), "--threads", "4"],
                                      env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=open(work / f"serve-{workers}.log", "w"))
            try:
                wait_until_up(f"http://127.0.0.1:{port}", "/readyz", server)
                results[f"{workers}_workers"] = load(f"http://127.0.0.1:{port}", questions, args.requests, args.concurrency)
            finally:
                server.terminate()
                server.wait(timeout=30)
    finally:
        chroma.terminate()
        chroma.wait(timeout=30)
    results["speedup"] = round(results["4_workers"]["rps"] / results["1_workers"]["rps"], 2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
