"""Request inputs checked once, with the same limits for every route and the CLI."""

from __future__ import annotations

import re
from typing import Any

from .config import Settings
from .errors import BadRequest, PayloadTooLarge
from .questions import clean_question
from .records import Turn

# One character that shows: not a space, a control character or an invisible format mark (zero-width
# space, bidi controls, BOM). One explicit class, no \s or \S: those mean different sets in Python
# (which counts U+001C-U+001F as spaces), ECMAScript and Rust, so that "\u001d" matched the OpenAPI
# document's pattern and was refused here. The document's pattern is this string.
VISIBLE_PATTERN = (
    "[^\\u0000-\\u0020\\u007f-\\u00a0\\u00ad\\u1680\\u180e\\u2000-\\u200f\\u2028-\\u202f"
    "\\u205f-\\u2064\\u2066-\\u206f\\u3000\\ufeff]"
)
_VISIBLE = re.compile(VISIBLE_PATTERN)


def has_visible(text: str) -> bool:
    """Does the text hold a character that shows (see VISIBLE_PATTERN)?"""
    return _VISIBLE.search(text) is not None


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
    if not has_visible(question):
        raise BadRequest(f"{what} must not be empty: it needs a visible character, not only spaces, controls or invisible marks")
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


def paper_filter(query: str, settings: Settings) -> str:
    """The /api/papers ?q= filter: at most `max_filter_chars`, matched case-blind."""
    if len(query) > settings.max_filter_chars:
        raise BadRequest(f"'q' is longer than {settings.max_filter_chars} characters; a filter matches ids, labels, titles and abstracts", param="q")
    return query.strip().lower()


# -- metadata filters as JSON Schema (filters.py parses them) --------------------------------

#: A year written as text (/v1 metadata, query strings): 1 to 9999, leading zeros allowed; matched whole.
YEAR_PATTERN = "^0*[1-9][0-9]{0,3}$"


def filter_text_schema(settings: Settings) -> dict:
    """One text value of a metadata filter (venue, author, keyword), as filters.parse_filters checks it."""
    return {"type": "string", "minLength": 1, "maxLength": settings.max_filter_chars, "pattern": VISIBLE_PATTERN}


def filters_schema(settings: Settings) -> dict:
    """A request's `filters` object: each field one value or a list of them, AND across fields, OR within one."""
    def one_or_list(item: dict) -> dict:
        return {"oneOf": [item, {"type": "array", "minItems": 1, "maxItems": settings.max_filter_values, "items": item}]}
    year = {"type": "integer", "minimum": 1, "maximum": 9999}
    text = filter_text_schema(settings)
    years = one_or_list(year)
    years["oneOf"].append({"type": "object", "additionalProperties": False, "minProperties": 1,
                           "description": "a range, both ends included (one that runs backwards holds no year)",
                           "properties": {"from": year, "to": year}})
    return {"type": "object", "nullable": True, "additionalProperties": False,
            "description": "Metadata filters, applied inside retrieval: a paper must match every field given, and any value of a list. "
                           "A venue matches word by word at either end: 'ICLR 2025' is also 'ICLR 2025 Poster' and 'Submitted to ICLR 2025'.",
            "properties": {"year": years, "venue": one_or_list(text), "author": one_or_list(text), "keyword": one_or_list(text)}}
