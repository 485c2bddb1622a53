"""The offline answerer: picks and orders the source sentences that answer the question.

Deterministic and network-free. Every sentence it returns is quoted verbatim from a
source and cited, so its answers are grounded by construction. Sentences are chosen by
meaning (MiniLM cosine to the question, the embeddings the service already has) combined
with lexical evidence (the question's rare terms, idf-weighted). Whether to answer at all
is not its call: the answerability judge decided that before it was asked; it refuses
only when it was handed no sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import product
from typing import AbstractSet, Iterator, Sequence

import numpy as np

from .evidence import ASKING_WORDS
from .followups import standalone_question
from .segments import is_item_label
from .specifics import alike, counted_things, counts_any
from ..store.lexical import content_terms
from .composing import Candidate, Composition, calls, compared, defining, each_named, explained, followed, listed, names, one_paper
from ..questions import (
    answer_kind, asked_of_each, asks_cause, asks_each, asks_count, asks_figures, defined_thing, is_plural, is_topic_query, sub_questions,
)
from ..records import REFUSAL, AnswerKind, Completion, CorpusView, ModelRequest, Passage, Source, Usage
from ..corpus.roles import Role, RoledSentence, role_of, roled_sentence, sentence_roles, states_number
from ..corpus.labels import named_things
from ..corpus.names import name_key, own_names
from ..corpus.textclean import sentence_spans



@dataclass(frozen=True)
class ExtractiveTuning:
    """The extractive model's numbers; each is a setting (see config.py for why each value)."""

    semantic_weight: float = 0.6
    number_bonus: float = 0.15
    rank_decay: float = 0.9
    multi_share: float = 0.5
    second_share: float = 0.8
    max_papers: int = 8
    kin_meaning: float = 0.7
    kin_words: float = 0.6
    roles_cache: int = 4096  # abstracts whose sentence roles are kept: the same abstracts come back question after question
    per_named: int = 2
    figure_words: float = 0.5
    count_window: int = 4  # a number this many words before a thing counts it (setting count_window)
    list_words: float = 0.2  # a listed paper's best sentence holds more than this share of the best one's question words
    list_own_share: float = 0.5  # a listed paper's scene-setting best sentence comes with its own work scoring this share of it


_ASK_CHOICES = 3  # sentences weighed for each question of a several-question one (3 questions: 27 assignments)
_MOST_ASKS = 5  # questions of one given a sentence each: 3**5 assignments at most, whatever a caller sends


class ExtractiveModel:
    """An answerer made of the sources' own sentences, each cited."""

    name = "extractive"
    follows_instructions = False  # it quotes sentences; a caller's instructions cannot change which

    def __init__(self, tuning: ExtractiveTuning | None = None) -> None:
        self.tuning = tuning or ExtractiveTuning()
        self._roles = lru_cache(maxsize=self.tuning.roles_cache)(_roles_by_start)

    def answer(self, question: str, sources: list[Source], corpus: CorpusView | None = None, about: Sequence[str] = (),
               every: bool = False, several: bool = False, called: bool = False, meaning: str = "") -> str:
        """`every`: one sentence from each paper in `about` (an author's papers), none left out by score; `several`: a
        list of the papers on the question's topic, though its wording does not ask for papers (a search-box query);
        `called`: the question calls each paper in `about` by its own name, so each is answered; `meaning`: what MiniLM
        reads for the question when not the question itself (a foreign one's English words).

        A question about several papers that names some ("which papers report on MMLU-Pro?") is
        answered from all the sources, the named ones always among them: a name narrows a one-paper
        question, but the papers that do the same thing without the name are part of the list."""
        kind, figures = answer_kind(question), asks_figures(question)
        # "SeedPrints vs ENS: how do these two approaches differ?" is plural in its words: a comparison of the two it calls
        contrast = kind is AnswerKind.COMPARISON and sum(s.paper_id in about and calls(question, s.label) for s in sources) > 1
        plural = (kind is AnswerKind.LIST or several or is_plural(question)) and not every and not contrast
        pool = sources if plural else [s for s in sources if s.paper_id in about] or sources
        per_source = [c for c in self._candidates(question, pool, corpus, figures and not plural, meaning) if c]  # a list is chosen by topic
        if not per_source:
            return REFUSAL
        per_source.sort(key=lambda cands: -cands[0].score)
        chosen = self._compose(question, kind, figures, per_source, about, every, plural, called)
        if not plural:  # "What is X, and how does it work?": each part answered
            chosen += self._each_asked(question, per_source[0], chosen, corpus, figures)
            chosen += self._counting(question, per_source[0], chosen)
            chosen.sort(key=lambda c: (c.source.n, c.start))  # one paper, or a comparison: each paper's sentences in order
        unique = {(c.source.n, c.start): c for c in reversed(chosen)}  # a sentence picked twice is said once, where first picked
        said = [c for c in chosen if unique.pop((c.source.n, c.start), None) is not None]
        if len({c.source.n for c in said}) > 1:  # a list or a comparison: one item per paper, named
            return itemised(said)
        return " ".join(_cite(c) for c in said)

    def _compose(self, question: str, kind: AnswerKind, figures: bool, per_source: list[list[Candidate]], about: Sequence[str],
                 every: bool, plural: bool, called_all: bool = False) -> list[Candidate]:
        """The sentences that answer this kind of question, from the papers it is about."""
        t = self.tuning
        top = per_source[0][0].score
        composition = self._composition()
        if every and about:
            return [cands[0] for cands in per_source]
        if plural and len(per_source) > 1:  # one sentence from each relevant paper, the most relevant first
            meaning = max(c.meaning for cands in per_source for c in cands)
            words = max(c.words for cands in per_source for c in cands)
            things = counted_things(question)
            picked = [c for c in per_source if c is per_source[0] or c[0].source.paper_id in about
                      or (c[0].score >= t.multi_share * top or self._kin(c, meaning, words) or self._counts(c, things))
                      and (not words or max(x.words for x in c) > t.list_words * words)][: t.max_papers]
            listing = listed(picked, figures, composition, things)
            each = asked_of_each(question)
            return followed(listing, picked, each, figures, composition) if each is not None else listing
        named = [c for c in per_source if c[0].source.paper_id in about]
        if kind is AnswerKind.COMPARISON and len(named) > 1:
            return compared(named, figures)
        called = [c for c in named if calls(question, c[0].source.label)]
        if (called_all or asks_each(question)) and len(named) > 1:  # "TRM and K²-Agent", "X and Y each": one answer each
            called = named
        if len(called) > 1:  # "Which is faster, CAST or SERE?" is a comparison too: each paper it calls by name is answered
            return each_named(kind, called, figures, composition)
        chosen = one_paper(kind, per_source[0], figures, composition)
        if kind is AnswerKind.PROBLEM and asks_cause(question):  # "Why does the entropy bonus fail?"
            chosen = explained(per_source[0], chosen)
        thing = defined_thing(question) if kind is AnswerKind.DEFINITION else ""
        if thing:  # "What is missingness bias?"
            defined = defining(thing, per_source[0], chosen)
            if defined is not chosen:
                return defined
        return chosen + self._complete(per_source[0], chosen)

    def _composition(self) -> Composition:
        """The composer's numbers, from the model's settings."""
        t = self.tuning
        return Composition(t.second_share, per_named=t.per_named, figure_words=t.figure_words, count_window=t.count_window,
                           own_share=t.list_own_share)

    def _counts(self, cands: list[Candidate], things: Sequence[str]) -> bool:
        """A paper that counts a thing a list question asks the count of ("how many scenes or clips each") answers it."""
        return bool(things) and any(counts_any(c.text, things, self.tuning.count_window) for c in cands)

    def _kin(self, cands: list[Candidate], meaning: float, words: float) -> bool:
        """A paper retrieval ranked low whose best sentence is about as close in meaning to the question (`meaning`: the
        closest of any paper's), and holds about as much of its rare words (`words`), as the best of any paper's: as much
        on the topic as the first, whatever its rank."""
        t = self.tuning
        return (max(c.meaning for c in cands) >= t.kin_meaning * meaning and words > 0
                and max(c.words for c in cands) >= t.kin_words * words)

    def _each_asked(self, question: str, cands: list[Candidate], chosen: list[Candidate], corpus: CorpusView | None,
                    figures: bool) -> list[Candidate]:
        """A question that asks for two things ("How many tasks? And the best success rate?", "What is X, and how does it
        work?") gets, for each of its questions, a sentence of its own: the sentences sharing most of their words (figured
        ones, if they ask a figure), each question a different one, so that the sentence answering both best does not leave
        one unanswered. A question with no word in common (another script; "..., and how?") takes the best figured
        sentence the answer lacks, if it asks figures, else the sentence its own kind picks. A code link answers no part."""
        asks = sub_questions(question)[:_MOST_ASKS]
        if len(asks) < 2:
            return []
        options: list[list[tuple[float, float, int]]] = []
        for ask in asks:
            pool = [i for i, c in enumerate(cands) if (c.figures or not asks_figures(ask)) and (figures or c.role is not Role.AVAILABILITY)]
            overlap = _overlap(ask, [cands[i].text for i in pool], corpus, typos=True)
            ranked = sorted(((o, cands[i].score, i) for o, i in zip(overlap, pool) if figures or o), reverse=True)
            if not figures and not ranked:  # "and how?": its kind's sentence
                picks = one_paper(answer_kind(ask), cands, False, self._composition())
                ranked = [(0.0, c.score, cands.index(c)) for c in picks if c not in chosen and c.role is not Role.AVAILABILITY][:1]
            if ranked and not ranked[0][0]:
                ranked = [r for r in ranked if cands[r[2]] not in chosen]  # nothing in common: a sentence not yet given
            options.append(ranked[:_ASK_CHOICES])
        options = [o for o in options if o]
        if not options:
            return []
        best = max((pick for pick in product(*options) if len({i for _, _, i in pick}) == len(pick)),
                   key=lambda pick: (sum(o for o, _, _ in pick), sum(score for _, score, _ in pick)), default=())
        more: list[Candidate] = []
        for _, _, i in best:
            if cands[i] not in chosen + more:
                more.append(cands[i])
        return more

    def _counting(self, question: str, cands: list[Candidate], chosen: list[Candidate]) -> list[Candidate]:
        """A question asking how many of a thing ("number of tasks/questions") gets the paper's best sentence that counts
        one of them, when no sentence chosen does: "over 10 search systems" is a count, not of what was asked."""
        things = counted_things(question)
        window = self.tuning.count_window
        if not things or any(counts_any(c.text, things, window) for c in chosen):
            return []
        return [c for c in cands if counts_any(c.text, things, window)][:1]

    def _complete(self, cands: list[Candidate], chosen: list[Candidate]) -> list[Candidate]:
        """A one-paper answer names the paper's method."""
        named = any(" " not in name for name in own_names(cands[0].source.label))  # a method's name, a title's before its colon
        if named and not any(names(c) for c in chosen):
            return [c for c in cands if names(c)][:1]
        return []

    def _candidates(self, question: str, sources: list[Source], corpus: CorpusView | None, figures: bool,
                    meaning: str = "") -> list[list[Candidate]]:
        """Every sentence of each source's passages, scored by meaning and rare-term overlap, best first, with its role.

        All sources' sentences are embedded and weighed in one pass: one call to the model for
        whatever the cache lacks, the question's terms analysed once."""
        spans = [[s for passage in source.passages for s in _sentences(passage)] for source in sources]
        texts = [text for source_spans in spans for _, _, text in source_spans]
        own = _own_terms(question, sources, texts)
        asking = set() if is_topic_query(question) else ASKING_WORDS  # "voice audio models" asks nothing: each word is its topic
        scores = iter(zip(_cosines(meaning or question, texts, corpus), _overlap(question, texts, corpus, ignore=own | asking)))
        t = self.tuning
        counting = figures and asks_count(question)  # "how many problems": a plain count is the figure asked
        per_source = []
        for source, source_spans in zip(sources, spans):
            roles = self._roles_of(source.paper_text, corpus)
            found = []
            for start, end, text in source_spans:
                sem, lex = next(scores)
                score = t.semantic_weight * sem + (1 - t.semantic_weight) * lex
                role = roles.get(start) or roled_sentence(text, start, end, role_of(text, 1, 3, None))
                figured = role.figures or (counting and states_number(text))
                if figures and figured:
                    score += t.number_bonus
                score *= t.rank_decay ** (source.n - 1)  # retrieval's order is evidence too
                found.append(Candidate(source, start, end, text, score, role.role, figured, role.negative, meaning=sem, words=lex))
            per_source.append(sorted(found, key=lambda c: (-c.score, c.start)))
        return per_source

    def _roles_of(self, paper_text: str, corpus: CorpusView | None) -> dict[int, RoledSentence]:
        """Each sentence's role by where it starts: as the ingest stored it, else derived (a store made before roles were kept)."""
        stored = corpus.roles(paper_text) if corpus is not None else None
        return {r.start: r for r in stored} if stored is not None else self._roles(paper_text)

    def _reply(self, request: ModelRequest) -> str:
        if request.task == "rewrite":
            return standalone_question(request.question, request.history)
        return self.answer(request.question, request.sources, request.corpus, request.about, request.every, request.several,
                           request.called, request.meaning)

    def complete(self, request: ModelRequest) -> Completion:
        return Completion(self._reply(request), Usage(0, 0))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        text = self._reply(request)
        for piece in re.findall(r"\S+\s*", text):
            yield piece
        yield Usage(0, 0)


def _cosines(question: str, texts: list[str], corpus: CorpusView | None) -> list[float]:
    """Cosine of each sentence to the question (vectors are L2-normalised); zeros without embeddings."""
    vectors = corpus.embed([question, *texts]) if corpus is not None else None
    if vectors is None:
        return [0.0] * len(texts)
    matrix = np.asarray(vectors, dtype=np.float32)
    return [max(0.0, float(v)) for v in matrix[1:] @ matrix[0]]


def _overlap(question: str, texts: list[str], corpus: CorpusView | None, typos: bool = False,
             ignore: AbstractSet[str] = frozenset()) -> list[float]:
    """Share of the question's idf weight (less the `ignore` terms, when others are left) each sentence contains;
    with `typos`, a word of five letters or more matches within one edit ("questons" / "questions"). A term of an
    abbreviation's other form stands in for the question's own ("MoE methods" holds "mixture-of-experts")."""
    terms = content_terms(question)
    terms = (terms - ignore) or terms
    forms = [(content_terms(written) & terms, content_terms(other)) for written, other in corpus.expanded(question)] if corpus else []
    idf = corpus.idf if corpus is not None else (lambda term: 1.0)
    total = sum(idf(term) for term in terms)
    if total <= 0:
        return [0.0] * len(texts)
    shares = []
    for text in texts:
        have = content_terms(text)
        held = terms & have
        held |= {t for written, other in forms if other and other <= have for t in written}
        if typos:
            held |= {t for t in terms - have if any(alike(t, h) for h in have)}
        shares.append(sum(idf(t) for t in held) / total)
    return shares


def _own_terms(question: str, sources: list[Source], texts: list[str]) -> set[str]:
    """The paper's own name, when the question asks it about another named thing its sentences hold: within one paper
    the name tells no sentence from another, the thing does ("CUDA-L1 on H100?" is answered by the H100 one)."""
    if len(sources) != 1:
        return set()
    label = name_key(sources[0].label)
    others = [n for n in named_things(question) if name_key(n) not in label and any(n in text for text in texts)]
    return content_terms(sources[0].label) if others else set()


def _roles_by_start(paper_text: str) -> dict[int, RoledSentence]:
    """The role of each sentence of an abstract, by where it starts in the paper's text."""
    return {r.start: r for r in sentence_roles(paper_text)}


def _sentences(passage: Passage) -> list[tuple[int, int, str]]:
    return [(passage.start + s, passage.start + e, passage.text[s:e]) for s, e in sentence_spans(passage.text)]


def itemised(said: Sequence[Candidate]) -> str:
    """An answer quoting several papers as a Markdown list, one item per paper in the order first quoted, each opening
    with the paper's label in bold ("- **ODEBrain**: ... [3]."): a run of quotes does not say which paper is which. The
    label is the answer's structure, not a claim (`segments`); a title that could not be read as one (a figure in it,
    Markdown's own marks, longer than a label line holds) gives way to its name before the colon, else the item opens
    with its sentences, still its paper's."""
    groups: dict[int, list[Candidate]] = {}
    for c in said:
        groups.setdefault(c.source.n, []).append(c)
    items = []
    for group in groups.values():
        label = next((name for name in own_names(" ".join(group[0].source.label.split())) if is_item_label(name)), "")
        head = f"**{label}**: " if label else ""  # a title, else its name before the colon ("Ember: Stable 4-bit ...")
        items.append("- " + head + " ".join(_cite(c) for c in group))
    return "\n".join(items)


def _cite(candidate: Candidate) -> str:
    """'… speedup.' -> '… speedup [2].' so that the quote stays an exact substring."""
    text = candidate.text.rstrip()
    if text[-1:] in ".!?":
        return f"{text[:-1]} [{candidate.source.n}]{text[-1]}"
    return f"{text} [{candidate.source.n}]."
