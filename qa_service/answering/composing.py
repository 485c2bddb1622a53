"""Which sentences answer the kind of question asked: a definition, a mechanism, the figures, a comparison...

The offline model scores every sentence of its sources by meaning and rare terms; this module picks
among them by what the question asks (`AnswerKind`) and by what each sentence does in its abstract
(`corpus.roles`): asked for the numbers, it gives the result sentences that carry figures, not the
sentence that shares the most words with the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from ..corpus.names import name_key, own_keys, own_names
from ..corpus.roles import Role
from ..store.lexical import content_terms
from ..records import AnswerKind, Source
from .specifics import counts_any


@dataclass
class Candidate:
    """One source sentence, scored for the question, with its role in the abstract."""

    source: Source
    start: int
    end: int
    text: str
    score: float
    role: Role = Role.BACKGROUND
    figures: bool = False
    negative: bool = False
    meaning: float = 0.0  # the MiniLM cosine to the question, before rank discounts
    words: float = 0.0  # the share of the question's rare-term weight it holds


@dataclass(frozen=True)
class Composition:
    """The composer's numbers (settings): how close a second sentence must score to join the first."""

    second_share: float = 0.8
    max_sentences: int = 3
    per_named: int = 2  # sentences from each paper a question names (setting answer_per_named)
    figure_words: float = 0.5  # a figured result sentence holding this share of the best one's question words gives an asked figure too
    count_window: int = 4  # a number at most this many words before a thing counts it (setting count_window)
    own_share: float = 0.5  # a listed paper whose best sentence only sets the scene also gives its own work at this share (answer_list_own_share)


Pick = Callable[[list[Candidate], bool, Composition], list[Candidate]]


def _best(cands: list[Candidate], keep: Callable[[Candidate], bool], n: int = 1) -> list[Candidate]:
    """The n best-scoring sentences that pass `keep` (cands are best first)."""
    return [c for c in cands if keep(c)][:n]


def _close_to(first: list[Candidate], more: list[Candidate], tuning: Composition) -> list[Candidate]:
    """Further sentences that score nearly as well as the first one."""
    if not first:
        return []
    return [c for c in more if c not in first and c.score >= tuning.second_share * first[0].score][: tuning.max_sentences - len(first)]


def _says(text: str, name: str, flags: int = 0) -> bool:
    """Does the text hold the name as a word of its own (not inside "Qwen2.5" or a path)?"""
    return bool(name) and re.search(rf"(?<![\w/.-]){re.escape(name)}(?![\w/-])", text, flags) is not None


def names(candidate: Candidate) -> bool:
    """Does the sentence call its paper by its name (a one-word label, a title's name before its colon: a method's name)?"""
    return any(" " not in name and _says(candidate.text, name) for name in own_names(candidate.source.label))


def calls(question: str, label: str) -> bool:
    """Does the question call the paper by its label ("Which is faster, CAST or SERE?"), in any case? (A benchmark
    several abstracts mention makes them all the question's papers, but it calls none of them.)"""
    return any(_says(question, name, re.I) for name in own_names(label))


def definition(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The sentence that introduces the thing (a method sentence naming it, else the best method one), then its main result."""
    intro = _best(cands, lambda c: c.role is Role.METHOD and names(c)) or _best(cands, lambda c: c.role is Role.METHOD)
    result = _best(cands, lambda c: c.role is Role.RESULT and c.figures) or _best(cands, lambda c: c.role is Role.RESULT)
    return (intro or cands[:1]) + [c for c in result if c not in intro]


# a means clause: "by re-routing tokens", "via a learned router", "through structured exploration"
_MEANS = re.compile(r"\bby\s+(?:\w+ly\s+)?[\w-]+ing\b|\bvia\b|\bthrough\b", re.I)


# a sentence that introduces the paper's own thing: "we present SERE, ...", "this paper proposes ..."
_INTRODUCES = re.compile(r"\b(?:we|this\s+(?:paper|work))\s+(?:\w+\s+)?(?:propose|present|introduce)s?\b", re.I)


def mechanism(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The method sentences: the best one and those close to it. A sentence of what the method does with no figure
    and a means clause ("SERE reduces the number of active experts by re-routing tokens ...") says how it works as a
    method sentence does. An introducing sentence alone ("we present X, a ... method") says what it is: the best method
    sentence that does not introduce comes with it."""
    methods = [c for c in cands if c.role is Role.METHOD or (c.role is Role.RESULT and not c.figures and _MEANS.search(c.text))]
    first = methods[:1] or cands[:1]
    more = _close_to(first, methods, tuning)
    if not more and _INTRODUCES.search(first[0].text):  # "we present SERE, a ... method": what it is, not yet how it works
        more = _best(methods, lambda c: c not in first and not _INTRODUCES.search(c.text))
    return first + more


def problem(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The problem or motivation sentences, then the one that says how the paper answers it."""
    problems = [c for c in cands if c.role is Role.PROBLEM] or [c for c in cands if c.role is Role.BACKGROUND]
    first = problems[:1] or cands[:1]
    first += _close_to(first, problems, tuning)[:1]
    return first + _best(cands, lambda c: c.role is Role.METHOD and c not in first)


def results(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The result sentences that carry figures: the best, every one that scores close to it, and every one holding about as
    many of the question's words ("the gFID numbers": each sentence giving a gFID), or any figure, if no result has one."""
    figured = [c for c in cands if c.figures and c.role is Role.RESULT] or [c for c in cands if c.figures]
    if not figured:
        return _best(cands, lambda c: c.role is Role.RESULT) or cands[:1]
    first = figured[:1] + _close_to(figured[:1], figured, tuning)
    asked = [c for c in figured if c not in first and 0 < tuning.figure_words * figured[0].words <= c.words]
    return (first + asked)[: max(tuning.max_sentences, len(first))]


def limitations(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The sentences that report failures, weaknesses or low scores; else the problem the paper starts from."""
    failing = [c for c in cands if c.negative]
    if failing:
        return failing[:1] + _close_to(failing[:1], failing, tuning)
    return _best(cands, lambda c: c.role is Role.PROBLEM) or cands[:1]


def yes_no(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The deciding sentence first (the best result or method one), then one that backs it."""
    deciding = _best(cands, lambda c: c.role in (Role.RESULT, Role.METHOD) and (c.figures or not figures)) or cands[:1]
    return deciding + _close_to(deciding, cands, tuning)[:1]


def overview(cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The best sentence and a second one close to it."""
    return cands[:1] + _close_to(cands[:1], cands[1:2], tuning)


BY_KIND: dict[AnswerKind, Pick] = {
    AnswerKind.DEFINITION: definition, AnswerKind.MECHANISM: mechanism, AnswerKind.PROBLEM: problem,
    AnswerKind.RESULTS: results, AnswerKind.LIMITATIONS: limitations, AnswerKind.YES_NO: yes_no,
    AnswerKind.OVERVIEW: overview, AnswerKind.COMPARISON: yes_no, AnswerKind.LIST: overview,
}


def one_paper(kind: AnswerKind, cands: list[Candidate], figures: bool, tuning: Composition) -> list[Candidate]:
    """The sentences of one paper that answer this kind of question; when figures are asked, one of them carries one,
    and a figured sentence the abstract goes on from ("Moreover, it outperforms ... from 5% to 20%") comes with it."""
    chosen = BY_KIND[kind](cands, figures, tuning)
    if figures and not any(c.figures for c in chosen):
        chosen += _best(cands, lambda c: c.figures and c not in chosen)
    if figures:
        chosen += [c for c in (_continued(c, cands) for c in chosen if c.figures) if c is not None and c not in chosen]
    return chosen


# how an abstract goes on with the same kind of statement: "Moreover, ...", "In addition, ..."
_CONTINUES = re.compile(r"^\W*(?:moreover|furthermore|in addition|additionally|also|further|besides)\b", re.I)


def _continued(said: Candidate, cands: list[Candidate]) -> Candidate | None:
    """The figured sentence right after this one when it opens by going on from it."""
    after = [c for c in cands if c.source.n == said.source.n and c.start >= said.end]
    following = min(after, key=lambda c: c.start, default=None)
    return following if following is not None and following.figures and _CONTINUES.match(following.text) else None


# a sentence that gives a cause: "due to", "because", "stems from", "suffers from", "two causes of", "attributed to"
_CAUSE = re.compile(r"\b(?:because|due\s+to|owing\s+to|caused\s+by|causes?\s+of|stem(?:s|ming)?\s+from|aris(?:es|ing)\s+from"
                    r"|suffers?\s+from|result(?:s|ing)?\s+from|attribut\w*\s+(?:\w+\s+){0,3}?to|the\s+reason|lies\s+in|root\s+cause)\b", re.I)


def explained(cands: list[Candidate], chosen: list[Candidate]) -> list[Candidate]:
    """A why question's answer: the best sentence that gives a cause first, when the problem sentences left it out."""
    cause = next((c for c in cands if _CAUSE.search(c.text)), None)
    return [cause] + chosen[:2] if cause is not None and cause not in chosen else chosen


def defining(thing: str, cands: list[Candidate], chosen: list[Candidate]) -> list[Candidate]:
    """A definition of a thing other than the paper itself ("What is missingness bias?" of the paper introducing MCal):
    the best sentence that speaks of it (every word of its name, or all but one of a name of three words or more: "the
    Accidental Correction Rate metric", where the abstract may not say "metric"), then the paper's own; else `chosen`."""
    label = cands[0].source.label if cands else ""
    if calls(thing, label) or name_key(thing) in own_keys(label):
        return chosen
    terms = content_terms(thing) - content_terms(label)
    need = len(terms) - (1 if len(terms) >= 3 else 0)
    concept = next((c for c in cands if terms and len(terms & content_terms(c.text)) >= need), None)
    return [concept] + chosen[:1] if concept is not None and concept not in chosen else chosen


def compared(per_source: Sequence[list[Candidate]], figures: bool = False) -> list[Candidate]:
    """For each paper compared: one method sentence and one result sentence, the ones naming it first; when figures are
    asked ("which success rate does each report?"), the result sentence is one carrying figures, named or not
    ("Go-Browse achieves efficient exploration" names the paper and reports no result)."""
    chosen: list[Candidate] = []
    for cands in per_source:
        for role in (Role.METHOD, Role.RESULT):
            figured = (_best(cands, lambda c: c.role is Role.RESULT and c.figures)
                       or _best(cands, lambda c: c.figures and c not in chosen)) if figures and role is Role.RESULT else []
            pick = figured or _best(cands, lambda c: c.role is role and names(c)) or _best(cands, lambda c: c.role is role)
            chosen += [c for c in pick if c not in chosen]
        if not any(c.source is cands[0].source for c in chosen):
            chosen += cands[:1]
    return chosen


def each_named(kind: AnswerKind, per_source: Sequence[list[Candidate]], figures: bool, tuning: Composition) -> list[Candidate]:
    """A question that names several papers without asking for a list: each paper's answer to it, in its best sentences."""
    chosen: list[Candidate] = []
    for cands in per_source:
        picks = one_paper(kind, cands, figures, tuning)
        if figures:
            picks.sort(key=lambda c: not c.figures)  # the sentence with the asked figure is kept first
        chosen += [c for c in picks[: tuning.per_named] if c not in chosen]
    return chosen


def listed(per_source: Sequence[list[Candidate]], figures: bool, tuning: Composition, counted: Sequence[str] = ()) -> list[Candidate]:
    """One sentence per paper, each paper once, most relevant first: its contribution (its figures, if asked),
    when that scores close to the paper's best sentence; else the best one, and, if figures are asked, the paper's
    best sentence that gives some ("Which benchmarks test agents, and how many tasks?"). A list asking a count of
    things (`counted`: "how many tasks each contains") gives the paper's best sentence counting one of them, if it has one."""
    chosen = []
    for cands in per_source:
        count = _best(cands, lambda c: counts_any(c.text, counted, tuning.count_window)) if counted else []
        if count:
            chosen += count
            continue
        wanted: Callable[[Candidate], bool] = (lambda c: c.figures) if figures else (lambda c: c.role is Role.METHOD)
        close = _best(cands, lambda c: wanted(c) and c.score >= tuning.second_share * cands[0].score)
        chosen += close or cands[:1] + _own_work(cands, tuning) + (_best(cands, lambda c: c.figures) if figures else [])
    return chosen


def _own_work(cands: list[Candidate], tuning: Composition) -> list[Candidate]:
    """A paper's best sentence that only sets the scene ("Machine unlearning remains hard to evaluate ...") says what field
    it is in, not what it does: its best sentence of its own work (problem, method or result) comes with it, when that
    scores at least `own_share` of the best one."""
    if not cands or cands[0].role is not Role.BACKGROUND:
        return []
    return _best(cands, lambda c: c.role is not Role.BACKGROUND and c.role is not Role.AVAILABILITY
                 and c.score >= tuning.own_share * cands[0].score)


def followed(listing: list[Candidate], per_source: Sequence[list[Candidate]], kind: AnswerKind, figures: bool,
             tuning: Composition) -> list[Candidate]:
    """A list that asks something of each paper ("..., and how?"): after each paper's listed sentence, the paper's own
    answer to that part (its method sentence for "how", its contribution for "what do they propose"), each paper's
    sentences together, most relevant paper first."""
    chosen: list[Candidate] = []
    for cands in per_source:
        own = [c for c in listing if c.source is cands[0].source]
        if not own:
            continue
        if kind is AnswerKind.OVERVIEW:  # what each proposes: the sentence introducing it, else its definition
            picks = [c for c in cands if c.role is Role.METHOD and _INTRODUCES.search(c.text)] + definition(cands, figures, tuning)
        else:
            picks = BY_KIND[kind](cands, figures, tuning)
        more = [c for c in picks if c not in listing]
        chosen += own + more[:1]
    return chosen
