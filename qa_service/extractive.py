"""The offline answerer: picks and orders the source sentences that answer the question.

Deterministic and network-free. Every sentence it returns is quoted verbatim from a
source and cited, so its answers are grounded by construction; it refuses when the
sources do not contain what the question asks for (a detail of a named paper that the
abstract never mentions, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from .followups import standalone_question
from .labels import is_name_like, question_names
from .lexical import analyze, content_terms
from .questions import is_plural
from .records import REFUSAL, Completion, IdfFn, ModelRequest, Passage, Source, Usage
from .textclean import sentence_spans

_GENERIC = {
    "paper", "work", "propos", "method", "approach", "use", "studi", "make", "way", "new", "help", "exist", "anyth",
    "how", "doe", "did", "do", "were", "was", "much", "mani", "who", "what", "which", "when", "where", "why", "from",
    "give", "reach", "achiev", "get", "obtain", "show", "can", "could", "would", "should", "tell", "explain",
}
# A few words whose answers are phrased otherwise in abstracts (stemmed forms).
_SYNONYMS = {
    "faster": {"speedup", "speed", "acceler", "latenc"}, "fast": {"speedup", "speed", "acceler"},
    "speed": {"speedup", "faster"}, "quicker": {"speedup", "faster"}, "slower": {"latenc", "overhead"},
    "phone": {"mobil", "android"}, "smaller": {"compress"}, "cheaper": {"cost", "effici"},
    "accuraci": {"accur"}, "big": {"larg", "scale", "size"}, "larg": {"size", "scale"},
}

_QUANTITY = re.compile(
    r"\bhow\s+(?:much|many|large|big|fast|faster|long|often|well)\b|\bwhat\s+(?:\w+\s+){0,3}(?:score|accuracy|rate|speed-?up|percentage|gfid|number|size|pass@1|gain|improvement)\b|\bby how much\b",
    re.I,
)
_NUMBER = re.compile(r"\d")
_INTRO = re.compile(r"\b(?:we|this (?:paper|work))\s+(?:\w+\s+)?(?:propose|introduce|present|develop|design)", re.I)
MIN_SENTENCE_SCORE = 0.15
MIN_NAMED_COVERAGE = 0.5


@dataclass
class Candidate:
    source: Source
    start: int
    end: int
    text: str
    score: float


def present(term: str, words: set[str]) -> bool:
    return term in words or bool(_SYNONYMS.get(term, set()) & words)


def question_terms(question: str) -> set[str]:
    return {t for t in content_terms(question) if t not in _GENERIC}


def _mentions(names: set[str], source: Source) -> bool:
    return any(n.lower() == source.label.lower() or (is_name_like(n) and n in source.paper_text) for n in names)


class ExtractiveModel:
    """An answerer made of the sources' own sentences, each cited."""

    name = "extractive"

    def __init__(self) -> None:
        self.idf: IdfFn = lambda term: 1.0

    def _weight(self, terms: set[str]) -> float:
        return sum(self.idf(t) for t in terms)

    def _covered(self, terms: set[str], words: set[str]) -> float:
        return sum(self.idf(t) for t in terms if present(t, words))

    def answer(self, question: str, sources: list[Source], idf: IdfFn | None = None) -> str:
        if idf is not None:
            self.idf = idf
        names = question_names(question)
        named = [s for s in sources if _mentions(names, s)]
        pool = named or sources
        name_terms = {t for n in names for t in analyze(n)}
        terms = question_terms(question) - {t for t in name_terms if any(_mentions({n}, s) for n in names for s in pool)}
        total = self._weight(terms)
        if named and terms:
            coverage = max(self._covered(terms, set(analyze(s.paper_text))) / total for s in named)
            if coverage < MIN_NAMED_COVERAGE:
                return REFUSAL  # the named paper's abstract does not speak of what is asked
        quantity = bool(_QUANTITY.search(question))
        per_source = [self._candidates(s, terms, total, quantity, names) for s in pool]
        per_source = [c for c in per_source if c and c[0].score >= MIN_SENTENCE_SCORE]
        if not per_source:
            return REFUSAL
        top = max(c[0].score for c in per_source)
        if is_plural(question) and len(per_source) > 1:
            picked = [cands for cands in per_source if cands[0].score >= 0.5 * top][:6]
        else:
            # one paper: retrieval's first unless another's sentences match far better
            picked = [next(c for c in per_source if c[0].score >= 0.6 * top)]
        depth = 2 if len(picked) <= 2 else 1  # few papers: say more about each
        chosen = [c for cands in picked for i, c in enumerate(cands[:depth]) if i == 0 or c.score >= 0.6 * cands[0].score]
        if len(picked) == 1:
            chosen += self._complete(picked[0], chosen, quantity)
        chosen.sort(key=lambda c: (c.source.n, c.start))
        return " ".join(_cite(c) for c in chosen)

    def _complete(self, cands: list[Candidate], chosen: list[Candidate], quantity: bool) -> list[Candidate]:
        """A one-paper answer names the paper's method and, when a number is asked for, gives one."""
        extra: list[Candidate] = []
        label = cands[0].source.label
        if is_name_like(label) or " " not in label:
            named = re.compile(rf"(?<![\w/.-]){re.escape(label)}(?![\w/-])")  # the name, not a URL that contains it
            if not any(named.search(c.text) for c in chosen):
                extra += [c for c in cands if named.search(c.text)][:1]
        if quantity and not any(_NUMBER.search(c.text) for c in chosen + extra):
            extra += [c for c in cands if _NUMBER.search(c.text) and c not in extra][:1]
        return extra

    def _candidates(self, source: Source, terms: set[str], total: float, quantity: bool, names: set[str]) -> list[Candidate]:
        found = []
        mentioned = _mentions(names, source)
        for passage in source.passages:
            for start, end, text in _sentences(passage):
                words = set(analyze(text))
                score = self._covered(terms, words) / total if total > 0 else 0.0
                if quantity and _NUMBER.search(text):
                    score += 0.25
                if mentioned and (source.label in text or any(n in text for n in names if is_name_like(n))):
                    score += 0.15
                if _INTRO.search(text):
                    score += 0.1
                score *= 0.9 ** (source.n - 1)  # retrieval's order is evidence too
                found.append(Candidate(source, start, end, text, score))
        return sorted(found, key=lambda c: (-c.score, c.start))

    def _reply(self, request: ModelRequest) -> str:
        if request.task == "rewrite":
            return standalone_question(request.question, request.history)
        idf = request.corpus.idf if request.corpus is not None else None
        return self.answer(request.question, request.sources, idf)

    def complete(self, request: ModelRequest) -> Completion:
        return Completion(self._reply(request), Usage(0, 0))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        text = self._reply(request)
        for piece in re.findall(r"\S+\s*", text):
            yield piece
        yield Usage(0, 0)


def _sentences(passage: Passage) -> list[tuple[int, int, str]]:
    return [(passage.start + s, passage.start + e, passage.text[s:e]) for s, e in sentence_spans(passage.text)]


def _cite(candidate: Candidate) -> str:
    """'… speedup.' -> '… speedup [2].' so that the quote stays an exact substring."""
    text = candidate.text.rstrip()
    if text[-1:] in ".!?":
        return f"{text[:-1]} [{candidate.source.n}]{text[-1]}"
    return f"{text} [{candidate.source.n}]."
