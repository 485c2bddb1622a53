"""One claim against one source: the quote that carries it, and whether it states, contradicts or
cannot confirm the claim.

Rare-term overlap (and MiniLM, when it is local) picks the quote; the verdict comes from aligning
the claim with it: each figure found in that quote and tied to the same words, each named thing in
the source, the same direction of comparison and negation and the same sides (polarity.py), no
"every"/"only"/superlative the quote lacks, no detail the abstract never states (new rare words, a
joined clause no sentence carries), and most of the claim's idf-weighted words present.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from wordfreq import zipf_frequency

from ..corpus.textclean import sentence_spans
from ..corpus.names import occurs
from ..records import Citation, SentenceVerdict, Source
from ..store.lexical import content_terms, stem
from .abstracts import Read, Reads, Terms
from .bindings import rare_word, roles
from .figurechecks import FigureCheck
from .claims import FIGURE_PIECE, FUNCTION_WORDS, HEDGES, INTENSIFIERS, JOINS, LIGHT, QUANTIFIERS, SCAFFOLD, about_prior_work, ending, enumerated, exchanged, fold, likened, named_things, object_words, other_compound, other_statistic, substituted, variant, words
from .polarity import antonym_clash, contrast_sides, denied_statement, direction_clash, turned_statement, negation_clash, only_clash, opposite_prefix, sole_clash, steady_clash, superlatives, swapped, turned_whole
from .tuning import Tuning

Embed = Callable[[list[str]], Any]  # texts -> L2-normalised vectors (MiniLM), cached by the caller
Problem = Optional[tuple[SentenceVerdict, str]]  # what one check found wrong, or None


@dataclass
class Finding:
    source: Source
    verdict: SentenceVerdict
    reason: str
    start: int
    end: int
    coverage: float  # idf-weighted share of the claim's words the quote (and its abstract) holds

    def rank(self) -> tuple[bool, float]:
        return self.verdict is SentenceVerdict.SUPPORTED, self.coverage

    def citation(self, sentence: int) -> Citation:
        s = self.source
        return Citation(s.n, s.paper_id, s.label, s.paper_text[self.start:self.end], self.start, self.end,
                        round(self.coverage, 3), self.verdict is SentenceVerdict.SUPPORTED, sentence, s.corpus)


class Judge:
    def __init__(self, idf: Callable[[str], float], embed: Embed | None, tuning: Tuning):
        self.idf, self.embed, self.tuning = idf, embed, tuning
        self.threshold, self.hedge_share = tuning.threshold, tuning.hedge_share
        self.elsewhere_credit, self.contradict_share = tuning.elsewhere_credit, tuning.contradict_share
        self.prior_weight = tuning.prior_weight  # a sentence about earlier work is a weaker quote for a claim about the paper
        self.figure_check = FigureCheck(idf, tuning.same_form)
        self.quantified = content_terms(" ".join(sorted(QUANTIFIERS)))  # "every", "only": checked word for word, apart

    def judge(self, claim: str, source: Source, reads: Reads, by_meaning: bool = True) -> Finding:
        """The claim against one source; `by_meaning` lets MiniLM re-rank the candidate quotes."""
        text = source.paper_text
        read = reads.abstracts.get(text) or reads.abstracts.setdefault(text, self._read(text, reads))
        exact = text.find(claim.rstrip("."))
        if len(claim) > 20 and exact >= 0:  # quoted verbatim: the best possible support, quoted whole
            inside = [(s, e) for s, e in read.spans if s < exact + len(claim.rstrip(".")) and e > exact] or [(exact, exact + len(claim))]
            return Finding(source, SentenceVerdict.SUPPORTED, "its cited abstract states it", inside[0][0],
                           inside[-1][1], 1.0)
        terms = self._terms(claim, source, reads)
        wanted = reads.figures(claim)
        scored = []
        of_prior = about_prior_work(claim)
        for (s, e), held, found, prior in zip(read.spans, read.terms, read.figures, read.prior):
            hits = sum(any(f.matches(g) for g in found) for f in wanted)
            coverage = self._coverage(terms, held, read.everywhere)
            scored.append((coverage * (self.prior_weight if prior and not of_prior else 1.0), hits, s, e, coverage))
        best = self._pick(claim, scored, text, by_meaning)
        _, _, start, end, coverage = scored[best]
        earlier = read.prior[best] and not of_prior  # the quote speaks of earlier work, the claim of the paper
        verdict, reason = self._align(claim, text[start:end], source, coverage, reads, earlier)
        alike = self._likened(claim, text[start:end], reads) if verdict is SentenceVerdict.SUPPORTED else ""
        if alike:
            verdict, reason = SentenceVerdict.UNVERIFIED, f"the quote says it of {alike}, not of what the sentence likens to them"
        joined = self._unconfirmed_part(claim, source, read, reads) if verdict is SentenceVerdict.SUPPORTED else ""
        if joined:
            verdict, reason = SentenceVerdict.UNVERIFIED, f"no sentence of the cited abstract confirms '{joined}'"
        other = self.figure_check.elsewhere(claim, best, read, text, reads) if verdict is SentenceVerdict.SUPPORTED else ""
        if other:
            verdict, reason = SentenceVerdict.UNVERIFIED, f"the abstract gives {other} for more of the words around it"
        return Finding(source, verdict, reason, start, end, coverage)

    def _likened(self, claim: str, quote: str, reads: Reads) -> str:
        """A thing the claim likens its subject to ("as hard compression methods do") that the quote speaks of: the
        quote says what that thing does, so it cannot confirm that the subject does it too. The thing, or ''."""
        for thing in likened(claim):
            own = {t for t in reads.stems(thing) if t not in FUNCTION_WORDS}
            if len(own) >= 2 and len(own & reads.stems(quote)) >= len(own) - 1:  # "prior" and the like may be the claim's own
                return thing
        return ""

    def _unconfirmed_part(self, claim: str, source: Source, read: Read, reads: Reads) -> str:
        """A clause joined to the claim ("..., and it was tested on X") is a claim of its own: some sentence of
        the abstract must carry it, however well the quote carries the rest."""
        parts = [p.strip() for p in JOINS.split(claim) if p.strip()]
        for part in parts if len(parts) > 1 else []:
            terms = self._terms(part, source, reads)
            if terms and max(self._coverage(terms, held, read.everywhere) for held in read.terms) < self.threshold:
                return part
        return ""

    def _joined(self, claim: str, name: str, source: Source, reads: Reads) -> bool:
        """The name is in a clause joined to the claim (", and it ...") that a sentence naming it carries."""
        read, text = reads.abstracts[source.paper_text], source.paper_text
        for part in (p for p in JOINS.split(claim) if name in fold(p).lower()) if len(JOINS.split(claim)) > 1 else ():
            terms = self._terms(part, source, reads)
            if any(name in fold(text[s:e]).lower() and self._coverage(terms, held, read.everywhere) >= self.threshold
                   for (s, e), held in zip(read.spans, read.terms)):
                return True
        return False

    def _read(self, text: str, reads: Reads) -> Read:
        spans = sentence_spans(text) or [(0, len(text))]
        return Read(spans, reads.stems_each([text[s:e] for s, e in spans]), reads.stems(text),
                    [reads.figures(text[s:e]) for s, e in spans], [about_prior_work(text[s:e]) for s, e in spans])

    def _terms(self, claim: str, source: Source, reads: Reads) -> dict[str, float]:
        """The claim's content words and their rarity; the cited paper's own name and figures are checked apart."""
        known = reads.terms.get((claim, source.label))
        if known is not None:
            return known
        named = reads.stems(source.label) if _is_name(source.label, self.tuning.name_label_words) else set()  # not a description
        light = LIGHT if reads.figures(claim) else set()  # a verb whose object is a figure checked apart
        found = reads.terms[(claim, source.label)] = {
            t: self.idf(t) for t in reads.stems(claim)
            if t not in named and not FIGURE_PIECE.fullmatch(t) and t not in HEDGES and t not in light and t not in FUNCTION_WORDS
            and not any(t.startswith(w) for w in SCAFFOLD)}
        return found

    def _coverage(self, terms: dict[str, float], quote: Terms, everywhere: Terms) -> float:
        total = sum(terms.values())
        if not total:
            return 1.0
        held = 0.0
        for term, weight in terms.items():
            if quote.has(term, self.tuning.same_form):
                held += weight
            elif everywhere.has(term, self.tuning.same_form):
                held += self.elsewhere_credit * weight
        return held / total

    def _pick(self, claim: str, scored: list[tuple[float, int, int, int, float]], text: str, by_meaning: bool) -> int:
        """The best quote by word overlap and figures found, re-ranked by meaning among the first few."""
        hit, meaning = self.tuning.figure_hit, self.tuning.meaning
        ranked = sorted(range(len(scored)), key=lambda i: -(scored[i][0] + hit * scored[i][1]))[:self.tuning.pick]
        if self.embed is None or not by_meaning or len(ranked) < 2:
            return ranked[0]
        vectors = self.embed([claim] + [text[scored[i][2]:scored[i][3]] for i in ranked])
        closeness = {i: float(np.dot(vectors[0], v)) for i, v in zip(ranked, vectors[1:])}
        return max(ranked, key=lambda i: scored[i][0] + hit * scored[i][1] + meaning * max(0.0, closeness[i]))

    def _align(self, claim: str, quote: str, source: Source, coverage: float, reads: Reads,
               earlier: bool = False) -> tuple[SentenceVerdict, str]:
        """Contradictions first (another figure, the opposite direction, things bound otherwise), then what is missing."""
        about = coverage >= self.contradict_share  # the quote speaks of the same thing
        found = self.figure_check.check(claim, quote, about, reads)
        if found is None or found[0] is not SentenceVerdict.CONTRADICTED:  # a contradiction outweighs an unclear figure
            bound = self._roles(claim, quote, source, about, reads) or self._opposites(claim, quote, about, reads)
            if bound is not None and (found is None or bound[0] is SentenceVerdict.CONTRADICTED):
                found = bound
        found = found or self._names(claim, quote, source, reads) or self._details(claim, quote, source, about and not earlier, reads)
        if found is not None:
            return found
        if coverage < self.threshold:
            return SentenceVerdict.UNVERIFIED, "the cited abstract does not confirm it"
        return SentenceVerdict.SUPPORTED, "the cited quote states it"

    def _opposites(self, claim: str, quote: str, about: bool, reads: Reads) -> Problem:
        """The quote says the opposite: an un-/in- form, or a comparison pointing the other way."""
        if not about:
            return None
        said, heard = words(claim), words(quote)
        flipped = opposite_prefix(set(said), set(heard))
        if flipped:
            return SentenceVerdict.CONTRADICTED, f"the quote says the opposite of '{flipped}'"
        antonym = antonym_clash(set(said), set(heard))
        if antonym:
            return SentenceVerdict.CONTRADICTED, f"the quote says '{antonym}'"
        if turned_whole(said, heard, reads.stems):
            return SentenceVerdict.CONTRADICTED, "the quote points the other way (more/less, better/worse)"
        one, other = exchanged(said, heard)
        if one:
            return SentenceVerdict.CONTRADICTED, f"the sentence has '{one}' and '{other}' in each other's place"
        changes = steady_clash(reads.stems(claim), reads.stems(quote))
        if changes:
            return SentenceVerdict.CONTRADICTED, f"the quote says it changes ('{changes}') where the sentence says it holds steady"
        reversed_roles = swapped(said, heard, reads.stems, self.tuning.reach)
        if reversed_roles:
            return SentenceVerdict.CONTRADICTED, f"the quote has the comparison the other way round ('{reversed_roles}')"
        turned = direction_clash(said, heard, reads.stems)
        if turned:
            return SentenceVerdict.CONTRADICTED, f"the quote says '{turned}' goes the other way"
        return None

    def _roles(self, claim: str, quote: str, source: Source, about: bool, reads: Reads) -> Problem:
        """Each figure given for the named thing the quote gives it for, and each doer doing what the quote says."""
        found = roles(fold(claim), fold(quote), source.label, reads.figures, self.tuning.role_window,
                      self.tuning.role_common_zipf, self.tuning.function_zipf) if about else ""
        return (SentenceVerdict.CONTRADICTED, found) if found else None

    def _names(self, claim: str, quote: str, source: Source, reads: Reads) -> Problem:
        """Every named thing in the abstract, as the same thing, and in the quote that carries the claim."""
        names = named_things(fold(claim))
        text, label = fold(source.paper_text).lower(), fold(source.label).lower()
        missing = sorted(n for n in names if not occurs(text, n) and not occurs(label, n))  # GPT-4 is not GPT-4.1
        if missing:
            return SentenceVerdict.UNVERIFIED, f"[{source.n}] does not name {missing[0]}"
        other = next((v for v in (variant(n, fold(claim), fold(quote), reads.stems) for n in sorted(names)) if v), "")
        if other:
            return SentenceVerdict.UNVERIFIED, f"the quote speaks of {other}"
        away = sorted(n for n in names if not occurs(fold(quote).lower(), n) and not occurs(label, n) and not self._joined(claim, n, source, reads))
        if away:  # a name the abstract gives elsewhere: the quote that carries the claim must name what it is about
            return SentenceVerdict.UNVERIFIED, f"the quote does not name {away[0]}"
        return None

    def _details(self, claim: str, quote: str, source: Source, about: bool, reads: Reads) -> Problem:
        """A negation the quote does not share, a listed item or an "every"/"only" the quote lacks."""
        said, heard = words(claim), words(quote)
        side = self._side(claim, quote, source, reads)
        clash = negation_clash(claim, side, reads.stems)
        if clash and about:
            return SentenceVerdict.CONTRADICTED, f"the quote and the sentence differ on whether '{clash}' holds"
        denied = denied_statement(claim, side, reads.stems, self.tuning.denied_words) if about else ""
        if denied:
            return SentenceVerdict.CONTRADICTED, f"the sentence denies what the quote states: '{denied}'"
        turned = turned_statement(claim, side, reads.stems, self.tuning.denied_words) if about else ""
        if turned:
            return SentenceVerdict.CONTRADICTED, f"the sentence says the other way what the quote states of '{turned}'"
        held, terms = reads.stems(quote), self._terms(claim, source, reads)
        everywhere = reads.abstracts[source.paper_text].everywhere
        unseen = sorted(t for t, weight in terms.items() if weight >= self.tuning.detail_idf and t not in self.quantified
                        and not everywhere.has(t, self.tuning.same_form))
        rare = self._rare_words(unseen, said) if len(unseen) >= self.tuning.detail_words else []
        if len(rare) >= self.tuning.detail_words:  # a paraphrase swaps a word; new rare words are a new detail
            return SentenceVerdict.UNVERIFIED, f"the cited abstract never says '{rare[0]}' or '{rare[1]}'"
        placed = [t for t in unseen if t in reads.stems(" ".join(object_words(said)))]
        if placed:  # what a preposition takes ("on ImageNet", "in healthcare") is a setting, not a way of saying
            return SentenceVerdict.UNVERIFIED, f"the cited abstract never says '{placed[0]}'"
        listed = [t for item in enumerated(claim) for t in sorted(reads.stems(item)) if t in terms and not held.has(t, self.tuning.same_form)]
        if listed:
            return SentenceVerdict.UNVERIFIED, f"the quote does not list '{listed[0]}'"
        for mine, theirs, last in substituted(said, heard, self.tuning.frame):  # the end: a word the abstract lacks
            within = everywhere if last else held  # inside: a term the quote lacks, where the quote has a term of its own
            own = [t for t in reads.stems(mine) if t in terms and not within.has(t, self.tuning.same_form)
                   and (last or rare_word(mine, self.tuning.substitution_zipf) and rare_word(theirs, self.tuning.substitution_zipf))]
            if own and reads.stems(theirs) - reads.stems(claim):
                return SentenceVerdict.UNVERIFIED, f"the quote says '{theirs}' where the sentence says '{mine}'"
        other = self._requalified(said, heard, everywhere, reads) or other_compound(said, heard) or other_statistic(said, heard)
        if other:  # another kind of the thing: qualified otherwise, or a compound with another first part
            return SentenceVerdict.UNVERIFIED, f"the quote says '{other}'"
        sized = INTENSIFIERS.intersection(heard) or any(f.kind for f in reads.figures(quote))
        strong = sorted(INTENSIFIERS.intersection(said)) if not sized else []
        if strong:  # "dramatically improves" where the quote gives no size of its own, in words or as a measure
            return SentenceVerdict.UNVERIFIED, f"the quote does not say '{strong[0]}'"
        if about and only_clash(claim, quote, reads.stems, self.tuning.only_added_share):
            return SentenceVerdict.CONTRADICTED, "the quote says 'not only'"
        sole = sole_clash(claim, quote, reads.stems) if about else ""
        if sole:
            return SentenceVerdict.CONTRADICTED, f"the quote gives one thing alone, where the sentence adds '{sole}'"
        bare = "sota" in heard or "state of the art" in quote.lower()  # the superlative written out or short
        extra = sorted(q for q in QUANTIFIERS | superlatives(said, self.tuning.comparative_zipf) if q in said and q not in heard
                       and not (q in ("state-of-the-art", "sota") and bare))
        if extra:
            return SentenceVerdict.UNVERIFIED, f"the quote does not say '{extra[0]}'"
        return None

    def _rare_words(self, unseen: list[str], said: list[str]) -> list[str]:
        """Of the terms the abstract never uses, those whose word the language at large seldom uses (detail_zipf)."""
        written = {stem(w): w for w in said}  # each term's word, as written (Snowball on the word: microseconds)
        return [t for t in unseen if zipf_frequency(written.get(t, t), "en") < self.tuning.detail_zipf]

    def _requalified(self, said: list[str], heard: list[str], everywhere: Terms, reads: Reads) -> str:
        """The thing the claim ends on, qualified otherwise by the quote ("a standard tokenizer" for the claim's "advanced
        tokenizers"), the claim's qualifier a word the abstract uses elsewhere: the quote speaks of another kind. The
        quote's thing ends it, or stands inside it qualified by a term ("the Hessian matrix of the layer's inputs" for
        the claim's "weight matrix"): a common qualifier inside a quote is too often another phrase's word."""
        mine = ending(said)
        if not mine:
            return ""
        heads = [ending(heard[:i + 1]) for i in range(1, len(heard))]
        theirs = next((h for h in reversed(heads) if h and h[1] == mine[1] and h[0] != mine[0]
                       and (h is heads[-1] or rare_word(h[0], self.tuning.substitution_zipf))), None)
        if not theirs:
            return ""
        other, word = reads.stems(mine[0]), reads.stems(theirs[0])
        if other & reads.stems(" ".join(heard)) or word & reads.stems(" ".join(said)):
            return ""  # the quote has the claim's qualifier too, or the claim the quote's
        return f"{theirs[0]} {theirs[1]}' where the sentence says '{mine[0]} {mine[1]}" if all(
            everywhere.has(t, self.tuning.same_form) for t in other) else ""

    def _side(self, claim: str, quote: str, source: Source, reads: Reads) -> str:
        """Of a quote that sets two things against each other ("While X ..., Y ..."), the side that carries the claim."""
        sides, terms = contrast_sides(quote), self._terms(claim, source, reads)
        return sides[0] if len(sides) == 1 else max(sides, key=lambda p: self._coverage(terms, reads.stems(p), reads.stems(p)))


def _is_name(label: str, most: int) -> bool:
    """Is the paper's label a name (RouterArena, Generative Adversarial Reasoner), whose words a claim need not find in the
    quote, rather than a description drawn from its abstract ("Cache hit rate", "Hybrid optimizer that combines ...")? A
    name of several words capitalises each, as a title does; a phrase of the abstract is written in its lower case."""
    parts = label.split()
    return len(parts) <= most and (len(parts) == 1 or all(not p[0].isalpha() or p[0].isupper() for p in parts))
