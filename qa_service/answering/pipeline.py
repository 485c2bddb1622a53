"""The pipeline: question -> retrieve -> prompt -> model -> validated citations.

The answerer holds a model behind the `ChatModel` seam and never asks which class it is:
what a model that reads the sources itself needs (term rarity, embeddings) travels in
the request as a `CorpusView`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from .absence import absence_note, state_absence
from .answerability import AnswerabilityJudge
from .citations import CitationChecker
from .bridging import Bridge
from ..config import Settings
from ..store.corpora import Corpora, Scope
from ..store.embeddings import VectorCache
from ..errors import ModelError
from .followups import standalone_question
from .metaquestions import Listing, answer as listing_answer, authorship, read_question
from .models import ChatModel
from .prompting import Prompt, build_prompt, rewrite_messages
from ..records import (
    NO_MATCH, REFUSAL, Answer, CheckedAnswer, Delta, Final, ModelRequest, Reading, RefusalReason, Retrieval, Sources, StreamEvent, Timings, Turn,
    Usage, Verdict,
)
from ..questions import answer_kind, clean_question, is_plural, needs_context
from ..retrieval.retriever import Retriever
from ..corpus.textclean import encodable, sentence_spans
from ..corpus.tokens import cut_to_tokens, token_counter


class IndexCorpus:
    """The corpus as a model may see it: term rarity from BM25, embeddings when they are local.

    Sentence vectors are kept (LRU by text): the same abstracts' sentences come back question
    after question, and embedding them once is what keeps sentence choice by meaning cheap."""

    def __init__(self, corpora: Corpora, cache_size: int, abbreviation_share: float = 0.0):
        self.corpora = corpora
        self.abbreviation_share = abbreviation_share
        embed = corpora.default.local_embed()
        # through the query cache: retrieval embedded the question a moment ago, and an answer embeds only its question
        self._embed = getattr(embed, "embed_query", embed)
        self._cache = VectorCache(cache_size)
        self.local = self._embed is not None

    def idf(self, term: str) -> float:
        return self.corpora.idf(term)

    def expanded(self, question: str) -> list[tuple[str, str]]:
        return self.corpora.expanded(question, self.abbreviation_share)

    def embed(self, texts: list[str]) -> Sequence[Any] | None:
        """Sentences the ingest kept vectors for are looked up; only the rest (the question) are embedded."""
        if self._embed is None:
            return None
        stored = self.stored_vectors(texts)
        missing = [t for t, v in zip(texts, stored) if v is None]
        fresh = iter(self._cache.get_or_embed(missing, self._embed) if missing else [])
        return [v if v is not None else next(fresh) for v in stored]

    def stored_vectors(self, texts: list[str]) -> list[Any]:
        """Each text's vector from the sentence files of the corpora open in this process (None where none has it)."""
        found: list[Any] = [None] * len(texts)
        for index in self.corpora.opened():
            wanted = [i for i, v in enumerate(found) if v is None]
            if not wanted:
                break
            for i, vector in zip(wanted, index.sentences.lookup([texts[i] for i in wanted])):
                found[i] = vector
        return found

    def roles(self, text: str) -> Sequence[Any] | None:
        """The abstract's sentence roles from the sentence file of a corpus open in this process that holds it."""
        for index in self.corpora.opened():
            found = index.sentences.roles(text)
            if found is not None:
                return found
        return None

    def similarity(self, text: str, other: str) -> float:
        """The cosine of two texts, each embedded whole (vectors are L2-normalised)."""
        first, second = np.asarray(self.embed([text, other]), dtype=np.float32)
        return float(first @ second)

    def closeness(self, question: str, texts: Sequence[str]) -> list[float]:
        """Each text's best sentence cosine to the question (vectors are L2-normalised)."""
        spans = [[text[s:e] for s, e in sentence_spans(text)] or [text] for text in texts]
        vectors = np.asarray(self.embed([question, *(s for sents in spans for s in sents)]), dtype=np.float32)
        cosines = vectors[1:] @ vectors[0]
        scores, at = [], 0
        for sents in spans:
            scores.append(float(cosines[at:at + len(sents)].max()))
            at += len(sents)
        return scores


@dataclass
class Prepared:
    question: str
    asked: str
    prompt: Prompt | None
    verdict: Verdict
    found: Retrieval
    timings: Timings = field(default_factory=Timings)
    scope: Scope | None = None
    listing: Listing | None = None  # a question about metadata, answered from the records
    searched: str = ""  # the question as retrieval and the judge read it (bridged), when it differs


class Answerer:
    """Holds the parts a question needs, given to it: the composition root (service.build_answerer) builds them."""

    def __init__(self, settings: Settings, model: ChatModel, corpora: Corpora, retriever: Retriever, corpus: IndexCorpus,
                 judge: AnswerabilityJudge, checker: CitationChecker):
        self.settings = settings
        self.model = model
        self.corpora = corpora
        self.retriever = retriever
        self.corpus = corpus
        self.judge = judge
        self.checker = checker
        self._count = token_counter(settings.tokenizer_encoding)
        self.bridge = Bridge(settings)

    def prepare(self, question: str, k: int | None = None, history: Sequence[Turn] = (), instructions: str = "",
                scope: Scope | None = None) -> Prepared:
        """Retrieve, decide once whether the evidence can answer, and build the prompt if it can.

        A filter that leaves no paper, or a question about metadata, is answered without retrieval."""
        scope = scope or self.corpora.scope()
        scope.require_ready()
        started = time.perf_counter()
        asked = clean_question(question)
        if scope.filter and not scope.matching():
            verdict = Verdict.no(RefusalReason.NO_MATCH, scope.filter.describe())
            return Prepared(asked, asked, None, verdict, Retrieval(asked), Timings(), scope)
        standalone = self.standalone(asked, history)
        about = read_question(standalone, scope)
        if about is not None:
            listing = listing_answer(about, scope, self.settings.metadata_list_max)
            timings = Timings(retrieve=(time.perf_counter() - started) * 1000)
            return Prepared(standalone, asked, None, Verdict.yes(), Retrieval(standalone), timings, scope, listing)
        if k is None and is_plural(standalone):
            k = max(self.settings.retrieval_k, self.settings.plural_k)  # a question about several papers needs a wider net
        reading = self.read(standalone, scope)
        searched = reading.text
        found = self.retriever.retrieve(reading, k, scope=scope)
        verdict = self.judge.decide(searched, found)
        timings = Timings(retrieve=(time.perf_counter() - started) * 1000)
        prepared = Prepared(standalone, asked, None, verdict, found, timings, scope, searched=searched if searched != standalone else "")
        if verdict.answerable and verdict.about and not found.authors:  # "Who wrote X?": X's metadata, not the model
            prepared.listing = authorship(standalone, [h for h in found.hits if h.paper_id in verdict.about])
            if prepared.listing is not None:
                return prepared
        if verdict.answerable and found.hits:
            prepared.prompt = build_prompt(standalone, found.hits, self._count, self.settings.max_context_tokens,
                                           self.settings.answer_tokens, history, instructions)
        return prepared

    def read(self, question: str, scope: Scope | None = None) -> Reading:
        """The question as retrieval, the judge and the offline model read it, against the vocabularies of `scope`'s corpora
        (the request's): in another language, with its words' English terms, and its English words for MiniLM (bridging.py)."""
        return self.bridge.read(question, scope or self.corpora.scope())

    def bridged(self, question: str, scope: Scope | None = None) -> str:
        """The question as BM25, the judge and the offline model's word tests read it (`read`'s text)."""
        return self.read(question, scope).text

    def standalone(self, question: str, history: Sequence[Turn]) -> str:
        """A follow-up that leans on the conversation, made standalone by the model (the offline one
        applies a fixed rule); an independent question is never rewritten."""
        if not history or not needs_context(question):
            return question
        request = ModelRequest(rewrite_messages(question, history), question, [], max_tokens=100, task="rewrite",
                               history=list(history), corpus=self.corpus)
        rewritten = " ".join(encodable(self.model.complete(request).text).split())
        if not rewritten or len(rewritten) > self.settings.max_question_chars:
            return standalone_question(question, history, self.settings.max_question_chars)
        return rewritten

    def _request(self, prepared: Prepared, max_tokens: int | None, instructions: str) -> ModelRequest:
        assert prepared.prompt is not None
        room = min(self.settings.answer_tokens, max_tokens or self.settings.answer_tokens)
        # the offline model chooses sentences by the question as searched; a language model reads the prompt, as asked
        return ModelRequest(prepared.prompt.messages, prepared.searched or prepared.question, prepared.prompt.sources, room,
                            corpus=self.corpus, meaning=prepared.found.meaning, about=prepared.verdict.about, instructions=instructions, every=prepared.verdict.every,
                            several=prepared.verdict.several, called=prepared.verdict.called)

    def ask(self, question: str, k: int | None = None, history: Sequence[Turn] = (), *,
            max_tokens: int | None = None, instructions: str = "", scope: Scope | None = None) -> Answer:
        """`max_tokens` cuts the answer (a refusal is never cut); `instructions` are the caller's own (see build_prompt)."""
        started = time.perf_counter()
        prepared = self.prepare(question, k, history, instructions, scope)
        if prepared.prompt is None:
            return self._result(self._unprompted(prepared), prepared, Usage(), started)
        generate = time.perf_counter()
        completion = self.model.complete(self._request(prepared, max_tokens, instructions))
        prepared.timings.generate = (time.perf_counter() - generate) * 1000
        text = encodable(completion.text)
        cut = self._cut(text, max_tokens)
        return self._result(cut, prepared, completion.usage, started, truncated=cut != text)

    def stream(self, question: str, k: int | None = None, history: Sequence[Turn] = (), *,
               max_tokens: int | None = None, instructions: str = "", scope: Scope | None = None) -> Iterator[StreamEvent]:
        """Sources once retrieval is done, Delta events as the model writes, then one Final with the
        same Answer as ask(); a refusal is one Delta and the Final."""
        started = time.perf_counter()
        prepared = self.prepare(question, k, history, instructions, scope)
        if prepared.prompt is None:
            text = self._unprompted(prepared)
            if prepared.listing is not None and prepared.listing.sources:
                yield Sources(prepared.question, prepared.listing.sources)
            yield Delta(text)
            yield Final(self._result(text, prepared, Usage(), started))
            return
        yield Sources(prepared.question, [s.to_ref() for s in prepared.prompt.sources])
        note = absence_note(prepared.verdict, prepared.found.hits, prepared.question)
        if note is not None:  # the service's own words come first, as in the final answer
            yield Delta(note.opening())
        gap = note is not None  # what parts the lead from the answer waits for its first words: a list opens on a line of its own
        generate = time.perf_counter()
        written, usage, truncated = "", Usage(), False
        pieces = self.model.stream(self._request(prepared, max_tokens, instructions))
        try:
            for piece in pieces:
                if isinstance(piece, Usage):
                    usage = piece
                    continue
                whole = written + encodable(piece)
                kept = self._cut(whole, max_tokens)
                if len(kept) < len(written):  # a longer text may tokenize its start differently: what was sent stays
                    kept = written
                if len(kept) > len(written):
                    if gap:
                        yield Delta("\n" if kept.startswith("- ") else " ")
                        gap = False
                    yield Delta(kept[len(written):])
                written, truncated = kept, kept != whole
                if truncated:
                    break  # the caller's max_tokens is reached: stop the model too
        finally:
            getattr(pieces, "close", lambda: None)()
        prepared.timings.generate = (time.perf_counter() - generate) * 1000
        yield Final(self._result(written, prepared, usage, started, truncated=truncated))

    @staticmethod
    def _unprompted(prepared: Prepared) -> str:
        """The answer when no model is asked: a list from the records, no paper under the filters, or the refusal."""
        if prepared.listing is not None:
            return prepared.listing.text
        return NO_MATCH if prepared.verdict.reason is RefusalReason.NO_MATCH else REFUSAL

    def _check(self, text: str, prepared: Prepared) -> CheckedAnswer:
        """The citation check; an answer from the records is backed by them, and 'no paper matches' by the filter."""
        if prepared.listing is not None:
            return CheckedAnswer(text, prepared.listing.citations, grounded=True)
        if prepared.verdict.reason is RefusalReason.NO_MATCH:
            return CheckedAnswer(text, grounded=True, refused=True)
        return self.checker.check(text, prepared.prompt.sources if prepared.prompt else [])

    def _cut(self, text: str, max_tokens: int | None) -> str:
        return text if max_tokens is None else cut_to_tokens(text, max_tokens, self.settings.tokenizer_encoding)

    def _result(self, text: str, prepared: Prepared, usage: Usage, started: float, truncated: bool = False) -> Answer:
        if prepared.prompt is not None and usage == Usage():  # the model counts nothing (the extractive one): tiktoken does
            usage = Usage(prepared.prompt.prompt_tokens, self._count(text))
        sources = [s.to_ref() for s in prepared.prompt.sources] if prepared.prompt else []
        if prepared.listing is not None:
            sources = prepared.listing.sources
        checked = self._check(text, prepared)
        if not checked.answer:
            raise ModelError("the model returned an empty answer")
        checked = state_absence(checked, absence_note(prepared.verdict, prepared.found.hits, prepared.question))
        prepared.timings.total = (time.perf_counter() - started) * 1000
        scope = prepared.scope or self.corpora.scope()
        verdict = prepared.verdict
        declined = RefusalReason.MODEL_DECLINED if checked.declined else RefusalReason.NOT_STATED
        reason = verdict.reason if not verdict.answerable else (declined if checked.refused else None)
        labels = {h.paper_id: h.label for h in prepared.found.hits}
        about = [labels.get(pid, pid) for pid in verdict.about]
        return Answer(
            answer=checked.answer,
            citations=checked.citations,
            sources=sources,
            grounded=checked.grounded,
            insufficient_evidence=checked.refused,
            issues=checked.issues,
            question=prepared.question,
            model="records" if prepared.listing is not None else self.model.name,
            usage=usage,
            timings=prepared.timings,
            index=scope.info(),
            refusal_reason=reason,
            refusal_explanation=reason.explain(verdict.detail, about) if reason else "",
            asked=prepared.asked,
            did_you_mean=prepared.found.suggestions,
            truncated=truncated,
            corpora=scope.names,
            filters=scope.filter.to_dict(),
            sentences=checked.sentences,
            asks=answer_kind(prepared.question),
        )
