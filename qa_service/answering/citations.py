"""Citation markers parsed, mapped to papers, and each claim of the answer checked against what
its cited sources say: supported, contradicted or unverified, with the best quote of each source.

The model's text comes back as written; only numbers that name no source are taken out of
their markers. A claim is supported when the quotes of the sources it cites carry it: every
figure (in the quote that carries the claim's words), every named thing, the same polarity, and
most of its rare words. It is contradicted when a cited quote gives another figure for the same
thing or the opposite direction, or when another retrieved paper, not the cited one, states it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence


from ..config import Settings
from ..records import (
    REFUSAL, AnswerSentence, CheckedAnswer, Citation, CitationIssue, IssueKind, SentenceKind, SentenceVerdict, Source,
)
from .claims import fold, likened, unlikened
from .judging import Finding, Judge, Reads
from .segments import MARKER, MARKER_DIGITS, Unit, declines, parse_numbers, says_silent, split_units, to_reader
from .tuning import Tuning

__all__ = ["CitationChecker", "MARKER_DIGITS", "is_refusal", "parse_numbers"]
Embed = Callable[[list[str]], Any]  # texts -> L2-normalised vectors (MiniLM), cached by the caller
_CLAUSES = re.compile(r",?\s+(?:while|whereas)\s+|;\s+|,\s+(?:and|but)\s+(?=[A-Z])|\s+in the (?:first|second)\b")
# a sentence that speaks for each source it cites: every one of them must state it whole
_EVERY_SOURCE = re.compile(r"\b(?:both|each (?:of|work|paper|study|method|approach)|all (?:of )?(?:them|these|three|four|five|the "
                           r"(?:papers|works|methods|studies))|they all|either)\b", re.I)  # not "each block's": a part of one paper


def is_refusal(answer: str) -> bool:
    return MARKER.sub("", answer).strip().rstrip(".").lower() == REFUSAL.rstrip(".").lower()


@dataclass
class _Verdict:
    verdict: SentenceVerdict
    reason: str
    quotes: list[Citation] = field(default_factory=list)


class CitationChecker:
    """Does each claim say what its cited sources say? Figures, names and polarity aligned with the quote."""

    def __init__(self, idf: Callable[[str], float], embed: Embed | None = None, threshold: float | None = None,
                 tuning: Tuning | None = None):
        tuning = tuning or Tuning.from_settings(Settings())
        self.judge = Judge(idf, embed, tuning if threshold is None else replace(tuning, threshold=threshold))

    @classmethod
    def from_settings(cls, idf: Callable[[str], float], embed: Embed | None, settings: Settings) -> "CitationChecker":
        return cls(idf, embed, tuning=Tuning.from_settings(settings))

    def check(self, answer: str, sources: Sequence[Source]) -> CheckedAnswer:
        answer = answer.strip()
        if is_refusal(answer):
            refusal = AnswerSentence(0, len(REFUSAL), REFUSAL, SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED,
                                     reason="the service's refusal")  # the one sentence, as the service writes it
            return CheckedAnswer(REFUSAL, grounded=True, refused=True, sentences=[refusal])
        by_n = {s.n: s for s in sources}
        text, unknown = _drop_unknown(answer, by_n)
        result = CheckedAnswer(text)
        units = split_units(text)
        claims = [u for u in units if not u.structure and not (not u.cites and (to_reader(u.claim) or declines(u.claim)))
                  and not says_silent(u.text)]
        if not claims and any(declines(u.claim) for u in units):  # the model declined, in its own words
            result.grounded, result.refused, result.declined = True, True, True
        reads = Reads(self.judge.hedge_share)
        reads.stems_each([u.claim for u in claims] + [s.label for s in sources])  # one tokenizer pass for all
        for index, unit in enumerate(units):
            result.sentences.append(self._unit(unit, index, unit in claims, by_n, result, reads))
        for n in unknown:
            result.issues.append(CitationIssue(IssueKind.UNKNOWN_SOURCE, None, str(n)))
        checked = [s for s in result.sentences if s.kind is SentenceKind.CLAIM]
        if checked:
            result.grounded = all(s.verdict is SentenceVerdict.SUPPORTED for s in checked)
        return result

    def _unit(self, unit: Unit, index: int, claim: bool, by_n: dict[int, Source], result: CheckedAnswer,
              reads: Reads) -> AnswerSentence:
        known = [n for n in unit.cites if n in by_n]
        if not claim:
            why = unit.why or ("the model says the sources do not state it" if declines(unit.claim) else "an aside to the reader")
            return AnswerSentence(unit.start, unit.end, unit.text, SentenceKind.STRUCTURE, SentenceVerdict.NOT_CHECKED,
                                  known, reason=why)
        sentence = AnswerSentence(unit.start, unit.end, unit.text, SentenceKind.CLAIM, cites=known)
        if not known:
            result.issues.append(CitationIssue(IssueKind.UNCITED, index, repr(unit.claim[:80])))
            sentence.verdict, sentence.reason = SentenceVerdict.UNCITED, "cites no source"
            return sentence
        others = [s for n, s in by_n.items() if n not in known]
        own = [(text, [by_n[n] for n in numbers if n in by_n]) for text, numbers in unit.pieces]
        found = self._verdict(unit.claim, [by_n[n] for n in known], others, index, reads, [p for p in own if p[1]])
        sentence.verdict, sentence.reason, sentence.quotes = found.verdict, found.reason, found.quotes
        result.citations.extend(found.quotes)
        if found.verdict is not SentenceVerdict.SUPPORTED:
            result.issues.append(CitationIssue(IssueKind.UNSUPPORTED, index, str(known)))
        return sentence

    def _verdict(self, claim: str, cited: list[Source], others: list[Source], index: int, reads: Reads,
                 pieces: Sequence[tuple[str, list[Source]]] = ()) -> _Verdict:
        """Each part of the claim carried by one of its cited sources (a stretch closed by its own markers, by
        those); a claim no cited source carries but another retrieved paper does belongs to that paper."""
        parts = list(pieces) if len(pieces) > 1 else [(p, cited) for p in (_parts(claim) if len(cited) > 1 else [claim])]
        best: dict[int, Finding] = {}
        findings: list[Finding] = []
        for part, sources in parts:
            options = [self.judge.judge(part, source, reads) for source in sources]
            chosen = max(options, key=Finding.rank)
            findings.append(self._misplaced(part, chosen, [s for s in cited if s not in sources], reads))
            for option in options:
                if option.source.n not in best or option.rank() > best[option.source.n].rank():
                    best[option.source.n] = option
        quotes = [best[s.n].citation(index) for s in cited if s.n in best]
        subject = self._likening(claim, cited, reads)
        if subject is not None:  # "Like NewtonBench, it also uses law shifts [1][2]": said of the other source too
            verdict = SentenceVerdict.CONTRADICTED if subject.verdict is SentenceVerdict.CONTRADICTED else SentenceVerdict.UNVERIFIED
            return _Verdict(verdict, f"the sentence likens [{subject.source.n}] to another source, and [{subject.source.n}] "
                                     "does not state it", quotes)
        if len(cited) > 1 and _EVERY_SOURCE.search(claim):  # "Both works validate on MUSE [1][2]": each must say all of it
            whole = [self.judge.judge(claim, s, reads) for s in cited] if len(pieces) > 1 else [best[s.n] for s in cited if s.n in best]
            short = next((f for f in whole if f.verdict is not SentenceVerdict.SUPPORTED), None)
            if short is not None:
                verdict = SentenceVerdict.CONTRADICTED if short.verdict is SentenceVerdict.CONTRADICTED else SentenceVerdict.UNVERIFIED
                return _Verdict(verdict, f"the sentence speaks for every source it cites, and [{short.source.n}] does not state it", quotes)
        if any(f.verdict is SentenceVerdict.CONTRADICTED for f in findings):
            bad = next(f for f in findings if f.verdict is SentenceVerdict.CONTRADICTED)
            return _Verdict(SentenceVerdict.CONTRADICTED, bad.reason, quotes)
        if all(f.verdict is SentenceVerdict.SUPPORTED for f in findings):
            return _Verdict(SentenceVerdict.SUPPORTED, findings[0].reason if len(findings) == 1 else
                            "each part is stated by the source it cites", quotes)
        for source in others:
            elsewhere = self.judge.judge(claim, source, reads, by_meaning=False)
            if elsewhere.verdict is SentenceVerdict.SUPPORTED:
                return _Verdict(SentenceVerdict.CONTRADICTED, f"[{source.n}] states this, not the source it cites", quotes)
        missing = next(f for f in findings if f.verdict is not SentenceVerdict.SUPPORTED)
        return _Verdict(SentenceVerdict.UNVERIFIED, missing.reason, quotes)


    def _likening(self, claim: str, cited: list[Source], reads: Reads) -> Finding | None:
        """A sentence likening its subject to a source it cites ("Like NewtonBench, it ...") says the rest of itself of
        the other sources as well: the finding of the first of them that does not state it, or None."""
        things = {fold(t).lower() for t in likened(claim)}
        alike = [s for s in cited if fold(s.label).lower() in things]
        if not alike or len(alike) == len(cited):
            return None
        bare = unlikened(claim)
        short = (self.judge.judge(bare, s, reads) for s in cited if s not in alike)
        return next((f for f in short if f.verdict is not SentenceVerdict.SUPPORTED), None)

    def _misplaced(self, part: str, chosen: Finding, elsewhere: list[Source], reads: Reads) -> Finding:
        """A stretch its own marker's source does not carry but another source the sentence cites does: the
        markers are on the wrong stretches."""
        if chosen.verdict is SentenceVerdict.SUPPORTED:
            return chosen
        for source in elsewhere:
            if self.judge.judge(part, source, reads, by_meaning=False).verdict is SentenceVerdict.SUPPORTED:
                return replace(chosen, verdict=SentenceVerdict.CONTRADICTED,
                               reason=f"[{source.n}] states this part, not the source its marker names")
        return chosen


def _parts(claim: str) -> list[str]:
    """A sentence citing several sources, cut where it turns from one to the next ("..., while ...")."""
    parts = [p.strip() for p in _CLAUSES.split(claim) if p and len(p.strip()) > 12]
    return parts or [claim]


def _drop_unknown(answer: str, by_n: dict[int, Source]) -> tuple[str, list[int]]:
    """The answer with numbers that name no source taken out of their markers (a marker left empty goes);
    every other character stays as the model wrote it."""
    unknown: list[int] = []

    def keep(match: re.Match) -> str:
        numbers = parse_numbers(match.group(1))
        valid = [n for n in numbers if n in by_n]
        unknown.extend(n for n in numbers if n not in by_n)
        if len(valid) == len(numbers):
            return match.group(0)
        lead = match.group(0)[: len(match.group(0)) - len(match.group(0).lstrip())]
        return f"{lead}[{', '.join(map(str, valid))}]" if valid else ""

    return MARKER.sub(keep, answer), sorted(set(unknown))
