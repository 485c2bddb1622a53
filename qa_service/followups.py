"""Follow-up questions: when one depends on the conversation, and the offline way to make it standalone."""

from __future__ import annotations

import re
from typing import Sequence

from .labels import question_names
from .records import Turn

_PRONOUNS = re.compile(r"\b(?:it|its|they|their|them|this|that|these|those|the paper|the method|the same)\b", re.I)


def standalone_question(question: str, history: Sequence[Turn]) -> str:
    """A follow-up ('and how does it compare?') borrows the names of the previous question."""
    if not history or question_names(question) and not _PRONOUNS.search(question):
        return question
    for turn in reversed(history):
        if turn.role == "user":
            names = sorted(question_names(turn.content) - question_names(question))
            if names:
                return f"{question} ({', '.join(names)})"
    return question
