"""Request inputs checked once, with the same limits for every route and the CLI."""

from __future__ import annotations

from typing import Any

from .config import Settings
from .errors import BadRequest, PayloadTooLarge
from .questions import clean_question
from .records import Turn


def unicode_text(text: str, what: str) -> str:
    """Text that can be written as UTF-8. JSON lets a client send half of a surrogate pair
    ("\\ud800", an emoji cut in two), and argv bytes that are not UTF-8 arrive the same way;
    no tokenizer, model client or JSON response can encode it, and replacing it would answer
    a question nobody asked, so the client is told."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadRequest(
            f"{what} is not valid Unicode: it holds a lone surrogate ({text[exc.start]!a} at character {exc.start}); "
            f"send UTF-8, or \\u escapes in high-low pairs"
        ) from None
    return text


def question_text(question: Any, settings: Settings, what: str = "'question'") -> str:
    """A non-empty string within the length limit, stripped.

    The limit applies to the question as it is searched (spaces collapsed, markup dropped):
    padding costs nothing, and what is searched is never longer than the limit."""
    if question is None:
        raise BadRequest(f"{what} is required")
    if not isinstance(question, str):
        raise BadRequest(f"{what} must be a string")
    question = unicode_text(question, what).strip()
    if not question:
        raise BadRequest(f"{what} must not be empty")
    if len(clean_question(question)) > settings.max_question_chars:
        raise PayloadTooLarge(f"{what} is longer than {settings.max_question_chars} characters (counted as searched: spaces collapsed, markup removed)")
    return question


def k_value(k: Any, settings: Settings) -> int:
    """A whole number of papers within `max_k` (callers pass the default when none was given)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= settings.max_k:
        raise BadRequest(f"'k' must be a whole number from 1 to {settings.max_k}")
    return k


def history_turns(history: Any, settings: Settings) -> list[Turn]:
    """[{role: user|assistant, content: str}, ...]: at most `max_history_turns`, each within `max_history_chars`."""
    if history is None:
        return []
    if not isinstance(history, list):
        raise BadRequest("'history' must be a list of {role, content} turns")
    if len(history) > settings.max_history_turns:
        raise BadRequest(f"'history' has more than {settings.max_history_turns} turns")
    turns = []
    for i, turn in enumerate(history):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant") or not isinstance(turn.get("content"), str):
            raise BadRequest(f"'history[{i}]' must be {{\"role\": \"user\"|\"assistant\", \"content\": string}}")
        if len(turn["content"]) > settings.max_history_chars:
            raise PayloadTooLarge(f"'history[{i}].content' is longer than {settings.max_history_chars} characters")
        turns.append(Turn(turn["role"], unicode_text(turn["content"], f"'history[{i}].content'")))
    return turns
