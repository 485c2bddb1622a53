"""Who and what each part of a sentence is about: the named thing each figure is given for, and which
word does what. A claim can hold every word and figure of its quote and still be wrong by binding them
otherwise: the quote's 22.58% for GPT-4o given as GPT-4o's 26.95%, the teacher that generates made
the one that solves, "higher than WAG" turned into "WAG is higher than". Every rule here reads the
shape of English sentences, not the words of a corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import AbstractSet, Callable, Optional, Sequence

from wordfreq import zipf_frequency

from .claims import ARTICLES, Figure, name_spans, named_things, words

# where one figure's statement ends and the next one's begins: not at "(", so "x2.51 (median x1.18) on
# RTX 3090" gives both figures to the RTX 3090, and not in a table row, whose cells are one record
_SEGMENT = re.compile(r"(?<!\d),|,(?!\d{3})|[;:]|\b(?:and|while|whilst|whereas|but|compared|versus|vs|respectively)\b", re.I)
_ROLE_CLAUSE = re.compile(r"[,;:]|\b(?:that|which|who|whose|while|whilst|whereas|and|but)\b", re.I)  # one doer, one act
_LISTED = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+|&\s*)", re.I)  # between the items of a list
_SENTENCE = re.compile(r"[.;:!?]\s")
_CARRIERS = ("demonstr", "achiev", "show", "reach", "obtain", "attain", "yield", "deliver", "give", "provid", "offer", "score")
_COMPARATIVE = re.compile(r"^(?:more|less|fewer|better|worse|higher|lower|greater|smaller|larger|faster|slower|stronger|"
                          r"weaker|[a-z]{3,}er)$")


@dataclass(frozen=True)
class Binding:
    """The names a figure is given for (None: not known, it stands in a list the sentence does not map)."""

    figure: Figure
    names: Optional[frozenset[str]]
    words: frozenset[str]  # the longer words of its statement, lower-cased


def roles(claim: str, quote: str, label: str, figures: Callable[[str], list[Figure]], window: int, common: float,
          function: float) -> str:
    """What the claim binds otherwise than the quote: a figure to another named thing, a narrower thing's figure,
    the sides of a "than", one name put for another, two doers' acts. The reason, or ''. `common`: a word this
    common (Zipf) binds no doer to an act; `function`: one this common says nothing of what a figure is for."""
    own = named_things(label) | set(words(label))
    said, heard = bind(claim, figures(claim), function), bind(quote, figures(quote), function)
    found = misbound(said, heard, own) or qualified(said, heard, own)
    if found:
        return found
    turned = than_swapped(claim, quote) or agent_swapped(claim, quote) or renamed(claim, quote, own) or exchanged_names(claim, quote)
    if turned:
        return f"the quote has '{turned}'"
    acts = traded(claim, quote, window, common)
    return f"the quote has the roles the other way ('{acts}')" if acts else ""


def bind(text: str, found: list[Figure], function: float) -> list[Binding]:
    """Each figure of the text with the names of the statement it stands in; a list of figures after a list
    of names ("Alpha and Beta reach 31.1 and 23.4, respectively") maps them in order. Its words leave out those
    English uses at least `function` (Zipf): "over" in "x2.77 over Torch Compile" says what a table row's cell does
    ("without" in "8% without RoPE" is rarer, and says more)."""
    spans = name_spans(text, capitalised=True)
    own = [f for f in found if not _in_name(text, f, spans)]
    cuts = [0] + [m.end() for m in _SEGMENT.finditer(text)] + [len(text) + 1]
    out = {}
    for f in own:
        left = max(c for c in cuts if c <= f.at)
        right = min(c for c in cuts if c > f.at)
        piece = text[left:right]
        out[id(f)] = Binding(f, frozenset(n for s, _, n in spans if left <= s < right),
                             frozenset(w for w in words(piece) if len(w) > 3 and w.isalpha() and not _common(w, function)))
    for run in _runs(text, own):
        groups = _listed_names(text, spans, run[0].at)
        for i, f in enumerate(run):
            names = frozenset(groups[i]) if len(groups) == len(run) else None
            out[id(f)] = Binding(f, names, out[id(f)].words)
    return [out[id(f)] for f in own]


def _in_name(text: str, figure: Figure, spans: Sequence[tuple[int, int, str]]) -> bool:
    """A number that is part of a name: "RTX 3090", "Gemini 2.5 Pro", "Llama 3" (a plain number right after a name)."""
    return not figure.kind and any(0 <= figure.at - e <= 1 and text[e:figure.at] in ("", " ", "-") for _, e, _ in spans)


def _runs(text: str, own: list[Figure]) -> list[list[Figure]]:
    """Figures written as one list ("31.1 and 23.4", "x2.1, x3.4 and x5.0"), nothing but separators between them."""
    runs: list[list[Figure]] = []
    for a, b in zip(own, own[1:]):
        if _LISTED.fullmatch(text[a.end:b.at]) and a.kind == b.kind:
            if runs and runs[-1][-1] is a:
                runs[-1].append(b)
            else:
                runs.append([a, b])
    return runs


def _listed_names(text: str, spans: Sequence[tuple[int, int, str]], before: int) -> list[list[str]]:
    """The list of names that ends last before `before` in its sentence ("such as Gemini 2.5 Pro and GPT-4.1"):
    each item its name words; one word or number apart is still one name."""
    start = max([m.end() for m in _SENTENCE.finditer(text, 0, before)] + [0])
    groups: list[list[tuple[int, int, str]]] = []
    for s, e, n in (x for x in spans if start <= x[0] and x[1] <= before):
        if groups and re.fullmatch(r"[\s\d.]*", text[groups[-1][-1][1]:s]):
            groups[-1].append((s, e, n))
        else:
            groups.append([(s, e, n)])
    listed: list[list[str]] = []
    listed_start = before
    for group in reversed(groups):
        if listed and not _LISTED.fullmatch(text[group[-1][1]:listed_start]):
            break
        listed.insert(0, [n for _, _, n in group])
        listed_start = group[0][0]
    return listed


def misbound(claim: list[Binding], quote: list[Binding], own_names: AbstractSet[str]) -> str:
    """A figure the claim gives for a named thing that the quote gives for another: the quote ties the name to
    another figure of that kind and this figure to something else. Returns the quote's figure and the name."""
    for mine in claim:
        same = [q for q in quote if mine.figure.matches(q.figure)]
        if mine.names is None or not same or any(q.names is None for q in same):
            continue
        for name in sorted(mine.names - own_names):
            if any(q.names is not None and name in q.names for q in same):
                continue
            if not any(q.names - own_names for q in same if q.names is not None):
                continue  # the quote gives this figure for nothing named: the name may be said of the whole sentence
            rival = next((q for q in quote if q.names and name in q.names and q.figure.kind == mine.figure.kind
                          and not mine.figure.matches(q.figure)  # and not a figure the claim gives for that name too
                          and not any(c.names and name in c.names and c.figure.matches(q.figure) for c in claim)), None)
            if rival is not None:
                return f"the quote gives {rival.figure.text.strip()} for {name}, not {mine.figure.text.strip()}"
    return ""


def qualified(claim: list[Binding], quote: list[Binding], own_names: AbstractSet[str]) -> str:
    """The claim's figure is the one the quote gives for a narrower thing ("x2.88 over Torch Compile with reduce
    overhead"), and another figure of the quote is for the thing exactly as the claim names it."""
    for mine in claim:
        names = (mine.names or frozenset()) - own_names
        same = [q for q in quote if mine.figure.matches(q.figure)]
        if not names or not same:
            continue
        same = [q for q in same if q.names is not None and names <= q.names]
        if not same or not all(_extra(q, mine, own_names) for q in same):
            continue
        exact = next((q for q in quote if q.names is not None and names <= q.names and not mine.figure.matches(q.figure)
                      and q.figure.kind == mine.figure.kind and not _extra(q, mine, own_names)), None)
        if exact is not None:
            return f"the quote gives {exact.figure.text.strip()} for that; {mine.figure.text.strip()} is for a narrower case"
    return ""


def _extra(quoted: Binding, mine: Binding, own_names: AbstractSet[str]) -> set[str]:
    """The words of the quote's statement of a figure that the claim's lacks, past its names and the verbs that
    only carry a figure ("demonstrates x2.77", "achieving 3.0x")."""
    assert quoted.names is not None
    return {w for w in quoted.words - mine.words - quoted.names - own_names if not w.startswith(_CARRIERS)}


def than_swapped(claim: str, quote: str) -> str:
    """"X is higher than Y" where the quote has "... higher than X": the thing compared against became the
    subject. Returns the thing, or ''."""
    said, heard = words(claim), words(quote)
    for way, subject, target in _thans(said):
        for q_way, _, q_target in _thans(heard):
            if way == q_way and target != q_target and q_target in subject:
                return q_target
    return ""


def agent_swapped(claim: str, quote: str) -> str:
    """"Better explained by A than by B" where the quote has "better explained by ... B": the thing the claim ranks
    second is the one the quote ranks first. Returns the thing, or ''."""
    said, heard = words(claim), words(quote)
    for i in range(len(said) - 3):
        if not (_COMPARATIVE.match(said[i]) and said[i + 1].endswith("ed") and said[i + 2] == "by" and "than" in said[i + 3:]):
            continue
        than = said.index("than", i + 3)
        first = {w for w in said[i + 3:than] if _content(w, 99.0)}
        second = [w for w in said[than + 1:than + 6] if w != "by" and _content(w, 99.0)]
        for k in range(len(heard) - 2):
            if heard[k] == said[i] and heard[k + 1] == said[i + 1] and heard[k + 2] == "by":
                ranked = set(heard[k + 3:k + 9])
                if "than" not in ranked and first and second and ranked & set(second) and not ranked & first:
                    return " ".join(second)
    return ""


def _thans(tokens: list[str]) -> list[tuple[str, list[str], str]]:
    """Each "<comparative> ... than <thing>": the comparative, the words of the clause before it, the thing."""
    out = []
    for i, t in enumerate(tokens):
        if t != "than" or i + 1 >= len(tokens):
            continue
        j = i + 1 + (tokens[i + 1] in ARTICLES and i + 2 < len(tokens))
        way = next((i - k for k in range(1, 5) if i - k >= 0 and _COMPARATIVE.match(tokens[i - k])), None)
        if way is not None:
            out.append((tokens[way], tokens[max(0, way - 6):way], tokens[j]))
    return out


def rare_word(text: str, zipf: float) -> bool:
    """A word of the text rarer in English than `zipf` (wordfreq): a term, not a way of saying."""
    return any(w.isalpha() and zipf_frequency(w, "en") < zipf for w in words(text))


@lru_cache(maxsize=8192)
def _common(word: str, function: float) -> bool:
    return zipf_frequency(word, "en") >= function


@lru_cache(maxsize=8192)
def _content(word: str, common: float) -> bool:
    return len(word) > 3 and word.replace("-", "").isalpha() and zipf_frequency(word, "en") < common


def _keys(tokens: list[str], common: float) -> list[str]:
    return [t[:5] for t in tokens if _content(t, common)]


def _pairs(text: str, window: int, common: float) -> dict[tuple[str, str], set[int]]:
    """Ordered pairs of content words at most `window` content words apart inside one clause ("a teacher agent
    generates"), with the clauses each pair stands in."""
    found: dict[tuple[str, str], set[int]] = {}
    for n, part in enumerate(_ROLE_CLAUSE.split(text)):
        keys = _keys(words(part), common)
        for i, a in enumerate(keys):
            for b in keys[i + 1:i + 1 + window]:
                if a != b:
                    found.setdefault((a, b), set()).add(n)
    return found


def traded(claim: str, quote: str, window: int, common: float) -> str:
    """Two doers that trade their acts between two clauses: the quote has X with A in one and Y with B in
    another, the claim X with B and Y with A ("a teacher generates ..., and a student solves" / "a student
    generates ... that a teacher solves"); the acts keep their order and the doers change theirs."""
    if len(_ROLE_CLAUSE.split(claim)) < 2 or len(_ROLE_CLAUSE.split(quote)) < 2:
        return ""  # one clause each: no two doers to trade
    said, heard = _pairs(claim, window, common), _pairs(quote, window, common)
    mine, theirs = _keys(words(claim), common), _keys(words(quote), common)
    only_said = sorted(p for p in said if p not in heard)
    for x, a in only_said:
        for y, b in only_said:
            if (len({x, a, y, b}) == 4 and (x, b) in heard and (y, a) in heard and (x, b) not in said and (y, a) not in said
                    and not said[(x, a)] & said[(y, b)] and not heard[(x, b)] & heard[(y, a)]
                    and mine.index(x) < mine.index(y) and theirs.index(y) < theirs.index(x)
                    and mine.index(a) < mine.index(b) and theirs.index(a) < theirs.index(b)):
                return f"{x}…' with '{a}…"
    return ""


def renamed(claim: str, quote: str, own_names: AbstractSet[str]) -> str:
    """A name of the claim standing where the quote, otherwise aligned, has another name the claim never gives,
    while the quote uses the claim's name elsewhere ("we introduce ACR ..., unlike ASR" / "introduces ASR")."""
    said, heard = words(claim), words(quote)
    names_c = {n for _, _, n in name_spans(claim, capitalised=True)} - own_names
    names_q = {n for _, _, n in name_spans(quote, capitalised=True)} - own_names
    if not names_c & names_q or not names_q - names_c:
        return ""  # no name of the claim's in the quote, or no other name there to stand in its place
    blocks = SequenceMatcher(None, said, heard, autojunk=False).get_opcodes()
    for k, (op, i1, i2, j1, j2) in enumerate(blocks):
        framed = any(0 <= n < len(blocks) and blocks[n][0] == "equal" and blocks[n][2] - blocks[n][1] >= 2 for n in (k - 1, k + 1))
        if op != "replace" or i2 - i1 > 8 or j2 - j1 > 8 or not framed:  # in the same place: the same words beside it
            continue
        mine = [t for t in said[i1:i2] if t in names_c and t in heard[:j1] + heard[j2:]]
        theirs = [t for t in heard[j1:j2] if t in names_q and t not in said]
        if mine and theirs:
            return f"{theirs[0]}' where the sentence says '{mine[0]}"
    return ""


def exchanged_names(claim: str, quote: str) -> str:
    """Two names in each other's place, the words around them aligned: "RAG is a compression method for OSCAR"
    for the quote's "OSCAR, a compression method for RAG"."""
    said, heard = words(claim), words(quote)
    names = {n for _, _, n in name_spans(claim, capitalised=True)} & {n for _, _, n in name_spans(quote, capitalised=True)}
    if len(names) < 2:
        return ""
    ops = [(set(said[i1:i2]) & names, set(heard[j1:j2]) & names)
           for op, i1, i2, j1, j2 in SequenceMatcher(None, said, heard, autojunk=False).get_opcodes()
           if op != "equal" and i2 - i1 <= 3]  # the name and a word or two: the rest of the claim aligned
    for k, (mine, theirs) in enumerate(ops):
        for mine2, theirs2 in ops[k + 1:]:
            one, other = sorted(mine & theirs2 - theirs), sorted(mine2 & theirs - theirs2)
            if one and other and one[0] != other[0]:
                return f"{other[0]}' where the sentence says '{one[0]}"
    return ""
