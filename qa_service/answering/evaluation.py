"""Measured quality: retrieval, citations, facts and refusals on a question file."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..corpus.reading import iter_jsonl
from ..corpus.textclean import clean_text
from ..errors import CorpusError
from ..records import Answer, Reading, RefusalReason, SentenceKind
from ..retrieval.retriever import Retriever

KINDS = ("single", "multi", "unanswerable")


@dataclass
class Question:
    id: str
    question: str
    kind: str
    gold: list[str] = field(default_factory=list)
    answer_facts: list[str] = field(default_factory=list)
    named: bool = False  # the question calls a paper by its name (typos and other languages included)
    reason: str = ""  # why an unanswerable question is (off_topic, not_in_corpus, detail_missing), when the file says
    asks_figure: bool = False  # the question asks for a figure, when the file says (else: its facts carry one)


def read_questions(path: Path) -> list[Question]:
    """The JSONL question file; a bad line is reported with its number."""
    items: list[Question] = []
    for lineno, obj in iter_jsonl(path):
        if not isinstance(obj.get("question"), str) or not obj["question"].strip():
            raise CorpusError(f"{path}:{lineno}: needs a non-empty 'question'")
        if obj.get("kind") not in KINDS:
            raise CorpusError(f"{path}:{lineno}: 'kind' must be one of {', '.join(KINDS)}")
        gold, facts = obj.get("gold", []), obj.get("answer_facts", [])
        if not isinstance(gold, list) or not isinstance(facts, list):
            raise CorpusError(f"{path}:{lineno}: 'gold' and 'answer_facts' must be lists")
        if obj["kind"] != "unanswerable" and not gold:
            raise CorpusError(f"{path}:{lineno}: an answerable question needs 'gold' paper ids")
        items.append(Question(str(obj.get("id", lineno)), obj["question"], obj["kind"], gold, facts, bool(obj.get("named")),
                              str(obj.get("reason") or ""), bool(obj.get("asks_figure"))))
    return items


def rank_metrics(ranked: list[str], gold: list[str]) -> dict:
    """Recall@1/5/10 (share of gold papers found) and reciprocal rank of the first gold paper."""
    first = next((i + 1 for i, pid in enumerate(ranked) if pid in gold), None)
    recall = {f"recall@{n}": len(set(ranked[:n]) & set(gold)) / len(gold) for n in (1, 5, 10)}
    return {**recall, "rr": 1.0 / first if first else 0.0}


def evaluate_retrieval(retriever: Retriever, questions: list[Question], k: int = 10, modes=("dense", "bm25", "hybrid"),
                       read: Callable[[str], str | Reading] = str) -> dict:
    """Per mode and question kind: mean Recall@1/5/10 and MRR; `read`: the question as retrieval reads it (`Answerer.read`)."""
    records = []
    for q in questions:
        if q.kind == "unanswerable":
            continue
        for mode in modes:
            ranked = [h.paper_id for h in retriever.search(read(q.question), k, mode=mode, texts=False)]
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


def normalize(text: str) -> str:
    """Case, spacing, thousands separators, ×/x and % spelled out, so facts match as people read them."""
    text = text.lower().replace("×", "x").replace("‑", "-").replace("–", "-").replace("—", "-")
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\s*(%|percent\b)", "%", text)
    return re.sub(r"\s+", " ", text).strip()


def fact_found(fact: str, answer: str) -> bool:
    """A fact copied from the raw abstract ("just 7\\%", "$+39.3$ EM@1") is found as the service prints it: cleaned."""
    return normalize(clean_text(fact)) in normalize(answer)


# a figure: a number on its own (26.95%, +3.5%, 3.0×, 1,000, 2-5x, 10K), not a digit inside a name (Qwen2.5-7B, L0, Pass@1)
_FIGURE = re.compile(r"^[~±<>≈×x+−-]?\d[\d.,]*(?:[-–]\d[\d.,]*)?(?:%|×|x|[kKMB])?$")


_MARKERS = re.compile(r"\s*\[[\d,\s\-–]+\]")  # citation markers are not figures


def has_figure(text: str) -> bool:
    """Does the text state a figure? A fact copied from the raw abstract ("just 7\\%") is read cleaned, as it is printed."""
    text = clean_text(text)
    return any(_FIGURE.match(token.strip("()[]:;,.!?\"'")) for token in text.split())


def figures_present(question: Question, answer: Answer) -> float | None:
    """Rows that ask for a figure: the share of the facts' figures the answer gives (any figure, if the facts name none)."""
    figured = [f for f in question.answer_facts if has_figure(f)]
    if question.kind == "unanswerable" or not (figured or question.asks_figure):
        return None
    if not figured:
        return float(not answer.insufficient_evidence and has_figure(_MARKERS.sub("", answer.answer)))
    return sum(fact_found(f, answer.answer) for f in figured) / len(figured)


def absence_stated(answer: Answer) -> bool:
    """Refused as detail_missing, or the answer carries the service's own sentence that something is not reported."""
    if answer.refusal_reason is RefusalReason.DETAIL_MISSING:
        return True
    return not answer.insufficient_evidence and any(s.kind is SentenceKind.SERVICE for s in answer.sentences)


def answer_metrics(question: Question, answer: Answer) -> dict:
    """Citation recall/precision, sentence support, fact recall and refusal for one answer."""
    refused = answer.insufficient_evidence
    citations = answer.citations
    cited = {c.paper_id for c in citations}
    sentences = {c.sentence for c in citations}
    supported_sentences = {c.sentence for c in citations if c.supported}
    n_sentences = max(len(sentences), 1) + answer.uncited_sentences
    record = {
        "refused": refused,
        "refusal_reason": answer.refusal_reason.value if answer.refusal_reason else None,
        "cited": sorted(cited),
        "citation_precision": (sum(1 for c in citations if c.paper_id in question.gold or c.supported) / len(citations)) if citations else None,
        "sentence_support": len(supported_sentences) / n_sentences if citations else None,
    }
    if question.kind == "unanswerable":
        record["correct_refusal"] = refused and not citations
        if question.reason == "detail_missing":
            record["absence_stated"] = absence_stated(answer)
        if question.reason == "off_topic":
            record["off_topic_refused"] = refused and not citations
    else:
        record["citation_recall"] = len(cited & set(question.gold)) / len(question.gold)
        record["gold_precision"] = (sum(1 for c in citations if c.paper_id in question.gold) / len(citations)) if citations else None
        record["fact_recall"] = (sum(fact_found(f, answer.answer) for f in question.answer_facts) / len(question.answer_facts)) if question.answer_facts else None
        record["figures_present"] = figures_present(question, answer)
        record["paper_precision"] = len(cited & set(question.gold)) / len(cited) if cited else None
    return record


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 3) if values else None


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))], 1) if ordered else 0.0


def evaluate_answers(ask: Callable[[str], Answer], search: Callable[[str], list[str]], questions: list[Question]) -> dict:
    """Run every question through the real pipeline; summarise per kind and overall."""
    records = []
    for q in questions:
        started = time.perf_counter()
        result = ask(q.question)
        latency = (time.perf_counter() - started) * 1000
        record = {"id": q.id, "kind": q.kind, "question": q.question, "answer": result.answer, "latency_ms": round(latency, 1),
                  "named": q.named}
        if q.kind != "unanswerable":
            record.update(rank_metrics(search(q.question), q.gold))
        record.update(answer_metrics(q, result))
        records.append(record)
    summary = {kind: _summarise([r for r in records if r["kind"] == kind]) for kind in KINDS}
    summary["overall"] = _summarise(records)
    return {"summary": summary, "asked": summarise_asked(records), "records": records}


def _share(rows: list[dict], key: str) -> dict:
    values = [float(r[key]) for r in rows if r.get(key) is not None]
    return {"n": len(values), "value": round(sum(values) / len(values), 3) if values else None}


def summarise_asked(records: list[dict]) -> dict:
    """Did the answer answer what was asked: the figures, the absences, the off-topic refusals, the papers of a list."""
    single = [r for r in records if r["kind"] == "single"]
    multi = [r for r in records if r["kind"] == "multi"]
    answerable = [r for r in records if r["kind"] != "unanswerable"]
    return {
        "figures_present": _share(records, "figures_present"),
        "near_misses_stated": _share(records, "absence_stated"),
        "off_topic_refused": _share(records, "off_topic_refused"),
        "answerable_refused": _share(answerable, "refused"),
        "single_gold_cited": _share(single, "citation_recall"),
        "multi_gold_cited": _share(multi, "citation_recall"),
        "multi_precision": _share(multi, "paper_precision"),
    }


ASKED_COLUMNS = [
    ("asked figures present", "figures_present"), ("near misses stated", "near_misses_stated"),
    ("off-topic refused", "off_topic_refused"), ("answerable refused", "answerable_refused"),
    ("single gold cited", "single_gold_cited"), ("multi gold cited", "multi_gold_cited"), ("multi precision", "multi_precision"),
]


def format_asked_table(asked: dict) -> str:
    """One row: each measure as 'value (n rows)'."""
    cells = ["–" if asked[key]["value"] is None else f"{asked[key]['value']:.3f} ({asked[key]['n']})" for _, key in ASKED_COLUMNS]
    return "\n".join(["| " + " | ".join(name for name, _ in ASKED_COLUMNS) + " |", "|" + "---|" * len(ASKED_COLUMNS),
                      "| " + " | ".join(cells) + " |"])


def _summarise(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    answerable = [r for r in rows if r["kind"] != "unanswerable"]
    unanswerable = [r for r in rows if r["kind"] == "unanswerable"]
    answered = [r for r in rows if not r["refused"]]
    correct_answered = [r for r in answered if r["kind"] != "unanswerable" and (r.get("citation_recall") or 0) > 0]
    out: dict[str, float | None] = {"n": len(rows)}
    for metric in ("recall@1", "recall@5", "recall@10", "rr", "citation_recall", "citation_precision", "gold_precision", "sentence_support", "fact_recall"):
        out[metric] = _mean([r.get(metric) for r in rows])
    out["refused_unanswerable"] = _mean([r["correct_refusal"] for r in unanswerable]) if unanswerable else None
    out["refused_answerable"] = _mean([r["refused"] for r in answerable]) if answerable else None
    named = [r for r in answerable if r["named"]]
    out["named_cited"] = _mean([(r.get("citation_recall") or 0) > 0 for r in named]) if named else None
    out["accuracy"] = round((len(correct_answered) + sum(r["correct_refusal"] for r in unanswerable)) / len(rows), 3)
    out["precision"] = round(len(correct_answered) / len(answered), 3) if answered else None
    latencies = [r["latency_ms"] for r in rows]
    out["latency_p50_ms"], out["latency_p95_ms"] = _percentile(latencies, 0.5), _percentile(latencies, 0.95)
    return out


ANSWER_COLUMNS = [
    ("R@1", "recall@1"), ("R@5", "recall@5"), ("R@10", "recall@10"), ("MRR", "rr"), ("cit. recall", "citation_recall"),
    ("cit. precision", "citation_precision"), ("gold precision", "gold_precision"), ("sent. support", "sentence_support"), ("fact recall", "fact_recall"),
    ("refused (unansw.)", "refused_unanswerable"), ("refused (answ.)", "refused_answerable"), ("accuracy", "accuracy"),
    ("precision", "precision"), ("named cited", "named_cited"), ("p50 ms", "latency_p50_ms"), ("p95 ms", "latency_p95_ms"),
]


def format_answer_table(report: dict) -> str:
    head = "| kind | n | " + " | ".join(name for name, _ in ANSWER_COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(ANSWER_COLUMNS) + 2)]
    for kind, row in report["summary"].items():
        if row.get("n"):
            cells = ["–" if row.get(key) is None else (f"{row[key]:.3f}" if isinstance(row[key], float) and "ms" not in key else str(row[key])) for _, key in ANSWER_COLUMNS]
            lines.append(f"| {kind} | {row['n']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
