"""How often a check mark survives a sentence turned false in the quote's own words: an attack, not a label.

    python bench/perturbations.py [--data /tmp/verdicts-data] [--answers FILE ...] [--show]

Takes every labelled `supported` sentence the checker ticks (the tuning answer files by default, so no
held-out row is read) and turns it false the ways a model goes wrong with the abstract's own words: a
negation ("is" -> "is not", "improves" -> "does not improve"), a verb or comparison turned ("improves" ->
"degrades", "higher" -> "lower"), a step reordered ("before" -> "after"), a bound swapped ("up to" ->
"at least"), an invented setting appended ("on the CIFAR-100 and SVHN datasets"). Each changed sentence
should lose its tick; the report gives, per perturbation, how many kept it (`supported`) out of how many
were made. Some perturbations leave a sentence true by chance ("first" -> "last" of a list); `--show`
prints each that kept its tick, to read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.verdicts import checker_and_sources  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TUNING = [ROOT / "tests" / "data" / name for name in
          ("model_answers.jsonl", "model_answers2.jsonl", "model_answers4.jsonl", "model_answers5.jsonl")]
_MARKERS = re.compile(r"\s*\[[\d,\s-]+\]")


def _swap(pattern: str, replacement: str | Callable[[re.Match], str]) -> Callable[[str], str]:
    rule = re.compile(pattern)
    return lambda text: rule.sub(replacement, text, count=1)


def _does_not(match: re.Match) -> str:
    verb = match.group(1)
    return "does not " + (verb[:-2] if verb.endswith(("sses", "xes", "zes", "ches", "shes")) else verb[:-1])


def _appended(tail: str) -> Callable[[str], str]:
    return lambda text: text.rstrip(". ") + tail


PERTURBATIONS: dict[str, Callable[[str], str]] = {
    "is -> is not": _swap(r"\b(is|are|was|were)\b(?! not)", r"\1 not"),
    "can -> cannot": _swap(r"\bcan\b", "cannot"),
    "verb -> does not verb": _swap(r"\b(improves|reduces|outperforms|achieves|enables|preserves|increases|requires|uses|shows)\b",
                                   _does_not),
    "improves -> degrades": _swap(r"\bimprov(?:es|ing)\b", "degrades"),
    "reduces -> increases": _swap(r"\breduc(?:es|ing)\b", "increases"),
    "higher -> lower": _swap(r"\bhigher\b", "lower"),
    "lower -> higher": _swap(r"\blower\b", "higher"),
    "more -> less": _swap(r"\bmore\b", "less"),
    "outperforms -> underperforms": _swap(r"\boutperform(?:s|ing)\b", "underperforms"),
    "with -> without": _swap(r"\bwith\b", "without"),
    "without -> with": _swap(r"\bwithout\b", "with"),
    "before -> after": _swap(r"\bbefore\b", "after"),
    "first -> last": _swap(r"\bfirst\b", "last"),
    "both -> neither": _swap(r"\bboth\b", "neither"),
    "up to -> at least": _swap(r"\bup to\b", "at least"),
    "often -> always": _swap(r"\b(?:often|can|may|typically|usually)\b", "always"),
    "+ invented datasets": _appended(" on the CIFAR-100 and SVHN datasets"),
    "+ invented domain": _appended(" in medical imaging and autonomous driving"),
    "+ invented hardware": _appended(" using 64 TPU v5 pods"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/verdicts-data"), help="seed index (ingested once)")
    parser.add_argument("--answers", type=Path, nargs="*", default=TUNING, help="labelled answer files (default: tuning sets)")
    parser.add_argument("--show", action="store_true", help="print each perturbed sentence that kept its tick")
    args = parser.parse_args()
    checker, sources = checker_and_sources(args.data)
    kept: Counter[str] = Counter()
    made: Counter[str] = Counter()
    for path in args.answers:
        for line in path.read_text().splitlines():
            item = json.loads(line)
            cited = sources(item["sources"])
            for unit in item["sentences"]:
                marks = "".join(_MARKERS.findall(unit["text"])).strip()
                if unit["label"] != "supported" or not marks:
                    continue
                text = _MARKERS.sub("", unit["text"]).strip()
                if _verdict(checker, text, marks, cited) != "supported":
                    continue  # a sentence the check does not tick cannot lose its tick
                for name, perturb in PERTURBATIONS.items():
                    changed = perturb(text)
                    if changed == text:
                        continue
                    made[name] += 1
                    if _verdict(checker, changed, marks, cited) == "supported":
                        kept[name] += 1
                        if args.show:
                            print(f"{name:28s} | {changed[:160]} | {item['id']}")
    report = {name: f"{kept[name]} of {made[name]} kept their tick" for name in PERTURBATIONS if made[name]}
    report["all"] = f"{sum(kept.values())} of {sum(made.values())} kept their tick"
    print(json.dumps(report, indent=1))


def _verdict(checker, text: str, marks: str, cited: list) -> str:
    units = [u for u in checker.check(text.rstrip(".") + " " + marks + ".", cited).sentences if u.cites]
    return units[0].verdict.value if units else "none"


if __name__ == "__main__":
    main()
