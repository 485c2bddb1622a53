"""Example questions for the chat page's first visit, drawn from the papers that are loaded: their
names (a label or a title's word before its colon that looks like a name) or, failing that, their titles."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..records import Paper

EXAMPLES = 4  # how many the page offers: enough to show the range, few enough to read at a glance
TITLE_CHARS = 90  # a title longer than this makes an unreadable example question
_NAME = re.compile(r"^(?=.*[A-Z0-9²³])[\w²³][\w²³.+-]{1,30}$")  # one token with a capital or a digit: RouterArena, K²-Agent
TEMPLATES = ("What is {name}?", "What problem does {name} address?", "How is {name} evaluated?",
             "What are the main results of {name}?")


@dataclass(frozen=True)
class Example:
    """A question the page offers, and the paper it was drawn from."""

    question: str
    paper_id: str
    corpus: str

    def to_dict(self) -> dict:
        return {"question": self.question, "paper_id": self.paper_id, "corpus": self.corpus}


def paper_name(paper: Paper) -> str:
    """The name a paper goes by ("RouterArena", "Murmur"), or "" when its label and title give none."""
    for candidate in (paper.title.split(":", 1)[0].strip() if ":" in paper.title else "", paper.label):
        if candidate and " " not in candidate and _NAME.match(candidate) and not candidate.isdigit():
            return candidate
    return ""


def _question(paper: Paper, turn: int) -> str:
    name = paper_name(paper)
    if name:
        return TEMPLATES[turn % len(TEMPLATES)].format(name=name)
    if paper.title and len(paper.title) <= TITLE_CHARS:
        return f"What does the paper “{paper.title}” find?"
    return ""


def example_questions(papers: Iterable[tuple[str, Paper]], count: int = EXAMPLES) -> list[Example]:
    """`count` questions about papers spread over the corpus (named papers first), the same on every visit."""
    pool = [(corpus, paper) for corpus, paper in papers]
    named = [entry for entry in pool if paper_name(entry[1])]
    titled = [entry for entry in pool if not paper_name(entry[1]) and entry[1].title and len(entry[1].title) <= TITLE_CHARS]
    spread = named[:: max(1, len(named) // count)] if len(named) >= count else named
    picked = (spread + titled)[:count]
    return [Example(_question(paper, turn), paper.id, corpus) for turn, (corpus, paper) in enumerate(picked)]
