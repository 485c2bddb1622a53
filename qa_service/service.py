"""The composition root: settings -> index, model, retriever and answerer, for the web app, the CLI and Python users.

The one place that knows the concrete model classes; everything above it holds a
`ChatModel` and an `Answerer` and never asks which kind.
"""

from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .answering.answerability import AnswerabilityJudge
from .answering.citations import CitationChecker
from .answering.pipeline import Answerer, IndexCorpus
from .config import Settings, load_settings
from .store.corpora import Corpora
from .errors import NotIndexed, QAError
from .answering.extractive import ExtractiveModel, ExtractiveTuning
from .store.index import Index
from .inputs import history_turns, k_value, question_text
from .store.locking import StoreLocks
from .answering.models import ChatModel, OpenAIChatModel
from .answering.providers import OpenAIProvider
from .retrieval.retriever import Retriever
from .records import Answer, LexicalLoad, Turn

log = logging.getLogger(__name__)


def build_model(settings: Settings) -> ChatModel:
    """The extractive model unless a model or an API key is configured."""
    if settings.model == "extractive" or not (settings.model or settings.openai_api_key or settings.openai_base_url):
        return ExtractiveModel(ExtractiveTuning(
            settings.answer_semantic_weight, settings.answer_number_bonus, settings.answer_rank_decay,
            settings.answer_multi_share, settings.answer_second_share, settings.answer_max_papers,
            settings.answer_kin_meaning, settings.answer_kin_words, settings.roles_cache_size,
            settings.answer_per_named, settings.answer_figure_words, settings.count_window, settings.answer_list_words,
            settings.answer_list_own_share,
        ))
    return OpenAIChatModel(settings, provider=OpenAIProvider(settings))


def build_retriever(settings: Settings, corpora: Corpora) -> Retriever:
    """Hybrid retrieval with today's steps (retrieval/steps.py: a reranker would be added here)."""
    return Retriever(settings, corpora)


def build_answerer(settings: Settings, model: ChatModel, corpora: Corpora, retriever: Retriever | None = None) -> Answerer:
    """The answerer and what it holds: retrieval, the corpus as a model sees it, the judge and the citation checker."""
    corpus = IndexCorpus(corpora, settings.sentence_cache_size, settings.abbreviation_share)
    judge = AnswerabilityJudge(settings, corpus.closeness if corpus.local else None, corpus.idf,
                                 corpus.similarity if corpus.local else None)
    checker = CitationChecker.from_settings(corpus.idf, corpus.embed if corpus.local else None, settings)  # cached vectors
    return Answerer(settings, model, corpora, retriever or build_retriever(settings, corpora), corpus, judge, checker)


class Services:
    """What a request needs, built lazily once per process: an unreachable store is a 503 per request."""

    def __init__(self, settings: Settings, index: Index | None = None, model: ChatModel | None = None,
                 on_lexical: Callable[[LexicalLoad], None] | None = None):
        self.settings = settings
        self._on_lexical = on_lexical  # told each time the index readies BM25 for a version (metrics)
        if index is not None and on_lexical is not None:
            index.listeners.append(on_lexical)
        self._index = index
        self._model = model
        self._answerer: Answerer | None = None
        self._retriever: Retriever | None = None
        self._corpora: Corpora | None = None
        self._building = threading.RLock()  # the first requests arrive together: one index, one model, one answerer
        self.locks = index.locks if index is not None else StoreLocks(settings.data_path, readers=not settings.chroma_url)

    @property
    def index(self) -> Index:
        """The default corpus's index (the same one the corpora hold, also after it was dropped and made anew)."""
        if self._corpora is not None:
            return self._corpora.default
        if self._index is None:
            with self._building:  # one store per process, however many threads ask at once
                if self._index is None:
                    self._index = self._open_index()
        return self._index

    @property
    def corpora(self) -> Corpora:
        """Every corpus of the store, around the default one (which `index` is)."""
        if self._corpora is None:
            with self._building:
                if self._corpora is None:
                    self._corpora = Corpora(self.settings, self.index)
        return self._corpora

    def _open_index(self) -> Index:
        try:
            index = Index(self.settings)
            if self._on_lexical is not None:
                index.listeners.append(self._on_lexical)
            return index
        except QAError:
            raise
        except Exception as exc:  # chroma unreachable, data dir unreadable, ...
            raise NotIndexed(
                f"the index cannot be opened ({type(exc).__name__}: {exc}); check QA_DATA_DIR / QA_CHROMA_URL "
                f"and run `qa-service ingest`"
            ) from exc

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Around a request that reads the store: 503 (StoreBusy) while an ingest writes it, and the
        store reopened when another process wrote it since (embedded mode; a Chroma server needs neither)."""
        with self.locks.reading() as generation:
            self.corpora.follow(generation)
            with self.corpora.pinned():  # one version of each corpus for the whole request (a Chroma server)
                yield

    @property
    def model(self) -> ChatModel:
        with self._building:
            if self._model is None:
                self._model = build_model(self.settings)
            return self._model

    @property
    def retriever(self) -> Retriever:
        """Search without answering (the search route, `qa-service search`); the answerer holds the same one."""
        if self._retriever is None:
            with self._building:
                if self._retriever is None:
                    self._retriever = build_retriever(self.settings, self.corpora)
        return self._retriever

    @property
    def answerer(self) -> Answerer:
        if self._answerer is None:
            with self._building:
                if self._answerer is None:
                    self._answerer = build_answerer(self.settings, self.model, self.corpora, self.retriever)
        return self._answerer

    def warm(self) -> None:
        """Open every corpus and load its BM25 (a file read each, ~0.015 s at 2,000 papers), the embedding
        model, and the default corpus's collections, so the first request is not slow. Chroma's first call on
        another corpus's collections (~0.3 s each) waits for the first request that reads it: a thread paying
        it meanwhile held the GIL so long that a probe took 0.3-1 s (every file open in the probe waited)."""
        try:
            names = self.corpora.names()
            for name in names:
                self.corpora.open(name).load_lexical()
            self.corpora.open(names[0]).stats()
            self.index.embedder.embed_query(["warm-up"])
        except Exception as exc:  # noqa: BLE001 - an empty or unreachable index is reported per request
            log.warning("warm-up skipped: %s", exc)

    def ask(self, question: str, k: int | None = None, history: Sequence[Turn] = ()) -> Answer:
        """In-process answering for notebooks and scripts: the typed Answer, no HTTP. The question, k and
        history meet the limits HTTP sets (BadRequest with HTTP's message), and while an ingest writes the
        store it is StoreBusy, as a request's 503."""
        question = question_text(question, self.settings)
        k = None if k is None else k_value(k, self.settings)
        turns = history_turns([{"role": t.role, "content": t.content} if isinstance(t, Turn) else t for t in history], self.settings)
        with self.reading():
            return self.answerer.ask(question, k, turns)


def open_service(data_dir: str | Path | None = None, settings: Settings | None = None, *, model: ChatModel | None = None) -> Services:
    """`open_service("data").ask("What is RouterArena?")`: the service without a server."""
    settings = settings or load_settings()
    if data_dir is not None:
        settings = settings.replace(data_dir=str(data_dir))
    return Services(settings, model=model)
