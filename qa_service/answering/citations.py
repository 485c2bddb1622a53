"""Citation markers parsed, mapped to papers and checked against what the source says."""

from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np

from ..store.lexical import analyze
from ..records import (
    REFUSAL, AnswerSentence, CheckedAnswer, Citation, CitationIssue, IssueKind, SentenceKind, SentenceVerdict, Source,
)
from ..corpus.textclean import sentence_spans

# A source number has at most MARKER_DIGITS digits: a prompt holds a few dozen sources, and a longer
# run of digits in brackets ("[1111…]", in an abstract or a reply) is text, not a marker (Python's
# int() refuses a string of more than 4,300 digits). The page's MARKER pattern says the same.
MARKER_DIGITS = 4
_MARKER = re.compile(rf"(?<!\s)\s*\[(\d{{1,{MARKER_DIGITS}}}(?:\s*[-–,]\s*\d{{1,{MARKER_DIGITS}}})*)\]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
Embed = Callable[[list[str]], Sequence[np.ndarray]]


def parse_numbers(marker: str) -> list[int]:
    """'1', '1, 3', '2-4' -> [1], [1, 3], [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"\s*,\s*", marker):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and int(bounds[0]) <= int(bounds[1]) and int(bounds[1]) - int(bounds[0]) < 50:
            numbers.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        else:
            numbers.extend(int(b) for b in bounds)
    return list(dict.fromkeys(numbers))


def is_refusal(answer: str) -> bool:
    return _MARKER.sub("", answer).strip().rstrip(".").lower() == REFUSAL.rstrip(".").lower()


class CitationChecker:
    """Does the cited source back the sentence? Lexical overlap and numbers, plus embeddings."""

    def __init__(self, idf: Callable[[str], float], embed: Embed | None = None, threshold: float = 0.5):
        self.idf = idf
        self.embed = embed
        self.threshold = threshold

    def check(self, answer: str, sources: Sequence[Source]) -> CheckedAnswer:
        answer = answer.strip()
        if is_refusal(answer):
            refusal = AnswerSentence(0, len(REFUSAL), REFUSAL, SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED)
            return CheckedAnswer(REFUSAL, grounded=True, refused=True, sentences=[refusal])
        by_n = {s.n: s for s in sources}
        result = CheckedAnswer(answer)
        bad: set[int] = set()
        clean_parts: list[str] = []
        all_supported = True
        spans = sentence_spans(answer) or [(0, len(answer))]
        at = 0  # where the next rewritten sentence starts in the answer as returned
        for index, (start, end) in enumerate(spans):
            sentence = answer[start:end]
            numbers: list[int] = []
            for marker in _MARKER.finditer(sentence):
                numbers.extend(parse_numbers(marker.group(1)))
            known = [n for n in dict.fromkeys(numbers) if n in by_n]
            bad.update(n for n in numbers if n not in by_n)
            claim = _MARKER.sub("", sentence).strip()
            written = _rewrite_markers(sentence, by_n)
            clean_parts.append(written)
            unit = AnswerSentence(at, at + len(written), written, cites=known)
            at += len(written) + 1 if written else 0
            if written:
                result.sentences.append(unit)
            if not known:
                all_supported = False
                result.issues.append(CitationIssue(IssueKind.UNCITED, index, repr(claim[:80])))
                unit.verdict, unit.reason = SentenceVerdict.UNCITED, "cites no source"
                continue
            checks = [self._support(claim, by_n[n], index) for n in known]
            result.citations.extend(checks)
            unit.quotes = checks
            if any(c.supported for c in checks):
                unit.verdict, unit.reason = SentenceVerdict.SUPPORTED, "its cited abstract states it"
            else:
                all_supported = False
                result.issues.append(CitationIssue(IssueKind.UNSUPPORTED, index, str(known)))
                unit.reason = "the cited abstracts do not confirm it"
        for n in sorted(bad):
            result.issues.append(CitationIssue(IssueKind.UNKNOWN_SOURCE, None, str(n)))
        result.answer = " ".join(p for p in clean_parts if p)
        result.grounded = all_supported and bool(result.citations)
        return result

    def _support(self, claim: str, source: Source, sentence_index: int) -> Citation:
        text = source.paper_text
        spans = sentence_spans(text) or [(0, len(text))]
        exact = text.find(claim)
        if exact >= 0:  # quoted verbatim: the best possible support
            return Citation(source.n, source.paper_id, source.label, claim, exact, exact + len(claim), 1.0, True, sentence_index, source.corpus)
        claim_terms = set(analyze(claim)) - set(analyze(source.label))  # citing the paper already names it
        weight = sum(self.idf(t) for t in claim_terms) or 1.0
        numbers = [n for n in _NUMBER.findall(claim) if not re.fullmatch(r"\d", n)]
        lexical = [
            min(1.0, sum(self.idf(t) for t in claim_terms & set(analyze(text[s:e]))) / weight
                + (0.3 if numbers and all(n in text[s:e] for n in numbers) else 0.0))
            for s, e in spans
        ]
        order = sorted(range(len(spans)), key=lambda i: -lexical[i])[:3]
        scores = {i: lexical[i] for i in order}
        if self.embed is not None:
            vectors = self.embed([claim] + [text[spans[i][0] : spans[i][1]] for i in order])
            for i, vector in zip(order, vectors[1:]):
                scores[i] = 0.5 * lexical[i] + 0.5 * max(0.0, float(np.dot(vectors[0], vector)))
        best = max(scores, key=lambda i: scores[i])
        # every number the sentence states must be in the abstract
        numbers_ok = all(num in text for num in numbers)
        score = scores[best] if numbers_ok else min(scores[best], self.threshold - 0.01)
        start, end = spans[best]
        return Citation(source.n, source.paper_id, source.label, text[start:end], start, end, score, score >= self.threshold, sentence_index,
                        source.corpus)


def _rewrite_markers(sentence: str, by_n: dict) -> str:
    """Drop numbers that match no source from a marker; drop a marker left empty."""

    def keep(match: re.Match) -> str:
        numbers = [n for n in parse_numbers(match.group(1)) if n in by_n]
        return f" [{', '.join(map(str, numbers))}]" if numbers else ""

    return _MARKER.sub(keep, sentence).strip()
