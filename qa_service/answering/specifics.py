"""Specifics a question asks of one paper that its abstract may leave out: a count of things, the one that came out best,
the names of a kind of thing, the figure of a measure.

"How many routers does RouterArena rank?" is answered by a number next to "routers"; an abstract that
speaks of routers but never counts them does not report it, whatever other numbers it holds (a "(1)"
of a list, a URL's digits). "Which of the 11 models was least sycophantic?" is answered by a name
in a sentence that ranks; an abstract that ranks without naming ("the best performer reaches 7%")
does not say which. "What exact compression ratio does it achieve?" is answered by a figure in a sentence
that speaks of the compression ratio; one that speaks of it without a number does not report it. All read
English wording: a count asked in another language names its thing in that language, which an English
abstract cannot match, so it goes unjudged (never refused by this).
"""

from __future__ import annotations

import re
from typing import Sequence

from ..corpus.abbreviations import defined_in
from ..corpus.labels import name_candidates
from ..corpus.names import name_key, own_keys
from ..corpus.roles import states_number
from ..corpus.textclean import sentence_spans
from ..store.lexical import stem
from .directions import DOWN, UP
from rapidfuzz.distance import OSA

# "how many [of the] A100 GPUs": the counted thing is the first plural noun within a few words
_HOW_MANY = re.compile(r"\b(?:how\s+many|(?:the\s+)?number\s+of)\s+(?:(?:of\s+)?(?:the|its|their)\s+)?((?:[\w-]+\s+){0,3}?)"
                       r"([A-Za-z][\w-]*[a-rt-z]s)\b", re.I)  # "how many tasks", "the number of tasks/questions"
# "How does SERE cut down the number of experts?": a number a method changes is what it does, not a count asked for
_CHANGED = re.compile(r"\b(?:" + "|".join(sorted(UP | DOWN, key=len, reverse=True)) + r")(?:\s+(?:down|up|back))?\s*$", re.I)
_OR_ELSE = re.compile(r"\s*(?:or|and/or|/)\s*([A-Za-z][\w-]*s)\b", re.I)  # "tasks or questions", "tasks/questions"
_NOT_COUNTED = {"times", "does", "was", "has", "this", "its", "his", "is", "plus", "less", "thus", "yes"}  # English function words, "how many times" (a ratio)
_COUNT_WORDS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|fifty|hundred|thousand"
                r"|dozens?|hundreds|thousands|millions|billions|single|several|multiple|both")
_COUNT = re.compile(rf"^(?:\d[\d,.]*[kKMB]?\+?|{_COUNT_WORDS})$", re.I)
_TOKEN = re.compile(r"[\w+.,%-]+")

# "which (of the 11) models was the least sycophantic", "which one ranks first", "the top performer", "best scoring model"
_SUPERLATIVE = r"(?:most|least)\s+(?:[\w-]+ly\s+)?[\w-]+|best|top|first|last|worst|(?!(?:te|intere|reque|late|gue|che|fore)st\b)[a-z]{2,}est"
_BEST = re.compile(
    r"\bwhich\s+(?!papers?\b|works?\b|methods?\b|approach(?:es)?\b|stud(?:y|ies)\b)(?:[\w-]+\s+){0,8}?"
    rf"(?:was|is|were|are|ranks?|ranked|came|comes|performs?|performed|scored?|did|does)\s+(?:the\s+)?(?P<a>{_SUPERLATIVE})\b"
    r"|\bwhich\s+one\b(?:\s+\w+){0,3}?\s+(?P<b>first|best|on\s+top)\b"
    r"|\b(?P<c>(?:top|best)[- ]perform(?:er|ing)|(?:best|top|highest)[- ](?:scor|rank|rat)(?:ing|ed))\b",
    re.I,
)
_RANKING = re.compile(r"\b(?:best|top|first|highest|lowest|most|least|worst|strongest|weakest|leading|outperform\w*|"
                      r"surpass\w*|ranks?|ranked)\b", re.I)


def counted_alternatives(question: str) -> list[list[str]]:
    """The things an English "how many" or "number of" counts ("how many A100 GPUs were used" -> GPUs), each with the other names the
    question gives it ("how many tasks or questions" -> tasks, questions): a count of any of them answers it."""
    found = []
    for m in _HOW_MANY.finditer(question):
        if m.group(2).lower() in _NOT_COUNTED or _CHANGED.search(question[: m.start()]):
            continue
        others = _OR_ELSE.match(question, m.end())
        found.append([m.group(2), *([others.group(1)] if others else [])])
    return found


def counted_things(question: str) -> list[str]:
    """Every thing the question asks a count of, under each name it gives ("tasks or questions": both)."""
    return [thing for alternatives in counted_alternatives(question) for thing in alternatives]


def counts(text: str, thing: str, window: int) -> bool | None:
    """Does the text give a count of the thing (a number at most `window` words before it)? None: it never
    speaks of the thing, even a typo away ("questons" is questions), so the question may call it by another word."""
    wanted = _key(thing)
    tokens = _TOKEN.findall(text)
    spoken = [i for i, token in enumerate(tokens) if _spoken(_key(token), wanted)]
    if not spoken:
        return None
    return any(_COUNT.match(tokens[j].rstrip(".,")) for i in spoken for j in range(max(0, i - window), i))


def counts_any(text: str, things: Sequence[str], window: int) -> bool:
    """Does the text give a count of any of the things ("200 questions" for "tasks/questions")?"""
    return any(counts(text, thing, window) for thing in things)


def asked_best(question: str) -> str:
    """What the question asks to be named, when it asks which one came out best or worst ("least sycophantic")."""
    found = _BEST.search(question)
    if found is None:
        return ""
    return " ".join((found.group("a") or found.group("b") or "the top performer").split())


def names_best(text: str, own: Sequence[str]) -> bool:
    """Does a ranking sentence of the text name something other than the paper itself?"""
    keys = set().union(*(own_keys(label) for label in own))
    sentences = [text[start:end] for start, end in sentence_spans(text)]
    return any(_RANKING.search(s) and any(name_key(n) not in keys for n in name_candidates(s)) for s in sentences)


def unreported(question: str, texts: Sequence[str], own: Sequence[str], window: int, unspoken: bool = False) -> list[str]:
    """What the question asks that none of the texts reports, as the service says it ("the number of routers").
    `unspoken`: a count of a thing no text speaks of is unreported too ("how many A100 GPU hours"), not left unjudged."""
    missing = [f"the number of {things[0]}" for things in counted_alternatives(question)
               if not any(counts(text, thing, window) for text in texts for thing in things)
               and (unspoken or any(counts(text, thing, window) is False for text in texts for thing in things))]
    best = asked_best(question)
    if best and not any(names_best(text, own) for text in texts):
        missing.append(f"which one was {best}")
    measure = asked_measure(question)
    if measure and measures(texts, measure) is False:
        missing.append(f"the {' '.join(measure)}")
    return missing


# "What exact compression ratio does OSCAR achieve?": the measure whose figure is asked, the words before the question's verb
_MEASURE = re.compile(r"\bwhat\s+(?:exact\s+|precise\s+|specific\s+|actual\s+)?((?:[A-Za-z][\w-]*\s+){0,2}?[A-Za-z][\w-]*)"
                      r"\s+(?:does|did|do)\s+(?:\S+\s+){1,6}?(?:achieve|reach|get|obtain|report|attain|deliver|yield)\b", re.I)
_NOT_MEASURES = {"kind", "kinds", "type", "types", "sort", "number", "numbers", "result", "results", "figure", "figures",
                 "score", "scores", "performance", "gain", "gains", "improvement", "improvements", "benchmark", "benchmarks",
                 "dataset", "datasets", "model", "models", "task", "tasks", "problem", "problems", "goal", "goals"}
TYPO_LENGTH = 5  # a word this long may carry one typo ("compression ration" for "ratio", "questons" for "questions")


def asked_measure(question: str) -> list[str]:
    """The words of the measure whose figure a "what X does it achieve" question asks ("compression ratio"); none when it
    asks for results at large ("what performance", "what gains": any figure answers)."""
    found = _MEASURE.search(question)
    if found is None:
        return []
    words = found.group(1).split()
    return [] if any(w.lower() in _NOT_MEASURES for w in words) else words


def measures(texts: Sequence[str], measure: Sequence[str]) -> bool | None:
    """Does a sentence that speaks of the measure (each of its words, stemmed, a long one within one edit) give a figure?
    None: no sentence speaks of it, so the question may call it by another word."""
    keys = [_key(w) for w in measure]
    spoken = [s for text in texts for s in (text[a:b] for a, b in sentence_spans(text))
              if all(any(alike(k, _key(t)) for t in _TOKEN.findall(s)) for k in keys)]
    if not spoken:
        return None
    return any(states_number(s) for s in spoken)


def alike(wanted: str, token: str) -> bool:
    """The same word, or a long one within one edit: what a reader takes for a typo."""
    return wanted == token or (len(wanted) >= TYPO_LENGTH and OSA.distance(wanted, token, score_cutoff=1) <= 1)


def unnamed_kinds(question: str, texts: Sequence[str], own: Sequence[str]) -> list[str]:
    """The kinds of thing a "which" question asks the names of that the texts speak of and never name ("which six QA
    datasets": "on six QA datasets"), as the service says it ("the names of the datasets", "which model")."""
    return [f"the names of the {kind}" if kind.lower().endswith("s") else f"which {kind}"
            for kind, given in asked_kinds(question) if names_kind(texts, kind, [*own, *given]) is False]


# "Which six QA datasets does it evaluate on?", "which 7B model did it fine-tune": the thing whose name is asked,
# the last word before the question's verb (not papers or methods, which ask for papers)
_WHICH_KIND = re.compile(r"\bwhich\s+((?:[\w-]+\s+){0,3}?)([A-Za-z][\w-]*)\s+(?:does|do|did|is|are|was|were|has|have|had"
                         # or a participle of the experiment, in a query without its verb: "which base LLMs evaluated"
                         r"|evaluated|tested|used|compared|trained|fine-tuned|benchmarked)\b"
                         # an imperative asking the names: "Name the six LLMs that CAST was evaluated with"
                         r"|^\W*(?:name|list|tell\s+me)\s+(?:all\s+)?the\s+((?:[\w-]+\s+){0,3}?)([A-Za-z][\w-]*s)\b(?!\s+of\b)",
                         re.I)
_NOT_KINDS = {"paper", "papers", "work", "works", "method", "methods", "approach", "approaches", "study", "studies", "one",
              "ones", "of", "part", "parts", "way", "ways", "aspect", "aspects"}


def asked_kinds(question: str) -> list[tuple[str, list[str]]]:
    """The kinds of thing whose names a "which" question asks ("datasets", "model"), each with the words the question
    gives it ("six QA"): those are of the kind, not names of its things."""
    found = [(m.group(2) or m.group(4), (m.group(1) or m.group(3) or "").split()) for m in _WHICH_KIND.finditer(question)]
    return [(kind, given) for kind, given in found if kind.lower() not in _NOT_KINDS and not any(w.lower() in _NOT_KINDS for w in given)]


def names_kind(texts: Sequence[str], kind: str, own: Sequence[str]) -> bool | None:
    """Does a sentence that speaks of the kind ("six QA datasets") also name one, other than those in `own` (the papers'
    labels and the question's own words for the kind)? None: no sentence speaks of it, so the question may call it
    by another word."""
    wanted, keys = _key(kind), set().union(*(own_keys(label) for label in own))
    spoken = [s for text in texts for s in (text[a:b] for a, b in sentence_spans(text))
              if any(_key(token) == wanted for token in _TOKEN.findall(s))]
    if not spoken:
        return None
    defined = [pair for text in texts for pair in defined_in(text)]
    # no name of a thing: the kind itself (LLMs), the words spelling out a short form (Large Language Models), and a
    # short form of ordinary words ("uncertainty quantification (UQ)": a concept, where "Natural Questions (NQ)" is a name)
    spelt = {_key(w) for _, long in defined for w in long.split()}
    concepts = {_key(short) for short, long in defined if long.islower()}
    return any(name_key(n) not in keys and _key(n) != wanted and _key(n) not in spelt | concepts
               for s in spoken for n in _names_in(s))


def _names_in(sentence: str) -> set[str]:
    """Name-shaped words, and capitalised words past the sentence's first ("Raman thermometry", "on Llama"): a name."""
    tokens = _TOKEN.findall(sentence)
    return name_candidates(sentence) | {t.strip(".,") for t in tokens[1:] if t[:1].isupper()}


def _spoken(key: str, wanted: str) -> bool:
    """The text's word is the counted thing (`alike`), the text's word too long enough to carry a typo (`TYPO_LENGTH`)."""
    return alike(wanted, key) and (key == wanted or len(key) >= TYPO_LENGTH)


def _key(word: str) -> str:
    """The word as BM25 stems it, a plural's s off first (the stemmer keeps "GPUs" apart from "GPU")."""
    return stem(word.strip(".,").rstrip("sS"))
