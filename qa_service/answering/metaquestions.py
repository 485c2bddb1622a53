"""Questions about metadata, answered from the paper records: "Which papers by Ada Marchetti...?",
"How many ICLR 2026 papers are about speech?".

A question is one when it asks for papers (which, how many, list...) and names an author, a
venue or a year that the records of the scope hold: the full name as written in some paper's
authors (accents and case aside), a venue, a year. Names are looked up, never guessed: a
question that names nobody the records know goes the usual way (retrieval). A topic ("about
speech", "on unlearning") keeps the papers whose abstract, title or keywords hold every content
term of it (BM25's analysis: stemmed, stop words out). The answer lists the papers, each cited
with the sentence of its abstract that names the topic (else its first), and counts the rest
beyond `metadata_list_max`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ..store.corpora import Part, Scope
from ..store.filters import FIELDS, MetadataFilter, normalize
from ..store.lexical import analyze, content_terms
from ..questions import AUTHORS, asking_part
from ..records import Citation, Paper, PaperHit, SourceRef
from ..corpus.textclean import sentence_spans

_ASKS_FOR_PAPERS = re.compile(
    r"^\W*(?:how\s+many|which|what|list|show|name|give|find)\b.*\b(?:papers?|works?|articles?|publications?|submissions?|abstracts?)\b",
    re.I | re.S,
)
_TOPIC = re.compile(
    r"\b(?:about|on|regarding|concerning|addressing|address|studying|study|tackling|tackle)\s+(?P<topic>.+?)"
    r"(?=\s+(?:by|from|in|at|published|written|authored|accepted|and\s+(?:by|from|in|at))\b|[?.!]|$)",
    re.I | re.S,
)
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
_YEAR = re.compile(r"^\d{4}$")
MAX_NAME_WORDS = 6  # an author's or venue's name in words, at most


@dataclass(frozen=True)
class MetadataQuestion:
    """What a question about metadata asks: papers matching these record fields, and a topic."""

    filter: MetadataFilter
    topic: str = ""
    counting: bool = False


@dataclass
class Listing:
    """The answer from the records: its text, the papers it cites and the sources it lists."""

    text: str
    citations: list[Citation] = field(default_factory=list)
    sources: list[SourceRef] = field(default_factory=list)
    total: int = 0


def read_question(question: str, scope: Scope) -> MetadataQuestion | None:
    """The metadata a question asks about, when it names an author, venue or year of the scope's records."""
    if not _ASKS_FOR_PAPERS.search(question):
        return None
    words = _WORD.findall(normalize(question).replace("'s ", " ").replace("\u2019s ", " "))
    authors, venues, years = {}, {}, set()
    for part in scope.parts:
        known = scope.registry.known(part)
        authors.update(known.authors)
        venues.update(known.venues)
        years |= known.years
    found: dict[str, list] = {name: [] for name in FIELDS}
    used = [False] * len(words)
    for size in range(min(MAX_NAME_WORDS, len(words)), 0, -1):  # longest names first: "iclr 2026" before "iclr"
        for at in range(len(words) - size + 1):
            if any(used[at : at + size]):
                continue
            phrase = " ".join(words[at : at + size])
            if size >= 2 and phrase in authors:
                found["author"].append(authors[phrase])
            elif phrase in venues and not _YEAR.match(phrase):
                found["venue"].append(venues[phrase])
            else:
                continue
            used[at : at + size] = [True] * size
    for at, word in enumerate(words):
        if not used[at] and _YEAR.match(word) and int(word) in years:
            found["year"].append(int(word))
    if not any(found.values()):
        return None
    topic = _TOPIC.search(question)
    return MetadataQuestion(
        MetadataFilter(year=tuple(dict.fromkeys(found["year"])), venue=tuple(dict.fromkeys(found["venue"])),
                       author=tuple(dict.fromkeys(found["author"])), keyword=tuple(dict.fromkeys(found["keyword"]))),
        topic.group("topic").strip() if topic else "",
        counting=question.lower().lstrip().startswith("how many"),
    )


def answer(asked: MetadataQuestion, scope: Scope, limit: int) -> Listing:
    """The papers of the scope (its filter applied) that match the question's fields and topic, listed and cited."""
    terms = content_terms(asked.topic) if asked.topic else set()
    matching = [(name, paper) for name, paper in scope.records() if asked.filter.matches(paper)]
    if terms:
        matching = _about(matching, terms, scope)
    described = _description(asked, terms)
    whole = "The corpus holds" if len(scope.parts) == 1 else "These corpora hold"
    if not matching:
        return Listing(f"{whole} no paper {described}.")
    shown = matching[:limit]
    texts = _texts(shown, scope)
    citations, sources, named = [], [], []
    for n, (corpus, paper) in enumerate(shown, start=1):
        text = texts.get(paper.id, "")
        start, end = _first_sentence(text, lambda sentence: bool(terms & set(analyze(sentence))))
        citations.append(Citation(n, paper.id, paper.label, text[start:end], start, end, 1.0, True, 0, corpus))
        sources.append(SourceRef(n, paper.id, paper.label, corpus))
        named.append(f"{paper.label} [{n}]")
    more = len(matching) - len(shown)
    listed = ", ".join(named) + f", and {more} more" if more else _join(named)
    count = f"{len(matching)} paper{'s' if len(matching) != 1 else ''}"
    return Listing(f"{whole} {count} {described}: {listed}.", citations, sources, len(matching))


def authorship(question: str, about: list[PaperHit]) -> Listing | None:
    """"Who wrote RouterArena?": the authors the paper's metadata lists, each paper cited with the first
    sentence of its abstract that names it (else its first). None when the question does not ask who
    wrote it, or a paper it is about has no authors in its metadata (then the abstract must say)."""
    if not about or not AUTHORS.asked.search(asking_part(question)) or not all(h.authors for h in about):
        return None
    citations, sources, lines = [], [], []
    for n, hit in enumerate(about, start=1):
        start, end = _first_sentence(hit.text, lambda sentence: hit.label.lower() in sentence.lower())
        citations.append(Citation(n, hit.paper_id, hit.label, hit.text[start:end], start, end, 1.0, True, 0, hit.corpus))
        sources.append(SourceRef(n, hit.paper_id, hit.label, hit.corpus))
        lines.append(f"{hit.label} is by {_join(hit.authors)} [{n}].")
    return Listing(" ".join(lines), citations, sources, len(about))


def _about(matching: list[tuple[str, Paper]], terms: set[str], scope: Scope) -> list[tuple[str, Paper]]:
    """The papers whose abstract (read off BM25), title or keywords hold every term of the topic."""
    kept = []
    by_part: dict[str, list[Paper]] = {}
    for name, paper in matching:
        by_part.setdefault(name, []).append(paper)
    inside: set[str] = set()
    for name, papers in by_part.items():
        lexical = scope.part_of(name).index.load_lexical()
        ids = [p.id for p in papers]
        present = lexical.presence(terms, ids)
        inside |= {pid for i, pid in enumerate(ids) if all(present[t][i] for t in terms)}
    for name, paper in matching:
        own = set(analyze(" ".join([paper.title, *paper.keywords])))
        if paper.id in inside or terms <= own:
            kept.append((name, paper))
    return kept


def _texts(shown: list[tuple[str, Paper]], scope: Scope) -> dict[str, str]:
    texts: dict[str, str] = {}
    by_part: dict[str, list[str]] = {}
    for name, paper in shown:
        by_part.setdefault(name, []).append(paper.id)
    for name, ids in by_part.items():
        part: Part = scope.part_of(name)
        texts.update({pid: paper.text for pid, paper in part.index.get_papers(ids).items()})
    return texts


def _first_sentence(text: str, fits: Callable[[str], bool]) -> tuple[int, int]:
    """The span of the first sentence that fits, else of the first sentence: what a citation from the records quotes."""
    spans = sentence_spans(text) or [(0, len(text))]
    return next(((start, end) for start, end in spans if fits(text[start:end])), spans[0])


def _description(asked: MetadataQuestion, terms: set[str]) -> str:
    parts = []
    if asked.filter.author:
        parts.append("by " + " or ".join(asked.filter.author))
    if asked.filter.venue or asked.filter.year:
        parts.append("from " + " ".join([*asked.filter.venue, *(str(y) for y in asked.filter.year)]))
    if asked.topic and terms:
        parts.append(f"about {asked.topic}")
    return " ".join(parts)


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
