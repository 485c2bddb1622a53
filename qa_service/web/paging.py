"""Pages of /api/papers: `limit` and an opaque `cursor`, so that a client of a large corpus reads it in parts.

The cursor names the last paper of the page before (its corpus and id), not a position: papers
added or removed meanwhile shift no page. Without `limit` the whole list comes back, as before.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..config import Settings
from ..errors import BadRequest


@dataclass(frozen=True)
class PageRequest:
    """At most `limit` papers (0: all of them), after the paper `after` names ((corpus, id); None: from the start)."""

    limit: int = 0
    after: tuple[str, str] | None = None


def encode_cursor(corpus: str, paper_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([corpus, paper_id], ensure_ascii=False).encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        value = None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(part, str) for part in value)):
        raise BadRequest("'cursor' is not a cursor this service gave: pass the `next_cursor` of the page before, "
                         "or leave it out to start from the first paper", param="cursor")
    return value[0], value[1]


def page_request(args: Mapping[str, str], settings: Settings) -> PageRequest:
    """?limit= (1..max_page_papers) and ?cursor=, checked; a cursor without a limit pages by max_page_papers."""
    raw_limit, cursor = args.get("limit"), args.get("cursor")
    limit = 0
    if raw_limit is not None:
        if not (raw_limit.isascii() and raw_limit.isdigit()) or not 1 <= int(raw_limit) <= settings.max_page_papers:
            raise BadRequest(f"'limit' must be a whole number from 1 to {settings.max_page_papers}", param="limit")
        limit = int(raw_limit)
    after = _decode_cursor(cursor) if cursor is not None else None  # an empty one too is no cursor of ours
    if after is not None and not limit:
        limit = settings.max_page_papers
    return PageRequest(limit, after)


def cut(entries: Sequence[Any], page: PageRequest, key: Any) -> tuple[list[Any], str | None]:
    """The page's entries (in the list's order) and the cursor of the next page (None after the last).

    `key(entry)` is the entry's (corpus, id). A cursor whose paper is gone is refused: its place is unknown."""
    start = 0
    if page.after is not None:
        keys = [key(entry) for entry in entries]
        if page.after not in keys:
            raise BadRequest("the paper this cursor continues after is no longer listed (removed, or other filters): "
                             "list again from the start, without 'cursor'", param="cursor")
        start = keys.index(page.after) + 1
    if not page.limit:
        return list(entries[start:]), None
    shown = list(entries[start:start + page.limit])
    more = start + page.limit < len(entries)
    return shown, encode_cursor(*key(shown[-1])) if more and shown else None
