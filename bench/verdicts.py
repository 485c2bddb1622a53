"""How far a reader can trust the per-sentence check marks, on the blind labelled model answers.

    python bench/verdicts.py [--split tune|heldout|all] [--data /tmp/verdicts-data] [--show] [--latency]
    python bench/verdicts.py --answers tests/data/model_answers2.jsonl   # the second blind set, all held out

Builds the Sources each answer cites from the seed index (ingested into --data once), runs the
citation check on the answer, aligns the checker's units to the labelled units by word overlap,
and reports: supported precision (a check mark is right), supported recall, contradicted
precision, accuracy, answers with a wrong sentence that still came back grounded, and answers
whose text did not come back byte for byte. Tune on `tune`; report `heldout` and the second blind
set (`model_answers2.jsonl`, written before the checker's second round, every answer held out).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ANSWERS = ROOT / "tests" / "data" / "model_answers.jsonl"
SPLIT = ROOT / "tests" / "data" / "model_answers_split.json"
_WORD = re.compile(r"\w+")
_MARKER = re.compile(r"\[\d+(?:\s*[-–,]\s*\d+)*\]")
NOT_FLAGGED = {"supported", "not_checked"}  # verdicts that do not warn the reader


@dataclass
class Row:
    answer: str
    category: str
    label: str  # supported | wrong | not_claim
    verdict: str  # the verdict of the checker's unit that overlaps it most ("missing": none does)
    text: str
    reason: str


def words(text: str) -> list[str]:
    return _WORD.findall(_MARKER.sub(" ", text).lower())


def align(labelled: str, units: list) -> Any:
    """The checker's unit holding most of the labelled unit's words (None when under half of them)."""
    wanted = Counter(words(labelled))
    best, best_share = None, 0.0
    for unit in units:
        have = Counter(words(unit.text))
        share = sum((wanted & have).values()) / max(1, sum(wanted.values()))
        share -= 0.001 * abs(sum(have.values()) - sum(wanted.values()))  # of two that hold it, the closer in size
        if share > best_share:
            best, best_share = unit, share
    return best if best_share >= 0.5 else None


def checker_and_sources(data_dir: Path, overrides: dict | None = None):
    """A checker as the service builds it, and a function from paper ids to numbered Sources."""
    from qa_service.config import load_settings
    from qa_service.corpus.reading import load_corpus
    from qa_service.records import Source
    from qa_service.store.corpora import Corpora
    from qa_service.store.index import Index
    from qa_service.answering.citations import CitationChecker

    settings = load_settings(ROOT / "config" / "default.toml", env={}, data_dir=str(data_dir), seeds_dir=str(ROOT / "seeds"),
                             **(overrides or {}))
    papers = {p.id: p for p in load_corpus([ROOT / "seeds"])}
    index = Index(settings)
    if not (data_dir / "manifest.json").exists() and index.paper_count() == 0:
        index.ingest(list(papers.values()))
    index.load_lexical()
    corpora = Corpora(settings, index)
    try:
        from qa_service.answering.pipeline import IndexCorpus

        corpus = IndexCorpus(corpora, settings.sentence_cache_size, settings.abbreviation_share)  # sentence vectors cached, as the service does
        checker = CitationChecker.from_settings(corpora.idf, corpus.embed, settings)
    except AttributeError:  # the checker before the aligning check
        checker = CitationChecker(corpora.idf, index.local_embed(), settings.support_threshold)

    def sources(ids: list[str]) -> list:
        return [Source(i + 1, pid, papers[pid].label, papers[pid].text) for i, pid in enumerate(ids)]

    return checker, sources


def run(split: str, data_dir: Path, overrides: dict | None = None, path: Path | None = None) -> tuple[list[Row], dict]:
    """Check the answers of `split` (of the first set), or every answer of the file at `path`."""
    if path is not None:
        answers = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    else:
        chosen = json.loads(SPLIT.read_text())
        wanted = set(chosen["tune"]) | set(chosen["heldout"]) if split == "all" else set(chosen[split])
        answers = [a for a in map(json.loads, ANSWERS.read_text().splitlines()) if a["id"] in wanted]
    checker, sources = checker_and_sources(data_dir, overrides)
    rows: list[Row] = []
    totals: Counter[str] = Counter()
    started = time.perf_counter()
    for item in answers:
        checked = checker.check(item["answer"], sources(item["sources"]))
        totals["answers"] += 1
        totals["text_changed"] += checked.answer != item["answer"]
        totals["offsets_wrong"] += any(checked.answer[u.start:u.end] != u.text for u in checked.sentences)
        has_wrong = any(s["label"] == "wrong" for s in item["sentences"])
        totals["wrong_answers"] += has_wrong
        totals["wrong_but_grounded"] += has_wrong and checked.grounded
        totals["clean_answers"] += not has_wrong
        totals["clean_grounded"] += not has_wrong and checked.grounded
        for labelled in item["sentences"]:
            unit = align(labelled["text"], checked.sentences)
            verdict = unit.verdict.value if unit is not None else "missing"
            rows.append(Row(item["id"], labelled["category"], labelled["label"], verdict, labelled["text"],
                            unit.reason if unit is not None else ""))
    figures: dict = dict(totals)
    figures["ms_per_answer"] = round((time.perf_counter() - started) * 1000 / max(1, len(answers)), 1)
    return rows, figures


def ratio(hits: int, of: int) -> str:
    return f"{hits / of:.3f} ({hits}/{of})" if of else "n/a (0/0)"


def report(rows: list[Row], totals: dict) -> dict:
    claims = [r for r in rows if r.label != "not_claim"]
    ticked = [r for r in rows if r.verdict == "supported"]
    crossed = [r for r in rows if r.verdict == "contradicted"]
    right = [r for r in rows if (r.label == "supported" and r.verdict == "supported")
             or (r.label == "wrong" and r.verdict not in NOT_FLAGGED)
             or (r.label == "not_claim" and r.verdict == "not_checked")]
    figures = {
        "supported_precision": ratio(sum(r.label == "supported" for r in ticked), len(ticked)),
        "supported_recall": ratio(sum(r.verdict == "supported" for r in rows if r.label == "supported"),
                                  sum(r.label == "supported" for r in rows)),
        "contradicted_precision": ratio(sum(r.label == "wrong" for r in crossed), len(crossed)),
        "contradicted_recall": ratio(sum(r.verdict == "contradicted" for r in rows if r.label == "wrong"),
                                     sum(r.label == "wrong" for r in rows)),
        "wrong_flagged": ratio(sum(r.verdict not in NOT_FLAGGED for r in rows if r.label == "wrong"),
                               sum(r.label == "wrong" for r in rows)),
        "not_claim_not_checked": ratio(sum(r.verdict == "not_checked" for r in rows if r.label == "not_claim"),
                                       sum(r.label == "not_claim" for r in rows)),
        "accuracy": ratio(len(right), len(rows)),
        "claims": len(claims),
        "unaligned_units": sum(r.verdict == "missing" for r in rows),
        "grounded_with_a_wrong_sentence": f"{totals['wrong_but_grounded']} of {totals['wrong_answers']}",
        "grounded_when_all_correct": f"{totals['clean_grounded']} of {totals['clean_answers']}",
        "text_not_kept": f"{totals['text_changed']} of {totals['answers']}",
        "offsets_wrong": f"{totals['offsets_wrong']} of {totals['answers']}",
        "ms_per_answer": totals["ms_per_answer"],
    }
    return figures


def latency(data_dir: Path, answer_id: str = "ma-030", runs: int = 50) -> str:
    """The check alone on one 6-sentence answer (a tune one), warm: the median and the fastest of `runs`
    (the fastest is the least disturbed by other work on a shared machine)."""
    item = next(a for a in map(json.loads, ANSWERS.read_text().splitlines()) if a["id"] == answer_id)
    checker, sources = checker_and_sources(data_dir)
    cited = sources(item["sources"])
    checker.check(item["answer"], cited)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        checker.check(item["answer"], cited)
        times.append((time.perf_counter() - started) * 1000)
    return (f"check of {answer_id} ({len(item['sentences'])} sentences): median {sorted(times)[runs // 2]:.1f} ms,"
            f" fastest {min(times):.1f} ms over {runs} runs")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="tune")
    parser.add_argument("--answers", type=Path, help="another labelled file, every answer of it checked (no split)")
    parser.add_argument("--data", default="/tmp/verdicts-data", help="where the seed index is (built on first use)")
    parser.add_argument("--show", action="store_true", help="list every unit the check got wrong")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a setting to try (numbers)")
    parser.add_argument("--latency", action="store_true", help="time the check of one 6-sentence answer instead")
    args = parser.parse_args(argv)
    if args.latency:
        print(latency(Path(args.data)))
        return
    overrides = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
    rows, totals = run(args.split, Path(args.data), overrides, args.answers)
    figures = report(rows, totals)
    if args.show:
        for r in rows:
            ok = (r.label == "supported") == (r.verdict == "supported") and (r.label != "not_claim" or r.verdict == "not_checked")
            if not ok or (r.verdict == "contradicted" and r.label != "wrong"):
                print(f"{r.answer} {r.label:9} {r.category:17} -> {r.verdict:12} | {r.text[:90]} | {r.reason}")
    by_category = Counter((r.category, r.verdict) for r in rows)
    print(json.dumps({"split": str(args.answers) if args.answers else args.split, **figures}, indent=1))
    print("by category:", ", ".join(f"{c}->{v}: {n}" for (c, v), n in sorted(by_category.items())), file=sys.stderr)


if __name__ == "__main__":
    main()
