"""Follow-up questions: when one depends on the conversation, and the offline way to make it standalone."""

from __future__ import annotations

import re
from typing import Sequence

from ..corpus.labels import question_names
from ..records import Turn

_PRONOUNS = re.compile(r"\b(?:it|its|they|their|them|this|that|these|those|the paper|the method|the same)\b", re.I)


def standalone_question(question: str, history: Sequence[Turn], max_chars: int | None = None) -> str:
    """A follow-up ('and how does it compare?') borrows the names of the previous question."""
    if not history or question_names(question) and not _PRONOUNS.search(question):
        return question
    for turn in reversed(history):
        if turn.role == "user":
            names = sorted(question_names(turn.content) - question_names(question))
            if names:
                return _with_names(question, names, max_chars)
    return question


def _with_names(question: str, names: list[str], max_chars: int | None) -> str:
    """'question (A, B)' with the names that fit in `max_chars`: an earlier turn may hold
    far more names than a question may be long."""
    kept: list[str] = []
    length = len(question) + len(" ()")
    for name in names:
        length += len(name) + (len(", ") if kept else 0)
        if max_chars is not None and length > max_chars:
            break
        kept.append(name)
    return f"{question} ({', '.join(kept)})" if kept else question
