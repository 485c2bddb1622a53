"""The pipeline: question -> retrieve -> prompt -> model -> validated citations."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from .citations import CitationChecker
from .config import Settings
from .embeddings import MiniLMEmbedding
from .errors import BadRequest, ModelError
from .extractive import ExtractiveModel, is_plural
from .labels import question_names
from .index import Index
from .models import ChatModel, ModelRequest, Usage, build_model
from .prompting import REFUSAL, Prompt, build_prompt, rewrite_messages
from .retrieval import Retriever
from .tokens import get_encoding

_PRONOUNS = re.compile(r"\b(?:it|its|they|their|them|this|that|these|those|the paper|the method|the same)\b", re.I)


def validate_history(history: Any, max_turns: int) -> list[dict]:
    """[{role: user|assistant, content: str}, ...], at most `max_turns`."""
    if history is None:
        return []
    if not isinstance(history, list):
        raise BadRequest("'history' must be a list of {role, content} turns")
    if len(history) > max_turns:
        raise BadRequest(f"'history' has more than {max_turns} turns")
    turns = []
    for i, turn in enumerate(history):
        if not isinstance(turn, dict) or turn.get("role") not in ("user", "assistant") or not isinstance(turn.get("content"), str):
            raise BadRequest(f"'history[{i}]' must be {{\"role\": \"user\"|\"assistant\", \"content\": string}}")
        turns.append({"role": turn["role"], "content": turn["content"]})
    return turns


def standalone_question(question: str, history: Sequence[dict]) -> str:
    """A follow-up ('and how does it compare?') borrows the names of the previous question."""
    if not history or question_names(question) and not _PRONOUNS.search(question):
        return question
    for turn in reversed(history):
        if turn["role"] == "user":
            names = sorted(question_names(turn["content"]) - question_names(question))
            if names:
                return f"{question} ({', '.join(names)})"
    return question


@dataclass
class Prepared:
    question: str
    prompt: Prompt | None
    timings: dict


class Answerer:
    """Holds the parts a question needs; built once per process."""

    def __init__(self, index: Index, settings: Settings, model: ChatModel | None = None):
        self.index = index
        self.settings = settings
        self.retriever = Retriever(index, settings)
        self.model = model or build_model(settings, self._idf)
        embed = index.embedder if isinstance(index.embedder, MiniLMEmbedding) else None
        self.checker = CitationChecker(self._idf, embed, settings.support_threshold)
        self._encoding = get_encoding(settings.tokenizer_encoding)

    def _idf(self, term: str) -> float:
        return self.index.lexical.idf(term)

    def _count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def prepare(self, question: str, k: int | None = None, history: Sequence[dict] = ()) -> Prepared:
        self.index.require_ready()
        started = time.perf_counter()
        standalone = self.standalone(question, history)
        if k is None and is_plural(standalone):
            k = max(self.settings.retrieval_k, 8)  # a question about several papers needs a wider net
        hits = self.retriever.search(standalone, k)
        timings = {"retrieve": (time.perf_counter() - started) * 1000}
        if not hits:
            return Prepared(standalone, None, timings)
        prompt = build_prompt(standalone, hits, self._count, self.settings.max_context_tokens, self.settings.answer_tokens, history)
        return Prepared(standalone, prompt, timings)

    def standalone(self, question: str, history: Sequence[dict]) -> str:
        """A follow-up made standalone: by the model when there is one, else by a fixed rule."""
        if not history or isinstance(self.model, ExtractiveModel):
            return standalone_question(question, history)
        reply = self.model.complete(ModelRequest(rewrite_messages(question, history), question, [], max_tokens=100))
        rewritten = " ".join(reply.text.split())
        if not rewritten or len(rewritten) > self.settings.max_question_chars:
            return standalone_question(question, history)
        return rewritten

    def _request(self, prepared: Prepared) -> ModelRequest:
        assert prepared.prompt is not None
        return ModelRequest(prepared.prompt.messages, prepared.question, prepared.prompt.sources, self.settings.answer_tokens)

    def ask(self, question: str, k: int | None = None, history: Sequence[dict] = ()) -> dict:
        started = time.perf_counter()
        prepared = self.prepare(question, k, history)
        if prepared.prompt is None:
            return self._result(REFUSAL, prepared, Usage(), started)
        generate = time.perf_counter()
        completion = self.model.complete(self._request(prepared))
        prepared.timings["generate"] = (time.perf_counter() - generate) * 1000
        return self._result(completion.text, prepared, completion.usage, started)

    def stream(self, question: str, k: int | None = None, history: Sequence[dict] = ()) -> Iterator[tuple[str, Any]]:
        """('delta', text) events as the model writes, then ('final', the same object as ask())."""
        started = time.perf_counter()
        prepared = self.prepare(question, k, history)
        if prepared.prompt is None:
            yield "delta", REFUSAL
            yield "final", self._result(REFUSAL, prepared, Usage(), started)
            return
        generate = time.perf_counter()
        parts: list[str] = []
        usage = Usage()
        for piece in self.model.stream(self._request(prepared)):
            if isinstance(piece, Usage):
                usage = piece
            else:
                parts.append(piece)
                yield "delta", piece
        prepared.timings["generate"] = (time.perf_counter() - generate) * 1000
        yield "final", self._result("".join(parts), prepared, usage, started)

    def _result(self, text: str, prepared: Prepared, usage: Usage, started: float) -> dict:
        sources = prepared.prompt.sources if prepared.prompt else []
        checked = self.checker.check(text, sources)
        if not checked.answer:
            raise ModelError("the model returned an empty answer")
        timings = {"retrieve": prepared.timings["retrieve"], "generate": prepared.timings.get("generate", 0.0)}
        timings["total"] = (time.perf_counter() - started) * 1000
        stats = self.index.stats()
        return {
            "answer": checked.answer,
            "citations": [c.to_dict() for c in checked.citations],
            "sources": [{"n": s.n, "paper_id": s.paper_id, "label": s.label} for s in sources],
            "grounded": checked.grounded,
            "insufficient_evidence": checked.refused,
            "warnings": checked.warnings,
            "question": prepared.question,
            "model": self.model.name,
            "usage": usage.to_dict(),
            "timings_ms": {k: round(v, 1) for k, v in timings.items()},
            "index": {k: stats[k] for k in ("papers", "built_at", "embedding_model")},
        }
