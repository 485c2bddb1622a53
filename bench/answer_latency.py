"""In-process answer latency over the held-out and both fresh files, warm (each asked once before timing).

    python bench/answer_latency.py DATA_DIR

To compare with an older checkout side by side in one run, run the same file with that
checkout first on the path: `PYTHONPATH=../old python bench/answer_latency.py DATA_DIR_OLD`
(versions before the typed core had no `service` module; the script falls back to theirs).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("heldout_questions.jsonl", "fresh_questions.jsonl", "fresh2_questions.jsonl")


def answerer(data_dir: str):
    from qa_service.config import load_settings

    settings = load_settings(env={"QA_DATA_DIR": data_dir})
    try:
        from qa_service.service import Services
    except ImportError:  # a checkout from before the composition root
        from qa_service.answering.pipeline import Answerer
        from qa_service.store.index import Index

        index = Index(settings)
        index.load_lexical()
        return Answerer(index, settings).ask
    return Services(settings).answerer.ask


def main(data_dir: str) -> None:
    questions = [json.loads(line)["question"] for name in FILES for line in (ROOT / "tests" / "data" / name).read_text().splitlines()]
    ask = answerer(data_dir)
    for question in questions:
        ask(question)  # warm: BM25, the embedding model, the sentence cache
    times = []
    for question in questions:
        started = time.perf_counter()
        ask(question)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(f"{len(times)} questions: p50 {times[len(times) // 2]:.1f} ms, p95 {times[int(len(times) * 0.95)]:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1])
