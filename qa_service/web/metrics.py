"""Prometheus metrics, one set per app (no global state): /metrics.

Under `qa-service serve` (gunicorn, one process per worker) prometheus-client's multiprocess
mode is on: each worker writes its counters to files in PROMETHEUS_MULTIPROC_DIR and a scrape,
whichever worker answers it, adds them all up (serving.py sets the folder up). Facts about the
index (papers, version, the ingest lock) are the same for every worker: they are read at scrape
time. `process_*` and `python_*` describe the worker that answered the scrape.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Iterator

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from ..records import Answer, IndexStats, LexicalLoad, WriterStatus

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
LOAD_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60)  # BM25 at start: 57 papers to 20,000
# Label values come from fixed sets, never from what a client sent: each new value is a new series
# kept for the life of the process (20,000 invented methods made 20,341 series, 3.9 MB a scrape).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
OTHER = "other"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_dir() -> str | None:
    """The folder of multiprocess mode, when `serve` (or the operator) set one."""
    return os.environ.get(MULTIPROC_ENV) or None


class IndexFacts(Collector):
    """The corpora as they are at scrape time, one sample per corpus: the same whichever worker answers, so never summed."""

    def __init__(self, stats: Callable[[], dict[str, IndexStats]], writer: Callable[[], WriterStatus]):
        self._stats = stats
        self._writer = writer

    def collect(self) -> Iterator[Any]:
        try:
            stats = self._stats()
        except Exception:  # noqa: BLE001 - a scrape reports what it can, even with the index down
            stats = {}
        if stats:
            papers = GaugeMetricFamily("qa_index_papers", "Papers in each corpus.", labels=["corpus"])
            chunks = GaugeMetricFamily("qa_index_chunks", "Chunks in each corpus.", labels=["corpus"])
            generation = GaugeMetricFamily("qa_index_generation", "Corpus versions written so far: +1 with every ingest that changed it.",
                                           labels=["corpus"])
            info = InfoMetricFamily("qa_index", "Corpus version being served and embedding model, per corpus.", labels=["corpus"])
            for corpus, facts in stats.items():
                papers.add_metric([corpus], facts.papers)
                chunks.add_metric([corpus], facts.chunks)
                generation.add_metric([corpus], facts.generation)
                info.add_metric([corpus], {"version": facts.version or "", "embedding_model": facts.embedding_model or ""})
            yield from (papers, chunks, generation, info)
        try:
            writer = self._writer()
        except Exception:  # noqa: BLE001 - e.g. the Chroma server is down
            return
        yield GaugeMetricFamily("qa_ingest_lock_held", "1 while a writer (ingest, check --repair) holds the writer lock.",
                                value=1 if writer.held else 0)
        if writer.held and writer.since:
            yield GaugeMetricFamily("qa_ingest_lock_since_seconds", "When the writer took the lock (Unix time, the writer's clock).",
                                    value=writer.since)


class Metrics:
    """Counters of this process (summed over workers in multiprocess mode) and the scrape registry."""

    def __init__(self, stats: Callable[[], dict[str, IndexStats]] = dict, writer: Callable[[], WriterStatus] = WriterStatus) -> None:
        self.registry = CollectorRegistry()  # what a scrape reads
        self.multiprocess = multiprocess_dir() is not None
        r = None if self.multiprocess else self.registry  # in multiprocess mode the values live in files
        self.requests = Counter("qa_http_requests_total", "HTTP requests by route, method and status.", ["route", "method", "status"], registry=r)
        self.latency = Histogram("qa_http_request_seconds", "HTTP request latency by route.", ["route"], buckets=LATENCY_BUCKETS, registry=r)
        self.retrieve = Histogram("qa_retrieve_seconds", "Retrieval time per answered question.", buckets=LATENCY_BUCKETS, registry=r)
        self.generate = Histogram("qa_generate_seconds", "Model time per answered question.", buckets=LATENCY_BUCKETS, registry=r)
        self.tokens = Counter("qa_model_tokens_total", "Tokens the model read (prompt) and wrote (completion).", ["kind"], registry=r)
        self.answers = Counter("qa_answers_total", "Answers by outcome.", ["outcome"], registry=r)
        self.lexical_load = Histogram(
            "qa_lexical_load_seconds", "Time to get the BM25 index of a new corpus version, by where it came from: "
            "the local cache, Chroma (stored serialized), or rebuilt from the chunks.", ["source"], buckets=LOAD_BUCKETS, registry=r)
        if self.multiprocess:
            MultiProcessCollector(self.registry)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        self.registry.register(IndexFacts(stats, writer))

    def observe_answer(self, answer: Answer) -> None:
        self.retrieve.observe(answer.timings.retrieve / 1000)
        self.generate.observe(answer.timings.generate / 1000)
        self.tokens.labels("prompt").inc(answer.usage.prompt_tokens)
        self.tokens.labels("completion").inc(answer.usage.completion_tokens)
        outcome = "refused" if answer.insufficient_evidence else ("grounded" if answer.grounded else "ungrounded")
        self.answers.labels(outcome).inc()

    def observe_lexical(self, load: LexicalLoad) -> None:
        self.lexical_load.labels(load.source).observe(load.seconds)

    def scrape(self) -> bytes:
        return generate_latest(self.registry)


def init_app(app: Flask, stats: Callable[[], dict[str, IndexStats]], writer: Callable[[], WriterStatus]) -> Metrics:
    """Count every request; serve /metrics, reading the index facts at scrape time."""
    metrics = Metrics(stats, writer)

    @app.before_request
    def started() -> None:
        g.metrics_started = time.perf_counter()

    @app.after_request
    def count(response: Response) -> Response:
        route = request.url_rule.rule if request.url_rule else OTHER  # the route's template, never the path
        method = request.method if request.method in METHODS else OTHER
        metrics.requests.labels(route, method, str(response.status_code)).inc()  # statuses: only the ones our code sets
        metrics.latency.labels(route).observe(time.perf_counter() - g.get("metrics_started", time.perf_counter()))
        return response

    @app.get("/metrics")
    def scrape() -> Response:
        # content_type, not mimetype: CONTENT_TYPE_LATEST carries its charset, and Flask would add a second one
        return Response(metrics.scrape(), content_type=CONTENT_TYPE_LATEST)

    return metrics
