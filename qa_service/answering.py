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

from .answerability import AnswerabilityJudge
from .citations import CitationChecker
from .config import Settings
from .embeddings import VectorCache
from .errors import ModelError
from .followups import standalone_question
from .index import Index
from .models import ChatModel
from .prompting import Prompt, build_prompt, rewrite_messages
from .records import (
    REFUSAL, Answer, Delta, Final, IndexInfo, ModelRequest, RefusalReason, Retrieval, Sources, StreamEvent, Timings, Turn, Usage,
    Verdict,
)
from .questions import clean_question, is_plural, needs_context
from .retrieval import Retriever
from .textclean import encodable, sentence_spans
from .tokens import cut_to_tokens, token_counter


class IndexCorpus:
    """The corpus as a model may see it: term rarity from BM25, embeddings when they are local.

    Sentence vectors are kept (LRU by text): the same abstracts' sentences come back question
    after question, and embedding them once is what keeps sentence choice by meaning cheap."""

    def __init__(self, index: Index, cache_size: int):
        self.index = index
        self._embed = index.local_embed()
        self._cache = VectorCache(cache_size)
        self.local = self._embed is not None

    def idf(self, term: str) -> float:
        return self.index.lexical.idf(term)

    def embed(self, texts: list[str]) -> Sequence[Any] | None:
        return self._cache.get_or_embed(texts, self._embed) if self._embed is not None else None

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


class Answerer:
    """Holds the parts a question needs; built once per process by the composition root."""

    def __init__(self, index: Index, settings: Settings, model: ChatModel):
        self.index = index
        self.settings = settings
        self.model = model
        self.retriever = Retriever(index, settings)
        self.corpus = IndexCorpus(index, settings.sentence_cache_size)
        self.judge = AnswerabilityJudge(settings, self.corpus.closeness if self.corpus.local else None)
        self.checker = CitationChecker(self.corpus.idf, index.local_embed(), settings.support_threshold)
        self._count = token_counter(settings.tokenizer_encoding)

    def prepare(self, question: str, k: int | None = None, history: Sequence[Turn] = (), instructions: str = "") -> Prepared:
        """Retrieve, decide once whether the evidence can answer, and build the prompt if it can."""
        self.index.require_ready()
        started = time.perf_counter()
        asked = clean_question(question)
        standalone = self.standalone(asked, history)
        if k is None and is_plural(standalone):
            k = max(self.settings.retrieval_k, self.settings.plural_k)  # a question about several papers needs a wider net
        found = self.retriever.retrieve(standalone, k)
        verdict = self.judge.decide(standalone, found)
        timings = Timings(retrieve=(time.perf_counter() - started) * 1000)
        prepared = Prepared(standalone, asked, None, verdict, found, timings)
        if verdict.answerable and found.hits:
            prepared.prompt = build_prompt(standalone, found.hits, self._count, self.settings.max_context_tokens,
                                           self.settings.answer_tokens, history, instructions)
        return prepared

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
        return ModelRequest(prepared.prompt.messages, prepared.question, prepared.prompt.sources, room,
                            corpus=self.corpus, about=prepared.verdict.about, instructions=instructions, every=prepared.verdict.every)

    def ask(self, question: str, k: int | None = None, history: Sequence[Turn] = (), *,
            max_tokens: int | None = None, instructions: str = "") -> Answer:
        """`max_tokens` cuts the answer (a refusal is never cut); `instructions` are the caller's own (see build_prompt)."""
        started = time.perf_counter()
        prepared = self.prepare(question, k, history, instructions)
        if prepared.prompt is None:
            return self._result(REFUSAL, prepared, Usage(), started)
        generate = time.perf_counter()
        completion = self.model.complete(self._request(prepared, max_tokens, instructions))
        prepared.timings.generate = (time.perf_counter() - generate) * 1000
        text = encodable(completion.text)
        cut = self._cut(text, max_tokens)
        return self._result(cut, prepared, completion.usage, started, truncated=cut != text)

    def stream(self, question: str, k: int | None = None, history: Sequence[Turn] = (), *,
               max_tokens: int | None = None, instructions: str = "") -> Iterator[StreamEvent]:
        """Sources once retrieval is done, Delta events as the model writes, then one Final with the
        same Answer as ask(); a refusal is one Delta and the Final."""
        started = time.perf_counter()
        prepared = self.prepare(question, k, history, instructions)
        if prepared.prompt is None:
            yield Delta(REFUSAL)
            yield Final(self._result(REFUSAL, prepared, Usage(), started))
            return
        yield Sources(prepared.question, [s.to_ref() for s in prepared.prompt.sources])
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
                    yield Delta(kept[len(written):])
                written, truncated = kept, kept != whole
                if truncated:
                    break  # the caller's max_tokens is reached: stop the model too
        finally:
            getattr(pieces, "close", lambda: None)()
        prepared.timings.generate = (time.perf_counter() - generate) * 1000
        yield Final(self._result(written, prepared, usage, started, truncated=truncated))

    def _cut(self, text: str, max_tokens: int | None) -> str:
        return text if max_tokens is None else cut_to_tokens(text, max_tokens, self.settings.tokenizer_encoding)

    def _result(self, text: str, prepared: Prepared, usage: Usage, started: float, truncated: bool = False) -> Answer:
        if prepared.prompt is not None and usage == Usage():  # the model counts nothing (the extractive one): tiktoken does
            usage = Usage(prepared.prompt.prompt_tokens, self._count(text))
        sources = prepared.prompt.sources if prepared.prompt else []
        checked = self.checker.check(text, sources)
        if not checked.answer:
            raise ModelError("the model returned an empty answer")
        prepared.timings.total = (time.perf_counter() - started) * 1000
        stats = self.index.stats()
        verdict = prepared.verdict
        reason = verdict.reason if not verdict.answerable else (RefusalReason.NOT_STATED if checked.refused else None)
        labels = {h.paper_id: h.label for h in prepared.found.hits}
        about = [labels.get(pid, pid) for pid in verdict.about]
        return Answer(
            answer=checked.answer,
            citations=checked.citations,
            sources=[s.to_ref() for s in sources],
            grounded=checked.grounded,
            insufficient_evidence=checked.refused,
            issues=checked.issues,
            question=prepared.question,
            model=self.model.name,
            usage=usage,
            timings=prepared.timings,
            index=IndexInfo(stats["papers"], stats["built_at"], stats["embedding_model"]),
            refusal_reason=reason,
            refusal_explanation=reason.explain(verdict.detail, about) if reason else "",
            asked=prepared.asked,
            did_you_mean=prepared.found.suggestions,
            truncated=truncated,
        )
