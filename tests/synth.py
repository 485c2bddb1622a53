"""A deterministic synthetic corpus built from the seed sentences, with questions whose answers are known.

Each paper recombines 6-9 seed sentences with a unique method name and a unique number, so papers
differ and every question has one known answer. Shared by the tests (tests/test_bench.py) and the
benchmarks (bench/synth.py writes it to files; bench/scale.py and others generate it in memory).
"""

from __future__ import annotations

import random
from pathlib import Path

from qa_service.corpus.reading import load_corpus
from qa_service.corpus.textclean import sentence_spans

ROOT = Path(__file__).resolve().parents[1]

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
