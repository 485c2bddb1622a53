"""What a claim says that a quote must say too: its figures, its named things, its lists, and the words a
paraphrase puts in the place of the quote's (polarity is in polarity.py).

Figures are normalised (5,040 = 5040, 10K = 10,000, "about three times" ~ 3.12x, ranges give both
ends) and each is tied to the words around it, so that a figure the quote gives for another thing
("x2.51 on RTX 3090" offered for the H20) is told apart from the figure it gives for this one. The
word classes here are general English (quantifiers, prepositions), not fitted to a corpus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache
from typing import AbstractSet, Callable

from ..corpus.labels import VERSION_DOT

_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9, "t": 1e12, "trillion": 1e12}
_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
          "eleven": 11, "twelve": 12, "thirteen": 13, "fifteen": 15, "twenty": 20, "thirty": 30, "fifty": 50,
          "hundred": 100, "single": 1, "twice": 2, "half": 0.5, "dozen": 12}
_NUMBER = re.compile(
    r"(?:(?<![\w.@/-])|(?<=(?<![A-Za-z.])\d[-–]))(?:[×x]\s?)?[+±~≈-]?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)"
    r"(?:\s?(%|percent\b|pp\b|×|x\b|-?fold\b|\s?times\b)|\s?([kKmMbBtT]\b|thousand\b|million\b|billion\b|trillion\b))?"
    r"(?![\w@])",
)
_NUMBER_WORD = re.compile(rf"\b({'|'.join(_WORDS)})(?:[\s-](times|fold))?\b", re.I)
# a figure given as a bound: the most ("up to 6.92x") or the least ("at least 3", "more than 40%") of what was measured
_AT_MOST = re.compile(r"\b(?:up to|at most|as (?:much|many|high|large) as|no more than|a maximum of|maximum of)\s*$", re.I)
_AT_LEAST = re.compile(r"\b(?:at least|more than|over|above|exceeding|no less than|a minimum of|greater than)\s*$", re.I)
_HEDGE = re.compile(r"\b(?:about|around|roughly|approximately|nearly|almost|some|close to|over|more than|up to|~|≈)\s*$", re.I)
# a clause ends here: a figure's words are the ones inside its clause
_CLAUSE = re.compile(r"[,;:()]|\b(?:and|while|whereas|but|compared|versus|vs|relative|against|respectively)\b", re.I)
_PRIOR = re.compile(
    r"\b(?:existing|prior|previous|previously|conventional|traditional|earlier|current|most|many|standard)\s+(?:[\w-]+\s+){0,2}"
    r"(?:methods?|approach(?:es)?|techniques?|works?|models|systems|studies|baselines|solutions|frameworks|algorithms)\b"
    r"|\bon the other hand\b|\bunlike\b|\bcompared (?:to|with)\b|\bin contrast\b|\bby contrast\b", re.I)
_ITEM = r"(?!(?:to|which|that|by|for|with|in|on|from|as|at|while|where|when|whose)\b)[\w][\w'’.-]*(?: [\w][\w'’.-]*){0,2}"
_LIST = re.compile(rf"{_ITEM}(?:, {_ITEM})+,? (?:and|or) {_ITEM}")
ALTERNATIVES = re.compile(rf"{_ITEM}(?:, {_ITEM})*,? (?:and|or|nor) {_ITEM}")  # what "no"/"without" before it denies
# words after a figure that run into the next one are that one's: "x3.12 | with a median speedup of x1.42"
_NEXT_LEAD = re.compile(r"\b(?:with|reaching|whose)\b", re.I)
_LIST_GAP = re.compile(r"\s*(?:(?:on|in|for|at|with|over)\s+[^,;.()]{1,40}?)?,\s*(?:and\s+)?|\s+and\s+")  # between listed figures
_NAME_TOKEN = re.compile(rf"[A-Za-z](?:[\w'’@-]|{VERSION_DOT})*\w|[A-Za-z]")  # @: metrics such as Pass@1, Recall@10
_ENDS_SENTENCE = re.compile(r"[.:;!?|]\s*$")
_HYPHENS = {ord(c): "-" for c in "\u2010\u2011\u2012\u2013\u2212"}
_TOKEN = re.compile(r"[\w][\w.'’+@-]*[\w+]|\w")
QUANTIFIERS = {"all", "every", "always", "only", "any", "entirely", "completely", "universally", "exclusively", "solely",
               "first", "fully", "perfectly", "guarantees", "guaranteed", "consistently", "everywhere"}
# adverbs that give a change its size; any one of them in the quote allows another in the claim
INTENSIFIERS = {"significantly", "substantially", "dramatically", "greatly", "drastically", "vastly", "markedly",
                "considerably", "remarkably", "massively", "sharply", "hugely", "enormously", "tremendously", "strongly",
                "precipitously", "sizably", "appreciably"}
PREPOSITIONS = {"in", "on", "for", "at", "across", "under", "over", "from", "into", "onto", "within", "among", "between",
                "beyond", "via", "through", "towards", "toward", "against", "during", "per", "with", "without", "of"}  # not "to" (to do), "by" (done by)
ARTICLES = {"a", "an", "the", "its", "their", "this", "these", "each", "every", "all", "both", "such"}
# words that say where a claim comes from, not what it claims (general to writing about papers)
SCAFFOLD = {"paper", "abstract", "author", "study", "work", "report", "show", "propos", "introduc", "present",
             "describ", "find", "word", "result", "experi", "demonstr", "claim", "state", "note", "notabl", "also",
             "argu", "indic", "mention", "say"}
# light verbs before a figure: "gives a 3.0x speedup" and "achieves a 3.0x speedup" say the same; the figure and
# its noun carry the claim (without a figure, "uses X" or "provides X" may be the claim itself)
LIGHT = {"give", "get", "make", "use", "reach", "achiev", "yield", "provid", "offer", "obtain", "deliv", "attain"}
# hedges a writer adds of their own (the figure check reads the ones before a number)
HEDGES = {"rough", "about", "approxim", "nearli", "almost", "around", "probabl", "perhap", "seem", "suggest", "appear",
           "like", "possibl", "may", "might", "could", "somewhat", "essenti", "basic", "overal", "across", "inde"}
# where a sentence joins a second claim to its first (general English conjunctions)
JOINS = re.compile(r",\s+(?:and|but|while|whereas|yet|so|(?:al|even )?though)\s+|;\s+|\s+(?:while|whereas)\s+|\s+and\s+(?=(?:it|they|this|these|its|their)\s)")
# English function words the content-word stop list keeps: "via RL" says what "through RL" does
FUNCTION_WORDS = {"via", "upon", "among", "amongst", "within", "per", "despit", "amid", "toward", "onto", "throughout", "besid",
             "along", "alongsid", "beyond", "whilst", "thu", "henc", "therebi", "wherea", "whether", "sinc", "though",
             "although", "yes", "too"}
FIGURE_PIECE = re.compile(r"[\d.,]+[kmbt]?")  # what the tokenizer leaves of "9.4K" or "5,040": a figure, checked apart


@dataclass(frozen=True)
class Figure:
    value: float
    kind: str  # "%", "x" (a ratio) or "" (a count or plain number)
    tolerance: float  # how far a quoted figure may be and still be this one (the writer's rounding, a hedge)
    at: int  # where it is written, in characters
    end: int
    text: str
    bound: str = ""  # "most" ("up to 6.92x"), "least" ("at least 3", "more than 40%") or "" (the figure itself)

    def matches(self, other: "Figure") -> bool:
        same_kind = self.kind == other.kind or "" in (self.kind, other.kind) and self.kind != "%" and other.kind != "%"
        return same_kind and abs(self.value - other.value) <= max(self.tolerance, 1e-9 * abs(self.value))


def figures(text: str, hedge_share: float) -> list[Figure]:
    """Each figure of the text, normalised; a hedged one ("roughly 41%") may be `hedge_share` off."""
    found: list[Figure] = []
    for match in _NUMBER.finditer(text):
        if text[match.start() - 1:match.start()] == "(" and text[match.end():match.end() + 1] == ")":
            continue  # an enumerator: "(3) an extensive list"
        digits, unit, scale = match.group(1), (match.group(2) or "").strip().lower(), (match.group(3) or "").lower()
        if re.fullmatch(r"(?:19|20)\d\d", digits) and not unit:
            continue  # a year
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        value = float(digits.replace(",", ""))
        factor = _SCALE.get(scale, 1.0)
        kind = "%" if unit in ("%", "percent", "pp") else "x" if unit or match.group(0).lstrip()[:1] in "×x" else ""
        found.append(_figure(text, match.start(), match.end(), value * factor, kind, 0.5 * 10 ** -decimals * factor, hedge_share))
    for match in _NUMBER_WORD.finditer(text):
        word, times = match.group(1).lower(), match.group(2)
        kind = "x" if times or word == "twice" else ""
        found.append(_figure(text, match.start(), match.end(), float(_WORDS[word]), kind, 0.5 if kind else 0.0, hedge_share))
    _share_ranges(text, found)
    return sorted(found, key=lambda f: f.at)


def _figure(text: str, start: int, end: int, value: float, kind: str, rounding: float, hedge_share: float) -> Figure:
    before = text[max(0, start - 20):start]
    hedged = bool(_HEDGE.search(before))
    bound = "most" if _AT_MOST.search(before) else "least" if _AT_LEAST.search(before) else ""
    return Figure(value, kind, max(rounding, hedge_share * value if hedged else 0.0), start, end, text[start:end], bound)


def _share_ranges(text: str, found: list[Figure]) -> None:
    """In '2-5x' or 'from 1B to 24B' the unit written once belongs to both ends."""
    found.sort(key=lambda f: f.at)
    for i in range(len(found) - 1):
        a, b = found[i], found[i + 1]
        if re.fullmatch(r"\s*(?:[-–]|to|and)\s*", text[a.end:b.at]) and not a.kind and b.kind:
            found[i] = Figure(a.value, b.kind, a.tolerance, a.at, a.end, a.text, a.bound)


@lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """Hyphens of every kind as "-": "LC‑MAPPO" (a non-breaking hyphen) is LC-MAPPO."""
    return text.translate(_HYPHENS)


def words(text: str) -> list[str]:
    """The text's tokens, lower-cased, names with their digits and hyphens kept whole."""
    return list(_tokens(text))


@lru_cache(maxsize=4096)  # one check reads the same claims and quotes several times
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _TOKEN.findall(text))


def named_things(text: str) -> set[str]:
    """Name-shaped tokens: inner capitals (CamelCase, GPT-4o), letters with digits (H100), or capitalised
    mid-sentence; the first word of a sentence is a name only if its shape says so."""
    return {name for _, _, name in name_spans(text)}


@lru_cache(maxsize=4096)  # one check reads the same claims and quotes several times
def name_spans(text: str, capitalised: bool = False) -> tuple[tuple[int, int, str], ...]:
    """Each name-shaped token of the text (see named_things) with where it stands, lower-cased; with
    `capitalised`, also each capitalised word right after another word ("over Torch Compile")."""
    names: list[tuple[int, int, str]] = []
    tokens = list(_NAME_TOKEN.finditer(text))
    for i, match in enumerate(tokens):
        token = match.group(0).rstrip("'’s") if match.group(0).endswith(("'s", "’s")) else match.group(0)
        inner = any(c.isupper() for c in token[1:]) or (any(c.isdigit() for c in token) and any(c.isalpha() for c in token))
        gap = text[tokens[i - 1].end():match.start()] if i else ""
        sentence_start = i == 0 or bool(_ENDS_SENTENCE.search(gap) or (not capitalised and not gap.strip()))
        if inner or (token[:1].isupper() and not sentence_start and len(token) > 1):
            names.append((match.start(), match.start() + len(token), token.lower()))
    return tuple(names)


_SUPERLATIVE_WORD = re.compile(r"best|worst|most|least|[a-z]{2,}est")


def _inflected(word: str, stems: Callable[[str], AbstractSet[str]]) -> bool:
    """A verb's or a plural's -s ("shows", "lifts"): the word stems as itself without it."""
    return len(word) > 3 and word.endswith("s") and bool(stems(word)) and stems(word) == stems(word[:-1])


def variant(name: str, claim: str, quote: str, stems: Callable[[str], AbstractSet[str]]) -> str:
    """The short word the quote puts after a name the claim gives bare ("GPT-4o mini" for "GPT-4o"): another thing;
    not a word the claim says too ("Qwen3-1.7B-Base lifts" for "On Qwen3-1.7B-Base, it lifts"): the verb of both, nor
    an inflected verb, a superlative or the front of a compound ("K²-Agent shows", "RoPE best", "multi-agent")."""
    after = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])\s+([a-z]{{2,5}})\b(?![-\u2010\u2011])")  # not "multi-agent"
    said = {m.group(1) for m in after.finditer(claim.lower())}
    for match in after.finditer(quote.lower()):
        word = match.group(1)
        if word in said or not stems(word) or stems(word) & stems(claim) or name not in claim.lower():
            continue
        if _inflected(word, stems) or _SUPERLATIVE_WORD.fullmatch(word):
            continue  # "K²-Agent shows", "RoPE best explains": what the name does, not another name
        return f"{name} {word}"
    return ""


def clause(text: str, figure: Figure, others: list[Figure]) -> str:
    """The clause a figure stands in, stopping at the next figure on either side."""
    right = min([f.at for f in others if f.at >= figure.end] + [len(text)])
    after = text[figure.end:right]
    ahead = _CLAUSE.search(after) or (_NEXT_LEAD.search(after) if right < len(text) else None)
    after = after[:ahead.start()] if ahead else after
    return _before(text, figure, others) + " " + after


def _before(text: str, figure: Figure, others: list[Figure]) -> str:
    left = max([f.end for f in others if f.end <= figure.at] + [0])
    before = text[left:figure.at]
    cut = list(_CLAUSE.finditer(before))
    return before[cut[-1].end():] if cut else before


def listed_lead(text: str, figure: Figure, given: list[Figure]) -> str:
    """The words that open a list of figures ("improvements of +3.5% on MATH, +2.9% on HumanEval, and +5.5% on
    MMLU-Pro"): they are said of every figure of the list, not only of the first."""
    ordered = sorted(given, key=lambda f: f.at)
    i = next((k for k, f in enumerate(ordered) if f is figure), None)
    while i and ordered[i - 1].kind == figure.kind and _LIST_GAP.fullmatch(text[ordered[i - 1].end:ordered[i].at]):
        i -= 1
    if i is None or ordered[i] is figure:
        return ""
    first = ordered[i]
    return _before(text, first, [f for f in ordered if f is not first])


def object_words(tokens: list[str]) -> list[str]:
    """The word each preposition takes, past an article ("on the ImageNet benchmark" -> ImageNet): where a
    sentence says on what, in what, for whom."""
    out = []
    for i, t in enumerate(tokens[:-1]):
        if t in PREPOSITIONS:
            j = i + 2 if tokens[i + 1] in ARTICLES and i + 2 < len(tokens) else i + 1
            out.append(tokens[j])
    return out


def enumerated(text: str) -> list[str]:
    """The items of each list the sentence gives ("cosine, linear and exponential decay"): each is a detail
    the quote must hold, not a word the rest of the sentence can make up for."""
    return [item for match in _LIST.finditer(text) for item in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", match.group(0))
            if item.strip()]


# the thing a claim likens its subject to: "Like prior soft compression methods, it ...", "..., as hard compression
# methods do", "similar to X": the thing's words up to where the clause turns
_LIKENED = re.compile(r"(?:^|[,;(]\s*)(?:much |just )?like\s+((?:[^\W\d][\w-]*\s+){0,4}?[^\W\d][\w-]*)\s*,"
                      r"|\bas\s+((?:[^\W\d][\w-]*\s+){0,4}?[^\W\d][\w-]*)\s+(?:do|does|did)\b"
                      r"|\bsimilar(?:ly)? to\s+((?:[^\W\d][\w-]*\s+){0,4}?[^\W\d][\w-]*)\s*[,.;]", re.I)


_SPACES = re.compile(r"\s{2,}")


def likened(text: str) -> list[str]:
    """The things the sentence likens its subject to ("Like prior soft compression methods, it ..."): what they do is
    said of them, and a quote that says it of them does not say it of the subject."""
    return [next(g for g in m.groups() if g) for m in _LIKENED.finditer(text)]


def unlikened(text: str) -> str:
    """The sentence without its simile ("Like NewtonBench, it relies on X" -> "it relies on X"): what it says of both."""
    return _SPACES.sub(" ", _LIKENED.sub(lambda m: m.group(0)[0] if m.group(0)[0] in ",;(" else "", text)).strip() or text


def about_prior_work(text: str) -> bool:
    """Does the sentence speak of earlier methods ("Existing methods ...", "prior work", "On the other hand")?
    An abstract's sentence about what came before does not back a claim about the paper's own method. One that first
    speaks of the paper's own ("Our method achieves 26.95% compared to 22.58% for GPT-4o") is about the paper."""
    found = _PRIOR.search(text)
    return found is not None and not _OWN.search(text, 0, found.start())


_OWN = re.compile(r"\b(?:we|our|ours|this (?:paper|work|study)|the proposed)\b", re.I)  # the paper speaks of its own


def ending(tokens: list[str]) -> tuple[str, str] | None:
    """The thing a sentence ends on and the word that qualifies it ("... using a standard tokenizer"): the
    qualifier and the head in its singular form, or None when it ends on no qualified word."""
    if len(tokens) < 2 or not tokens[-1].replace("-", "").isalpha() or len(tokens[-1]) < 5:
        return None
    word = tokens[-2]
    return (word, tokens[-1].rstrip("s")) if word.replace("-", "").isalpha() and len(word) > 4 and word not in PREPOSITIONS else None


# words in each other's place, aligned: what a paraphrase keeps and what it puts in another's stead
def substituted(claim: list[str], quote: list[str], frame: int) -> list[tuple[str, str, bool]]:
    """The words that stand in the claim where the quote, aligned with it, has other words: at its end after at
    least `frame` tokens the two share ("only when the model is confident" / "... is uncertain"), or between
    `frame` shared tokens on each side ("refine task-level declarative knowledge through" / "... procedural
    ..."). Each is one or two words of the claim and at most three of the quote, and whether it ends them."""
    blocks = SequenceMatcher(None, claim, quote, autojunk=False).get_opcodes()
    found: list[tuple[str, str, bool]] = []
    for k, (op, i1, i2, j1, j2) in enumerate(blocks):
        if op != "replace" or not 0 < k or i2 - i1 > 2 or j2 - j1 > 3:
            continue
        before, after = blocks[k - 1], blocks[k + 1] if k + 1 < len(blocks) else None
        framed_before = before[0] == "equal" and before[2] - before[1] >= frame
        last = after is None and j2 - j1 <= 2
        framed_after = after is not None and after[0] == "equal" and after[2] - after[1] >= frame
        if framed_before and (last or framed_after):
            found.append((" ".join(claim[i1:i2]), " ".join(quote[j1:j2]), last))
    return found


# the summary statistics of English: which one of a measure is given is part of the claim ("the mean IoU" is not
# "the standard deviation of IoU")
_STATISTICS = {"mean", "average", "median", "mode", "maximum", "minimum", "max", "min", "variance", "deviation", "sum",
               "total", "std"}
_STAT_GAP = {"of", "the", "a", "an", "its", "their", "standard"}


def _statistics(tokens: list[str]) -> list[tuple[str, str]]:
    """Each summary statistic of the text with the first content word it is of: ("mean", "foreground")."""
    found = []
    for i, t in enumerate(tokens):
        if t not in _STATISTICS:
            continue
        kind = "standard deviation" if t == "deviation" and i and tokens[i - 1] == "standard" else t
        thing = next((w for w in tokens[i + 1:i + 4] if w not in _STAT_GAP and w.replace("-", "").isalpha() and len(w) > 2), "")
        if thing:
            found.append((kind, thing))
    return found


def other_statistic(claim: list[str], quote: list[str]) -> str:
    """The claim gives one statistic of a measure ("mean foreground IoU") where the quote gives another of it ("the
    standard deviation of foreground IoU") and never the claim's: another figure of the same thing."""
    theirs: dict[str, set[str]] = {}
    for kind, thing in _statistics(quote):
        theirs.setdefault(thing, set()).add(kind)
    for kind, thing in _statistics(claim):
        of_it = theirs.get(thing, set())
        if of_it and kind not in of_it:
            return f"the {sorted(of_it)[0]} of {thing}' where the sentence says 'the {kind} {thing}"
    return ""


def other_compound(claim: list[str], quote: list[str]) -> str:
    """A compound the quote has with another first part ("zeroth-order updates" for the claim's "second-order",
    "few-shot" for "zero-shot"): another thing of the same kind. Returns the quote's word and the claim's."""
    def parts(tokens: list[str]) -> set[tuple[str, str]]:
        return {(t.rsplit("-", 1)[0], t.rsplit("-", 1)[1]) for t in tokens if "-" in t and t.replace("-", "").isalpha()
                and len(t.rsplit("-", 1)[1]) > 2}
    mine, theirs = parts(claim), parts(quote)
    for first, head in sorted(mine - theirs):
        other = sorted(f for f, h in theirs if h == head and f != first and (f, h) not in mine)
        if other:
            return f"{other[0]}-{head}' where the sentence says '{first}-{head}"
    return ""


def exchanged(claim: list[str], quote: list[str]) -> tuple[str, str]:
    """Two words of the quote that the claim, otherwise aligned with it, has in each other's place ("a student
    generates problems and a teacher solves them" for "a teacher generates ... a student solves")."""
    swaps = {pair for op, i1, i2, j1, j2 in SequenceMatcher(None, claim, quote, autojunk=False).get_opcodes()
             if op == "replace" and i2 - i1 == j2 - j1 <= 2 for pair in zip(claim[i1:i2], quote[j1:j2])}
    return next(((a, b) for a, b in sorted(swaps) if (b, a) in swaps and a < b), ("", ""))
