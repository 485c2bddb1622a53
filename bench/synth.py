"""A deterministic synthetic corpus: N papers as JSONL, built from the seed sentences.

    python bench/synth.py N OUT_DIR [--seed 7]

Each paper recombines 6-9 seed sentences with a unique method name and a unique number,
so papers differ and every question in questions.jsonl has one known answer. The generator is
tests/synth.py, shared with the tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.synth import generate, method_name  # noqa: E402  (the generator, shared with the tests)

__all__ = ["generate", "method_name"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("n", type=int)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    papers, questions = generate(args.n, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "papers.jsonl").open("w", encoding="utf-8") as handle:
        for paper in papers:
            handle.write(json.dumps(paper, ensure_ascii=False) + "\n")
    with (args.out / "questions.jsonl").open("w", encoding="utf-8") as handle:
        for question in questions:
            handle.write(json.dumps(question, ensure_ascii=False) + "\n")
    print(f"{len(papers)} papers, {len(questions)} questions in {args.out}")


if __name__ == "__main__":
    main()
