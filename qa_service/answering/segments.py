"""A model's answer cut into the units a reader checks, the way models write: sentences, list
items, headings, table rows and code blocks, each with its exact place in the text.

Markers belong to the sentence before them, written before the period ("... process [1].") or
after it ("... process. [1]", "... process.[1]"). A lead-in ending in ":", a heading, a table's
header and separator rows and code are structure, not claims. The model's own sentences about the
sources ("The provided abstracts do not mention ...") and its closing offers to the reader are not
claims about the papers either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A source number has at most MARKER_DIGITS digits: a prompt holds a few dozen sources, and a longer
# run of digits in brackets ("[1111…]", in an abstract or a reply) is text, not a marker (Python's
# int() refuses a string of more than 4,300 digits). The page's MARKER pattern says the same.
MARKER_DIGITS = 4
MARKER = re.compile(rf"(?<!\s)\s*\[(\d{{1,{MARKER_DIGITS}}}(?:\s*[-–,]\s*\d{{1,{MARKER_DIGITS}}})*)\]")
_ONE_MARKER = rf"(?:\s*\[\d{{1,{MARKER_DIGITS}}}(?:\s*[-–,]\s*\d{{1,{MARKER_DIGITS}}})*\])"
_MARKERS = _ONE_MARKER + "*"
# a sentence ends at . ! ? (and the quotes or brackets that close it), then its markers, then space or the end
_END = re.compile(rf"[.!?][\"'”’)]*{_MARKERS}(?=\s|$)")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "Fig.", "Eq.", "cf.", "approx.", "Sec.", "No.", "resp.", "al.")
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•+]|\d{1,3}[.)])[ \t]+")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
# a line that is all bold ("**Key findings**", "__Results:__", "**WideSearch [1]**", "**Go-Browse** [3]"): a heading as
# models write them, its markers naming the source the section is about, not a claim
_BOLD_LINE = re.compile(rf"[ \t]*(\*\*|__)[^*_\[\]\n]{{1,80}}?{_MARKERS}:?\1{_MARKERS}:?[ \t]*")
# an item's bold label before its sentence ("- **Tool-call rewards.** TRM is ...", "**Results**: ..."): the model's
# heading for the item, a unit of its own and no claim; a label with a figure in it ("**3x faster.**") is checked with the rest
# (a digit inside a name, "CUDA-L1", "GPT-4", "Qwen2.5", is part of the label; one that opens a word, "3x", "40%", a figure)
# (a bold run closed before its colon, "**A long paper title**:", may be as long as a title: `LABEL_CHARS`)
_LABEL_TEXT = r"(?:[^*_\n\d]|(?<=[^\s(*_\[])\d){1,%d}?"
LABEL_CHARS = 200
_LABEL = re.compile(rf"[ \t]*(?:(?:[-*•+]|\d{{1,3}}[.)])[ \t]+)?(\*\*|__)(?:{_LABEL_TEXT % 80}[.:]\1|{_LABEL_TEXT % LABEL_CHARS}\1:)"
                    r"(?=\s+\S)")
_TABLE_RULE = re.compile(r"\|?[ \t]*:?-{2,}:?[ \t]*(?:\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
# the model speaking to the reader, not about the papers (per-language function words: English)
_TO_READER = re.compile(r"\b(?:you|your|let me|let's|i can|i'd|i will|i'll|here is|here's|here are)\b", re.I)
# the model saying the sources do not answer: a negation and the evidence it was given, or "I cannot find"; what lies
# between is bounded (a sentence's length) so that a long reply without a period costs a linear scan, not a square one
_DECLINES = re.compile(
    r"\b(?:(?:abstracts?|sources?|papers?|context|documents?|excerpts?|passages?|provided (?:text|material|information))\b"
    r"[^.]{0,120}?\b(?:do(?:es)?\s+not|don't|doesn't|did\s+not|didn't|never|neither|contain\s+no|make\s+no|give\s+no|say\s+nothing)\b"
    r"|\bi\s+(?:cannot|can't|could\s+not|couldn't|am\s+unable\s+to|was\s+unable\s+to|do\s+not|don't)\s+"
    r"(?:find|see|locate|determine|answer|tell|identify)\b"
    r"|\b(?:there\s+is|there's|i\s+(?:have|found))\s+no\s+(?:information|mention|evidence|data|details?)\b"
    r"|\bno\s+(?:information|mention|details?|figures?)\b[^.]{0,120}\b(?:in|from)\s+the\s+(?:provided\s+)?(?:abstracts?|sources?|papers?|context)\b"
    r"|\b(?:none|neither)\s+of\s+(?:the|these|those)?\s*(?:[\w-]+\s+){0,3}?(?:abstracts?|sources?|papers?|documents?|excerpts?)\b"
    # "Neither abstract reports ...", "No abstract mentions ...", "No retrieved paper gives ..."
    r"|\b(?:neither|no)\s+(?:[\w-]+\s+){0,2}?(?:abstract|source|paper|document|excerpt)s?\s+(?:\w+\s+)?"
    r"(?:reports?|mentions?|discuss(?:es)?|provides?|gives?|states?|compares?|describes?|address(?:es)?|evaluates?|covers?|includes?"
    r"|specif(?:y|ies)|measures?|studies|says?)\b"
    # "... so they provide no evidence on clustering", "offer no figures"
    r"|\b(?:provide|provides|give|gives|offer|offers|contain|contains|include|includes|report|reports)\s+no\s+"
    r"(?:\w+\s+)?(?:evidence|information|data|results?|details?|figures?|numbers?|comparisons?|mention)\b"
    # "This is not mentioned in the abstracts", "not covered by the retrieved papers"
    r"|\b(?:is|are|was|were|isn't|aren't)\s+not\s+(?:\w+\s+)?(?:mentioned|reported|discussed|stated|specified|given|provided|covered"
    r"|described|addressed|included)\s+(?:in|by)\s+(?:the|any|either|these|those)\b"
    r"|\b(?:abstracts?|sources?|papers?)\s+(?:are|is)\s+silent\b|\bunclear\s+from\s+the\s+(?:provided\s+)?(?:abstracts?|sources?|papers?)\b"
    r"|\b(?:not\s+possible|impossible)\s+to\s+(?:determine|say|tell|answer|compare|know)\b"
    r"|\bi\s+(?:do\s+not|don't)\s+have\s+(?:any\s+)?(?:information|data|details?|evidence)\b)",
    re.I,
)
# a sentence naming its source as the one that is silent: "The SERE abstract [2] does not report per-GPU results."
_SOURCE_SILENT = re.compile(
    rf"(?:^\W*(?:the\s+)?(?:\S+\s+){{0,3}}?(?:abstract|paper|source|study|work){_MARKERS}|\b(?:abstract|paper|source|study|work){_ONE_MARKER}+)"
    r"\s+(?:[^.]{0,80}?\band\s+)?(?:does|did)\s+not\s+"
    r"(?:report|mention|discuss|address|study|provide|give|include|cover|describe|state|evaluate|compare|consider|measure)\b",
    re.I,
)


@dataclass
class Unit:
    """One unit of the answer: text[start:end] as written, what it is, and the part to check."""

    start: int
    end: int
    text: str
    structure: bool = False  # a heading, lead-in, table header or rule, code: nothing to check
    claim: str = ""  # the words to check: markers, list bullets and table pipes taken out
    cites: list[int] = field(default_factory=list)
    why: str = ""  # for structure: what it is
    pieces: list[tuple[str, list[int]]] = field(default_factory=list)  # markers inside it: each stretch and its own


def pieces(written: str) -> list[tuple[str, list[int]]]:
    """A sentence with markers inside it ("A does x [1], while B does y [2].") cut after each run of them:
    each stretch with the sources its own markers name. Empty when every stretch names the same sources."""
    out: list[tuple[str, list[int]]] = []
    at = 0
    for match in MARKER.finditer(written):
        stretch = written[at:match.start()]
        if out and not stretch.strip(" ,;"):  # "[1][2]": one run of markers
            out[-1][1].extend(n for n in parse_numbers(match.group(1)) if n not in out[-1][1])
        else:
            out.append((stretch.strip(" ,;"), parse_numbers(match.group(1))))
        at = match.end()
    tail = written[at:].strip(" .,;")
    if tail:
        out.append((tail, cited(written)))  # words after the last marker: for every source it names
    return out if len({tuple(sorted(numbers)) for _, numbers in out}) > 1 else []  # one source throughout: one claim


def parse_numbers(marker: str) -> list[int]:
    """'1', '1, 3', '2-4' -> [1], [1, 3], [2, 3, 4]."""
    numbers: list[int] = []
    for part in re.split(r"\s*,\s*", marker):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and int(bounds[0]) <= int(bounds[1]) and int(bounds[1]) - int(bounds[0]) < 50:
            numbers.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        else:
            numbers.extend(int(b) for b in bounds)
    return list(dict.fromkeys(numbers))


def cited(text: str) -> list[int]:
    """Every source number the text's markers name, in order, once each."""
    return list(dict.fromkeys(n for m in MARKER.finditer(text) for n in parse_numbers(m.group(1))))


def is_item_label(label: str) -> bool:
    """Can this paper label open a list item in bold ("- **CUDA-L1**: ...") and be read back as the item's label?"""
    return bool(label) and not {"[", "]"} & set(label) and _LABEL.match(f"- **{label}**: x") is not None


def declines(text: str) -> bool:
    """Does this sentence say the sources do not answer ("The provided abstracts do not mention ...")?"""
    return bool(_DECLINES.search(MARKER.sub("", text)))


def says_silent(text: str) -> bool:
    """Does this sentence say that the source it cites is silent on something? The model's word on what is absent,
    like a refusal: not a claim the source's quotes could state."""
    return bool(_SOURCE_SILENT.search(text))


def to_reader(text: str) -> bool:
    """An offer or aside to the reader ("Let me know if ...", "Here is a summary"), not a claim."""
    return bool(_TO_READER.search(text))


def split_units(answer: str) -> list[Unit]:
    """The answer's units in order; answer[u.start:u.end] == u.text for each."""
    units: list[Unit] = []
    lines = _lines(answer)
    i = 0
    while i < len(lines):
        start, end = lines[i]
        line = answer[start:end]
        if _FENCE.match(line):  # a code block, fences included, is one unit
            j = i + 1
            while j < len(lines) and not _FENCE.match(answer[lines[j][0]:lines[j][1]]):
                j += 1
            j = min(j, len(lines) - 1)
            units.append(_unit(answer, start, lines[j][1], "code"))
            i = j + 1
            continue
        if _HEADING.match(line) or _BOLD_LINE.fullmatch(line):
            units.append(_unit(answer, start, end, "a heading"))
        elif line.lstrip().startswith("|"):
            header = i + 1 < len(lines) and bool(_TABLE_RULE.fullmatch(answer[lines[i + 1][0]:lines[i + 1][1]]))
            rule = bool(_TABLE_RULE.fullmatch(line))
            units.append(_unit(answer, start, end, "a table header" if header else "a table rule" if rule else ""))
        elif _LIST_ITEM.match(line):
            units.extend(_sentences(answer, start, end))
        else:  # a paragraph runs on until a blank line or a line that starts something else
            j = i
            while j + 1 < len(lines) and _plain(answer[lines[j + 1][0]:lines[j + 1][1]]) and lines[j + 1][0] == lines[j][1] + 1:
                j += 1
            units.extend(_sentences(answer, start, lines[j][1]))
            i = j
        i += 1
    return [u for u in units if u.end > u.start]


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank line, trailing space left out."""
    spans, at = [], 0
    for line in text.split("\n"):
        stripped = line.rstrip()
        if stripped.strip():
            lead = len(stripped) - len(stripped.lstrip())
            spans.append((at + lead, at + len(stripped)))
        at += len(line) + 1
    return spans


def _plain(line: str) -> bool:
    return not (_FENCE.match(line) or _HEADING.match(line) or _BOLD_LINE.fullmatch(line) or line.lstrip().startswith("|")
                or _LIST_ITEM.match(line))


def _sentences(text: str, start: int, end: int) -> list[Unit]:
    """The sentences of text[start:end], each with the markers written after its period."""
    units: list[Unit] = []
    at = start
    label = _LABEL.match(text, start, end)
    if label:
        units.append(_unit(text, start, label.end(), "a heading"))
        at = label.end()
    for match in _END.finditer(text, at, end):
        head = text[at:match.start() + 1]
        if head.rstrip().endswith(_ABBREVIATIONS) or len(MARKER.sub("", head).strip()) < 12:
            continue
        units.append(_unit(text, at, match.end()))
        at = match.end()
        while at < end and text[at].isspace():
            at += 1
    if at < end and text[at:end].strip():
        units.append(_unit(text, at, end))
    return units


def _unit(text: str, start: int, end: int, structure: str = "") -> Unit:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    written = text[start:end]
    claim = MARKER.sub("", written)
    claim = _LIST_ITEM.sub("", claim, count=1) if _LIST_ITEM.match(claim) else claim
    if claim.lstrip().startswith("|"):
        claim = " | ".join(cell.strip() for cell in claim.strip().strip("|").split("|") if cell.strip())
    claim = claim.strip()
    if not structure and claim.rstrip("*_ ").endswith(":"):
        structure = "a lead-in"
    inner = pieces(_LIST_ITEM.sub("", written, count=1)) if not structure and not written.lstrip().startswith("|") else []
    return Unit(start, end, written, bool(structure), claim, cited(written), structure, inner)
