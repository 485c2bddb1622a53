"""Measured quality: retrieval Recall@k and MRR on a question file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .errors import CorpusError
from .retrieval import Retriever

KINDS = ("single", "multi", "unanswerable")


@dataclass
class Question:
    id: str
    question: str
    kind: str
    gold: list[str] = field(default_factory=list)
    answer_facts: list[str] = field(default_factory=list)


def read_questions(path: Path) -> list[Question]:
    """The JSONL question file; a bad line is reported with its number."""
    items: list[Question] = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("question"), str) or not obj["question"].strip():
            raise CorpusError(f"{path}:{lineno}: needs a non-empty 'question'")
        if obj.get("kind") not in KINDS:
            raise CorpusError(f"{path}:{lineno}: 'kind' must be one of {', '.join(KINDS)}")
        gold, facts = obj.get("gold", []), obj.get("answer_facts", [])
        if not isinstance(gold, list) or not isinstance(facts, list):
            raise CorpusError(f"{path}:{lineno}: 'gold' and 'answer_facts' must be lists")
        if obj["kind"] != "unanswerable" and not gold:
            raise CorpusError(f"{path}:{lineno}: an answerable question needs 'gold' paper ids")
        items.append(Question(str(obj.get("id", lineno)), obj["question"], obj["kind"], gold, facts))
    return items


def rank_metrics(ranked: list[str], gold: list[str]) -> dict:
    """Recall@1/5/10 (share of gold papers found) and reciprocal rank of the first gold paper."""
    first = next((i + 1 for i, pid in enumerate(ranked) if pid in gold), None)
    recall = {f"recall@{n}": len(set(ranked[:n]) & set(gold)) / len(gold) for n in (1, 5, 10)}
    return {**recall, "rr": 1.0 / first if first else 0.0}


def evaluate_retrieval(retriever: Retriever, questions: list[Question], k: int = 10, modes=("dense", "bm25", "hybrid")) -> dict:
    """Per mode and question kind: mean Recall@1/5/10 and MRR, without the relevance floor."""
    records = []
    for q in questions:
        if q.kind == "unanswerable":
            continue
        for mode in modes:
            ranked = [h.paper_id for h in retriever.search(q.question, k, mode=mode, floor=False)]
            records.append({"id": q.id, "kind": q.kind, "mode": mode, "ranked": ranked, **rank_metrics(ranked, q.gold)})
    summary: dict = {}
    for mode in modes:
        for kind in ("single", "multi"):
            rows = [r for r in records if r["mode"] == mode and r["kind"] == kind]
            if rows:
                summary[f"{mode}/{kind}"] = {
                    "n": len(rows),
                    **{m: round(sum(r[m] for r in rows) / len(rows), 3) for m in ("recall@1", "recall@5", "recall@10", "rr")},
                }
    return {"summary": summary, "records": records}


def format_retrieval_table(report: dict) -> str:
    lines = ["| mode / kind | n | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---|---|---|"]
    for name, row in report["summary"].items():
        lines.append(f"| {name} | {row['n']} | {row['recall@1']:.3f} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {row['rr']:.3f} |")
    return "\n".join(lines)
