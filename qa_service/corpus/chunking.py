"""Sentence-aligned, token-bounded chunks with offsets into the cleaned text."""

from __future__ import annotations

from typing import Callable

from ..records import Chunk
from .textclean import sentence_spans

TokenCounter = Callable[[str], int]


def _longest_fit(text: str, start: int, end: int, max_tokens: int, count: TokenCounter) -> int:
    """Largest cut in (start, end] with count(text[start:cut]) <= max_tokens; at least one character."""
    low, high = start + 1, end
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[start:middle]) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return low


def _split_long(text: str, start: int, end: int, max_tokens: int, count: TokenCounter) -> list[tuple[int, int]]:
    """Cut a sentence longer than the window at word boundaries."""
    pieces: list[tuple[int, int]] = []
    piece_start = start
    last_good = None
    pos = start
    while pos < end:
        nxt = text.find(" ", pos + 1, end)
        nxt = end if nxt == -1 else nxt
        if count(text[piece_start:nxt]) > max_tokens and last_good is not None:
            pieces.append((piece_start, last_good))
            piece_start = last_good + 1
            last_good = None
            continue
        if count(text[piece_start:nxt]) > max_tokens:  # one huge "word": the longest prefix that fits
            cut = _longest_fit(text, piece_start, nxt, max_tokens, count)
            pieces.append((piece_start, cut))
            piece_start = pos = cut
            continue
        last_good = nxt
        pos = nxt
    if piece_start < end:
        pieces.append((piece_start, end))
    return [(s, e) for s, e in pieces if text[s:e].strip()]


def chunk_text(
    paper_id: str,
    text: str,
    count: TokenCounter,
    sentences_per_chunk: int = 3,
    max_tokens: int = 180,
) -> list[Chunk]:
    """Group consecutive sentences, at most `sentences_per_chunk` and `max_tokens` each."""
    units: list[tuple[int, int]] = []
    for start, end in sentence_spans(text):
        if count(text[start:end]) > max_tokens:
            units.extend(_split_long(text, start, end, max_tokens, count))
        else:
            units.append((start, end))
    chunks: list[Chunk] = []
    group: list[tuple[int, int]] = []

    def flush() -> None:
        if group:
            start, end = group[0][0], group[-1][1]
            chunks.append(Chunk(paper_id, len(chunks), start, end, text[start:end], count(text[start:end])))
            group.clear()

    for unit in units:
        candidate = text[(group[0][0] if group else unit[0]) : unit[1]]
        if group and (len(group) >= sentences_per_chunk or count(candidate) > max_tokens):
            flush()
        group.append(unit)
    flush()
    return chunks
