"""A deterministic synthetic corpus: N papers as JSONL, built from the seed sentences.

    python bench/synth.py N OUT_DIR [--seed 7]

Each paper recombines 6-9 seed sentences with a unique method name and a unique number,
so papers differ and every question in questions.jsonl has one known answer.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qa_service.corpus.reading import load_corpus  # noqa: E402
from qa_service.corpus.textclean import sentence_spans  # noqa: E402

SYLLABLES = ["ka", "lo", "mi", "ra", "ze", "tu", "vo", "ni", "qua", "bex", "dor", "fyn", "gal", "hix", "jor", "wen"]
BENCHES = ["GSM8K", "MATH500", "HumanEval", "MMLU-Pro", "ARC", "WebArena", "KernelBench", "ImageNet"]


def method_name(i: int) -> str:
    """A pronounceable, unique CamelCase name per index (base-16 syllables)."""
    parts, n = [], i + 4096
    while n:
        parts.append(SYLLABLES[n % 16])
        n //= 16
    return "".join(p.capitalize() for p in parts) + "Net"


def seed_sentences() -> list[str]:
    sentences = []
    for paper in load_corpus([ROOT / "seeds"]):
        sentences += [paper.text[s:e] for s, e in sentence_spans(paper.text) if 40 < e - s < 400]
    return sentences


def generate(n: int, seed: int = 7) -> tuple[list[dict], list[dict]]:
    pool = seed_sentences()
    papers, questions = [], []
    for i in range(n):
        rng = random.Random(seed * 1_000_003 + i)
        name, bench = method_name(i), rng.choice(BENCHES)
        score = round(rng.uniform(10, 95), 1)
        body = rng.sample(pool, rng.randint(6, 9))
        body.insert(rng.randint(1, 3), f"We propose {name}, a method that improves on prior work in this setting.")
        body.append(f"{name} reaches {score}% accuracy on {bench}.")
        pid = f"synth-{i:05d}"
        papers.append({"id": pid, "title": f"{name}: {body[0][:60].rstrip()}", "abstract": " ".join(body), "year": 2026, "venue": "ICLR 2026 (synthetic)"})
        if i % max(1, n // 200) == 0:
            questions.append({"id": f"q{i:05d}", "question": f"What accuracy does {name} reach on {bench}?", "kind": "single",
                              "gold": [pid], "answer_facts": [f"{score}%"]})
    return papers, questions


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
