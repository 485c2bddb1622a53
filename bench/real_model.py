"""The eval question files against a real model behind any OpenAI-compatible endpoint.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 QA_MODEL=local python bench/real_model.py DATA_DIR [FILE ...]

DATA_DIR holds an ingested index (`qa-service ingest` with QA_DATA_DIR=DATA_DIR). The model is the one
the settings choose (OPENAI_BASE_URL, OPENAI_API_KEY, QA_MODEL, QA_MODEL_TIMEOUT ...). Reports per file:
questions answered and refused (and by whom: the service before the model, or the model itself),
citation markers that name a real source, the sentence verdicts, the share of answers grounded, and
latency. Not run in CI: nothing here downloads weights; bring your own model.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("heldout_questions.jsonl", "fresh_questions.jsonl", "fresh2_questions.jsonl", "fresh3_questions.jsonl")
_MARKER = re.compile(r"\[(\d{1,4}(?:\s*[-–,]\s*\d{1,4})*)\]")


def markers(text: str) -> int:
    """How many citation markers a text holds (the answer as returned keeps only valid ones)."""
    return len(_MARKER.findall(text))


def run_file(ask, path: Path) -> dict:
    questions = [json.loads(line)["question"] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    counts: Counter = Counter()
    verdicts: Counter = Counter()
    times: list[float] = []
    for question in questions:
        started = time.perf_counter()
        try:
            answer = ask(question)
        except Exception as error:  # a model error on one question is counted, not fatal
            counts["errors"] += 1
            print(f"  error: {question[:60]!r}: {error}", file=sys.stderr)
            continue
        times.append((time.perf_counter() - started) * 1000)
        if answer.insufficient_evidence:
            counts["refused"] += 1
            counts[f"refused:{answer.refusal_reason.value if answer.refusal_reason else 'none'}"] += 1
            continue
        counts["answered"] += 1
        counts["grounded"] += answer.grounded
        invalid = sum(1 for issue in answer.issues if issue.kind.value == "unknown_source")
        counts["markers_valid"] += markers(answer.answer)
        counts["markers_invalid"] += invalid
        verdicts.update(s.verdict.value for s in answer.sentences if s.kind.value == "claim")
    answered = counts["answered"] or 1
    valid = counts["markers_valid"] + counts["markers_invalid"]
    return {
        "file": path.name, "questions": len(questions), "answered": counts["answered"], "refused": counts["refused"],
        "refused_by": {k.split(":", 1)[1]: v for k, v in counts.items() if k.startswith("refused:")},
        "errors": counts["errors"],
        "markers_valid_share": round(counts["markers_valid"] / valid, 3) if valid else None,
        "verdicts": dict(verdicts), "grounded_share": round(counts["grounded"] / answered, 3),
        "latency_ms_p50": round(statistics.median(times), 1) if times else None,
        "latency_ms_max": round(max(times), 1) if times else None,
    }


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    from qa_service.config import load_settings
    from qa_service.service import Services

    settings = load_settings().replace(data_dir=argv[0], rate_limit="", answer_rate_limit="")
    if not (settings.openai_base_url or settings.openai_api_key):
        sys.exit("set OPENAI_BASE_URL (and QA_MODEL) to the model's OpenAI-compatible endpoint first")
    services = Services(settings)
    paths = [Path(p) for p in argv[1:]] or [ROOT / "tests" / "data" / name for name in FILES]
    print(f"model {services.model.name} at {settings.openai_base_url or 'api.openai.com'}", file=sys.stderr)
    for path in paths:
        print(json.dumps(run_file(services.ask, path)))


if __name__ == "__main__":
    main(sys.argv[1:])
