"""Polarity of a claim against its quote: which way a comparison points and between which two sides,
what a negation denies, antonyms and un-/in- opposites, steady against changing, and the words a
sentence ends on. Every word class here is general English, not fitted to a corpus.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import AbstractSet, Callable

from wordfreq import zipf_frequency

from .claims import ALTERNATIVES, PREPOSITIONS, SCAFFOLD, words
from .directions import DOWN, UP

ADDITIVE = re.compile(r"\bnot\s+(?:just|only|merely|simply|solely)\b", re.I)  # "not just X" adds to X, denies nothing
# what a sentence leaves behind without denying it: "from static fitting to discovery", "beyond static fitting"
_DEPARTED = re.compile(r"\bfrom\s+((?:[^\W\d][\w-]*\s+){1,4}?)to\s|\bbeyond\s+((?:[^\W\d][\w-]*\s*){1,4})", re.I)
_PHRASE = re.compile(r"[,;:.()!?]|\b(?:and|but)\b", re.I)
_CONTRAST = re.compile(r"(?<=^)\s*(?:While|Whereas|Although|Though|Unlike)\b([^,]*),|[,;]\s*(?:while|whereas|but|yet)\s|\s(?:while|whereas)\s")
_NEGATOR = re.compile(r"\b(?:no|not|without|never|neither|nor|cannot|lacks?|avoid(?:s|ed|ing)?)\s+|n't\s+", re.I)

# the comparison words that relate two things, one on each side ("X outperforms Y", "X is faster than Y")
RELATION_UP = {"outperform", "outperforms", "outperformed", "outperforming", "surpass", "surpasses", "surpassed",
               "surpassing", "exceed", "exceeds", "exceeded", "exceeding", "beat", "beats", "beating", "better",
               "superior", "stronger", "faster", "higher"}
RELATION_DOWN = {"underperform", "underperforms", "underperformed", "trail", "trails", "lag", "lags", "worse", "inferior",
                 "weaker", "slower", "lower"}
# a thing said not to change, and the verbs that say it does (general English)
STEADY = {"stabl", "steadi", "unchang", "constant", "unaffect", "invari", "flat"}  # as stems
CHANGE = {"degrad", "drop", "declin", "decreas", "deterior", "collaps", "fluctuat", "increas", "grow", "rise", "fall", "shrink",
          "plummet", "vari"}
# superlatives that no -est rule finds, and the field's own ("state-of-the-art" is "the best yet")
SUPERLATIVES = {"best", "worst", "state-of-the-art", "sota"}
NEGATION = {"not", "no", "never", "without", "cannot", "neither", "nor", "none", "instead", "rather", "fails", "fail", "lacks",
            "avoid", "avoids", "avoided", "avoiding"}  # "avoids X" says what "without X" does
# a negation only with the word after it: "instead of X", "rather than X", "yet to X" deny X; "instead enabling X" affirms X
_DENY_WITH = {"instead": "of", "rather": "than", "yet": "to"}  # "yet to be released": not released
_ALSO = re.compile(r"\bbut\s+(?:also|rather)\b|,\s*(?:and\s+)?also\b", re.I)  # where "not only X" turns to its Y
# pairs of general English (and of writing about experiments) that say opposite things of one subject; each word
# is matched with its inflections ("positively", "enables", "offline")
ANTONYMS = (
    ("positive", "negative"), ("positively", "negatively"), ("enable", "prevent"), ("online", "offline"),
    ("static", "dynamic"), ("explicit", "implicit"), ("global", "local"), ("sparse", "dense"), ("early", "late"),
    ("success", "failure"), ("succeed", "fail"), ("easy", "hard"), ("easier", "harder"), ("simple", "complex"),
    ("cheap", "expensive"), ("cheaper", "costlier"), ("robust", "fragile"), ("robust", "brittle"), ("robust", "vulnerable"),
    ("majority", "minority"), ("always", "never"), ("lossless", "lossy"), ("white-box", "black-box"),
    ("ascent", "descent"), ("forward", "backward"), ("internal", "external"), ("intrinsic", "extrinsic"),
    ("homogeneous", "heterogeneous"), ("sequential", "parallel"), ("continuous", "discrete"),
    ("deterministic", "stochastic"), ("include", "exclude"), ("inside", "outside"), ("open-source", "closed-source"),
    ("accept", "reject"), ("preserve", "destroy"), ("maximum", "minimum"), ("overestimate", "underestimate"),
    ("reward", "penalize"), ("reward", "penalise"), ("reward", "punish"), ("benefit", "harm"), ("mitigate", "exacerbate"),
    ("mitigate", "amplify"), ("presence", "absence"), ("synchronous", "asynchronous"), ("symmetric", "asymmetric"),
    ("similar", "different"), ("true", "false"), ("win", "lose"),
    ("minimal", "substantial"), ("minimal", "significant"), ("negligible", "substantial"), ("negligible", "significant"),
    ("minor", "major"), ("slight", "substantial"),  # the size of an effect
    ("necessary", "sufficient"), ("coupled", "decoupled"), ("centralized", "decentralized"),  # of conditions and designs
    ("before", "after"), ("first", "last"),  # of an order of steps
)

_PARTICLES = {"up", "down", "off", "out"}  # "slow down", "speed up": part of the verb
_CONJUNCTIONS = {"and", "or", "but", "while", "whereas", "which", "that", "because", "as"}


def direction(tokens: list[str]) -> tuple[set[str], set[str]]:
    """The comparison words of a text that point up, and those that point down."""
    return {t for t in tokens if t in UP}, {t for t in tokens if t in DOWN}


def directed(tokens: list[str], stems: Callable[[str], AbstractSet[str]], reach: int = 2) -> dict[str, set[str]]:
    """Each word next to a comparison word, and the way it points there: "lower latency" -> latency: down."""
    out: dict[str, set[str]] = {}
    for i, t in enumerate(tokens):
        way = "up" if t in UP else "down" if t in DOWN else ""
        if way:
            for stem in stems(" ".join(_neighbours(tokens, i, reach))):
                out.setdefault(stem, set()).add(way)
    return out


def _neighbours(tokens: list[str], i: int, reach: int) -> list[str]:
    """The words either side of a comparison word, within its phrase: "representations and | improving transfer"."""
    before = tokens[max(0, i - reach):i]
    cut = max([k + 1 for k, w in enumerate(before) if w in _CONJUNCTIONS] + [0])
    after = tokens[i + 1:i + 1 + reach]
    end = min([k for k, w in enumerate(after) if w in _CONJUNCTIONS] + [len(after)])
    return [w for w in before[cut:] + after[:end] if w not in UP and w not in DOWN]


def turned_whole(claim: list[str], quote: list[str], stems: Callable[[str], AbstractSet[str]]) -> bool:
    """The claim says a thing goes one way and the quote says only the other way, of a thing the quote speaks
    of (every word next to the claim's comparison word, within its phrase, is in the quote)."""
    (up, down), (q_up, q_down) = direction(claim), direction(quote)
    turned = (up - set(quote) if q_down and not q_up and not up & q_up else set()) | (
        down - set(quote) if q_up and not q_down and not down & q_down else set())
    if not turned:
        return False
    heard = stems(" ".join(quote))
    around = [{t for t in stems(" ".join(_neighbours(claim, i, 2))) if not t.startswith(tuple(SCAFFOLD)) and t not in _PARTICLES}
              for i, w in enumerate(claim) if w in turned]
    return any(near and all(t in heard for t in near) for near in around)


def direction_clash(claim: list[str], quote: list[str], stems: Callable[[str], AbstractSet[str]]) -> str:
    """A thing the claim says goes one way and the quote says goes the other ("smaller than" / "exceeding")."""
    said, heard = directed(claim, stems), directed(quote, stems)
    for term, ways in sorted(said.items()):
        if term in heard and not ways & heard[term]:
            return term
    return ""


def steady_clash(claim: AbstractSet[str], quote: AbstractSet[str]) -> str:
    """The claim says a thing holds steady ("remains stable") where the quote says it changes ("degrades"):
    both given as word stems."""
    if claim & STEADY and not quote & STEADY:
        moved = sorted((quote & CHANGE) - claim)
        return moved[0] if moved else ""
    return ""


def swapped(claim: list[str], quote: list[str], stems: Callable[[str], AbstractSet[str]], reach: int) -> str:
    """The two sides of a comparison changed places: "X outperforms Y" where the quote has "Y outperforms X"."""
    for way, left, right in _relations(claim, stems, reach):
        for q_way, q_left, q_right in _relations(quote, stems, reach):
            moved_right, moved_left = (left & q_right) - q_left, (right & q_left) - q_right
            if way == q_way and moved_right and moved_left:
                return f"{min(moved_left)}' before '{min(moved_right)}"
    return ""


def _relations(tokens: list[str], stems: Callable[[str], AbstractSet[str]], reach: int) -> list[tuple[str, set[str], set[str]]]:
    """Each comparison between two things ("X beats Y", "X is better than Y"): its way, and the words on each side;
    a passive ("is outperformed by") has its sides the other way round."""
    found = []
    for i, t in enumerate(tokens):
        way = "up" if t in RELATION_UP else "down" if t in RELATION_DOWN else ""
        if way:
            left, right = set(stems(" ".join(tokens[max(0, i - reach):i]))), set(stems(" ".join(tokens[i + 1:i + 1 + reach])))
            passive = tokens[i + 1:i + 2] == ["by"] and t.endswith("ed")
            found.append((way, right, left) if passive else (way, left, right))
    return found


def denied_phrases(text: str, reach: int = 3) -> list[list[str]]:
    """What each negation governs: the few longer words after "not", "no", "without", "n't"... up to the
    preposition that ends its phrase ("fail to improve | across iterations"), the X of "X-free", and every
    item of a list the negation opens ("requires no extra data, expert feedback, or task knowledge"; "no X or Y"),
    each item a phrase of its own. "Not just X" denies nothing."""
    text, out = ADDITIVE.sub(" ", text), []
    acronyms = set(_ACRONYM.findall(text))
    tokens = [t for phrase in _PHRASE.split(text) for t in words(phrase) + [","]]  # a negation ends with its phrase
    for i, t in enumerate(tokens):
        if _negates(tokens, i):
            taken: list[str] = []
            for w in tokens[i + 1:i + 1 + 3 * reach]:
                if w in PREPOSITIONS and taken or len(taken) == reach or w == ",":
                    break
                if w not in NEGATION and (len(w) > 3 or w.upper() in acronyms) and w not in PREPOSITIONS and w != "than":
                    taken.append(w)  # not "than" of "rather than"; an acronym is a thing however short ("without RL")
            before = tokens[i - 1] if i else ""
            if taken and t in ("no", "neither") and len(before) > 3 and before not in NEGATION and before not in PREPOSITIONS:
                taken.insert(0, before)  # "requires neither retraining": what "without requiring retraining" denies
            if taken:
                out.append(taken)
        elif t.endswith("-free") and len(t) > 8:  # "clipping-free": without clipping
            out.append([t[:-5]])
    for match in _NEGATOR.finditer(text):  # a negation distributes over the list it opens
        listed = ALTERNATIVES.match(text, match.end())
        if listed and not re.fullmatch(r"[^,]*,\s*(?:and|or|nor)\s.*", listed.group(0)):  # "avoid X, and do Y": a new clause
            out.extend([w] for w in words(listed.group(0)) if w not in NEGATION and len(w) > 3)
    return out


_ACRONYM = re.compile(r"\b[A-Z]{2,3}\b")  # RL, SGD, GPU: short, and each a thing


def _negates(tokens: list[str], i: int) -> bool:
    """Token i denies what follows it: "not", "without"..., and "instead"/"rather" only as "instead of"/"rather than"."""
    t = tokens[i]
    if t in _DENY_WITH:
        return tokens[i + 1:i + 2] == [_DENY_WITH[t]]
    return t in NEGATION or t.endswith("n't")


def contrast_sides(quote: str) -> list[str]:
    """The two sides of a quote that sets two things against each other ("While X ..., Y ...", "X, whereas Y"):
    what a claim denies of one, the quote may say of the other. The whole quote when it sets nothing apart."""
    sides = [p for p in _CONTRAST.split(quote) if p and p.strip()]
    return sides if len(sides) > 1 else [quote]


def only_clash(claim: str, quote: str, stems: Callable[[str], AbstractSet[str]], share: float) -> bool:
    """"Only X" where the quote says "not only X (but also Y)", and the claim leaves Y out: a claim that gives Y
    too (at least `share` of its words) restricts nothing the quote adds."""
    found = ADDITIVE.search(quote)
    if "only" not in words(claim) or ADDITIVE.search(claim) or not found:
        return False
    added = _ALSO.split(quote[found.end():], maxsplit=1)
    rest = stems(added[1]) if len(added) > 1 else set()
    return not rest or len(rest & stems(claim)) < share * len(rest)


_SOLE = re.compile(r"\b(?:solely|exclusively|purely|only)\s+(?:on|by|from|through|with|in|to)\b", re.I)
_BOTH = re.compile(r"\bboth\s+([^,.;]+?)\s+and\s+([^,.;]+)", re.I)


def sole_clash(claim: str, quote: str, stems: Callable[[str], AbstractSet[str]]) -> str:
    """The quote restricts a thing to one other ("conditioned solely on their initialization") and the claim gives it two
    ("depend on both their initialization and their training data"), the second one the quote never names: that one."""
    if not _SOLE.search(quote) or ADDITIVE.search(quote) or _SOLE.search(claim):  # "not only on X": only_clash's
        return ""
    held = stems(quote)
    for match in _BOTH.finditer(claim):
        first, second = stems(match.group(1)), stems(match.group(2))
        if first & held and second and not second & held:
            return match.group(2).strip()
    return ""


_VERBAL_NOT = re.compile(r"\b(?:(?:does|do|did|is|are|was|were|has|have|had|can|could|will|would|may|might)\s+not|cannot|never|\w+n't)\s+",
                         re.I)


def denied_statement(claim: str, quote: str, stems: Callable[[str], AbstractSet[str]], least: int) -> str:
    """The sentence denies, with a verb's "not", what the quote states ("does not improve a model's ability to distinguish
    toxic prompts" / "improves an LLM's capacity to distinguish truly toxic prompts"): at least `least` of the words the
    denial governs (to the end of its clause) are in the quote, and the quote denies none of them. Those words."""
    text = ADDITIVE.sub(" ", claim)
    heard = stems(quote)
    quote_denied = stems(" ".join(w for p in denied_phrases(quote) for w in p))
    said = {_figure_key(w) for w in words(quote) if _FIGURE.search(w)}
    for match in _VERBAL_NOT.finditer(text):
        governed = [w for w in _clause_words(text, match.end())
                    if w not in NEGATION and w not in PREPOSITIONS and (len(w) > 3 or _FIGURE.search(w))]
        found = [w for w in governed if (stems(w) & heard and not stems(w) & quote_denied) or (_FIGURE.search(w) and _figure_key(w) in said)]
        if len(found) >= least and not any(stems(w) & quote_denied for w in governed):
            return " ".join(found)
    return ""


def turned_statement(claim: str, quote: str, stems: Callable[[str], AbstractSet[str]], least: int) -> str:
    """The sentence says the other way what the quote states of the same thing ("degrades a model's ability to
    distinguish toxic prompts" / "improves an LLM's capacity to distinguish truly toxic prompts"): a comparison word of
    one way in the sentence, one of the other way in the quote, and at least `least` of the words each governs (to the end
    of its clause) shared, the quote saying none of them the sentence's way. Those words."""
    def governed(text: str) -> list[tuple[str, set[str]]]:
        out = []
        for match in _WORD_AT.finditer(text):
            word = match.group(0).lower()
            if (word in UP or word in DOWN) and _CHANGING.search(word):  # "improves", not "long" (a kind, no change)
                terms = set().union(*[stems(w) for w in _clause_words(text, match.end())
                                      if w not in UP and w not in DOWN and w not in PREPOSITIONS and len(w) > 3])
                out.append(("up" if word in UP else "down", terms))
        return out
    theirs = governed(quote)
    for way, terms in governed(claim):
        same_way = set().union(*[t for w, t in theirs if w == way]) if theirs else set()
        for other, held in theirs:
            shared = (terms & held) - same_way
            if other != way and len(shared) >= least:
                return " ".join(sorted(shared))
    return ""


_WORD_AT = re.compile(r"[A-Za-z]+")
_CHANGING = re.compile(r"(?:[^s]s|ed|ing)$")  # a verb's form: what a thing does, not what it is ("less" is no verb)
_FIGURE = re.compile(r"\d")
_CLAUSE_END = re.compile(r"[,;:.()!?](?=\s|$)|\b(?:and|but)\b", re.I)  # "3,900" and "0.4%" go on


def _clause_words(text: str, start: int) -> list[str]:
    """The words from `start` to the end of their clause: what a "not" or a "reduces" there governs."""
    return words(_CLAUSE_END.split(text[start:], maxsplit=1)[0])


def _figure_key(word: str) -> str:
    return word.strip("×x~")  # "×2.77" is 2.77


def departed(text: str) -> str:
    """What the text moves away from without denying it ("from static function fitting to ...", "beyond X"):
    a claim that denies it ("rather than static function fitting") says no more than the text."""
    return " ".join(m.group(1) or m.group(2) for m in _DEPARTED.finditer(text))


def negation_clash(claim: str, quote: str, stems: Callable[[str], AbstractSet[str]]) -> str:
    """A word one text denies and the other affirms ("requires retraining" / "without retraining"). A word inside a longer
    denied phrase clashes only where the other text affirms the phrase, not the word alone: its last word (an English
    phrase's head: "without requiring model retraining" denies retraining, not "model outputs") or two of its words; and a
    phrase both texts deny in part ("instead of the full-precision output" / "rather than the true output") is one denial."""
    claim_phrases, quote_phrases = denied_phrases(claim), denied_phrases(quote)
    whole = _joined_denial(claim, claim_phrases, quote, quote_phrases) or _joined_denial(quote, quote_phrases, claim, claim_phrases)
    if whole:
        return whole
    claim_denied = " ".join(w for p in claim_phrases for w in p)
    quote_denied = " ".join(w for p in quote_phrases for w in p)
    said, heard = stems(claim_denied), stems(quote_denied)
    claim_all, quote_all = stems(claim), stems(quote)
    for word in sorted(heard - said):
        if (word in claim_all and not _affirmed(word, quote, quote_denied)
                and _phrase_affirmed(word, quote_phrases, claim_all, said, stems)):
            return word
    away = departed(quote)
    left = stems(away) if away else set()
    for word in sorted(said - heard):
        if (word in quote_all and word not in left and not _affirmed(word, claim, claim_denied)
                and _phrase_affirmed(word, claim_phrases, quote_all, heard, stems)):
            return word
    return ""


_JOINED = re.compile(r"[@\d]|\w-\w")  # Pass@k, GPT-4, zero-shot: one thing, whose parts its kin share (Pass@1)


def _joined_denial(text: str, phrases: list[list[str]], other: str, other_phrases: list[list[str]]) -> str:
    """A joined word ("Pass@k") the text denies and the other affirms, the text not affirming it elsewhere: matched
    whole, for its stems are its kin's too ("excels on Pass@1 but not on Pass@k" / "in both Pass@1 and Pass@k"). A
    phrase the other text denies in part too ("instead of the full-precision output" / "rather than the true output")
    is one denial."""
    if not any(_JOINED.search(w) for p in phrases for w in p):
        return ""
    own, theirs = Counter(words(text)), set(words(other))
    denied = {w for p in other_phrases for w in p}
    for phrase in phrases:
        if denied.intersection(phrase):
            continue
        for word in phrase:
            if _JOINED.search(word) and word in theirs and own[word] == 1:
                return word
    return ""


def _phrase_affirmed(stem: str, phrases: list[list[str]], other: AbstractSet[str], other_denied: AbstractSet[str],
                     stems: Callable[[str], AbstractSet[str]]) -> bool:
    """Some denied phrase holding the word is affirmed by the other text: a one-word phrase, or its head (last word) or
    two of its words (a hyphened word's parts count apart) in the other text, which does not deny that head itself."""
    for phrase in phrases:
        held = [stems(w) for w in phrase]
        if not any(stem in h for h in held):
            continue
        if held[-1] & other_denied:
            continue  # the other text denies the phrase's head too: one denial, qualified otherwise
        if len(phrase) == 1 or held[-1] & other or len(set().union(*held) & other) >= 2:  # "full-precision": two words
            return True
    return False


def _affirmed(stem: str, text: str, negated: str) -> bool:
    """The text also uses the word outside what it denies ("code editing rather than code generation"):
    it does not deny the word as such."""
    def count(words_: list[str]) -> int:  # "deadzone-trapped" uses "trap" as much as "trapped" does
        return sum(any(part.startswith(stem) for part in w.split("-")) for w in words_)
    return count(words(text)) > count(negated.split())


def _forms(word: str) -> set[str]:
    return {word, word + "s", word + "d", word + "ed", word + "es", word + "ly", word.rstrip("e") + "ing",
            word.rstrip("e") + "ed", word.rstrip("e") + "es"}


_OPPOSITE_FORMS = [(_forms(a), _forms(b), a, b) for a, b in ANTONYMS] + [(_forms(b), _forms(a), b, a) for a, b in ANTONYMS]


def antonym_clash(claim: set[str], quote: set[str]) -> str:
    """A word of the claim whose antonym the quote uses, where the quote does not use the word itself
    ("a negative correlation" for the abstract's "a positive correlation")."""
    for mine, theirs, word, other in _OPPOSITE_FORMS:
        if claim & mine and quote & theirs and not quote & mine and not claim & theirs:
            return f"{other}' where the sentence says '{word}"
    return ""


def opposite_prefix(claim: set[str], quote: set[str]) -> str:
    """A word of the claim whose un-/in-/non- form is in the quote, or the other way round ("reliable" / "unreliable")."""
    for word in claim:
        for prefix in ("un", "in", "non", "non-", "im", "ir", "dis"):
            if len(word) > 4 and prefix + word in quote and prefix + word not in claim and word not in quote:
                return word
            if (word.startswith(prefix) and len(word) - len(prefix) > 4 and word[len(prefix):] in quote
                    and word[len(prefix):] not in claim and word not in quote):
                return word
        for one, two in (("over", "under"), ("under", "over")):  # over-confident / under-confident
            if word.startswith(one) and len(word) - len(one) > 4 and two + word[len(one):] in quote and word not in quote:
                return word
        if word.endswith("less") and len(word) > 7 and word[:-4] + "ful" in quote and word not in quote:
            return word  # harmless / harmful
        if word.endswith("ful") and len(word) > 6 and word[:-3] + "less" in quote and word not in quote:
            return word
    return ""


def superlatives(tokens: list[str], comparative_zipf: float) -> set[str]:
    """The text's superlatives: best/worst/state-of-the-art, and each -est word whose -er form is a common
    English word (largest/larger, easiest/easier; not interest, honest or manifest)."""
    return {t for t in tokens if t in SUPERLATIVES or (len(t) > 5 and t.endswith("est") and _comparative(t, comparative_zipf))}


@lru_cache(maxsize=4096)
def _comparative(word: str, comparative_zipf: float) -> bool:
    stem = word[:-3]
    forms = {stem + "er", word[:-2] + "r", word[:-4] + "ier" if stem.endswith("i") else ""}
    return any(form and zipf_frequency(form, "en") >= comparative_zipf for form in forms)
