"""Prometheus metrics, one registry per app (no global state): /metrics."""

from __future__ import annotations

import time
from typing import Any

from flask import Flask, Response, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest

from .records import Answer

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
# Label values come from fixed sets, never from what a client sent: each new value is a new series
# kept for the life of the process (20,000 invented methods made 20,341 series, 3.9 MB a scrape).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
OTHER = "other"


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("qa_http_requests_total", "HTTP requests by route, method and status.", ["route", "method", "status"], registry=r)
        self.latency = Histogram("qa_http_request_seconds", "HTTP request latency by route.", ["route"], buckets=LATENCY_BUCKETS, registry=r)
        self.retrieve = Histogram("qa_retrieve_seconds", "Retrieval time per answered question.", buckets=LATENCY_BUCKETS, registry=r)
        self.generate = Histogram("qa_generate_seconds", "Model time per answered question.", buckets=LATENCY_BUCKETS, registry=r)
        self.tokens = Counter("qa_model_tokens_total", "Tokens the model read (prompt) and wrote (completion).", ["kind"], registry=r)
        self.answers = Counter("qa_answers_total", "Answers by outcome.", ["outcome"], registry=r)
        self.papers = Gauge("qa_index_papers", "Papers in the index.", registry=r)
        self.chunks = Gauge("qa_index_chunks", "Chunks in the index.", registry=r)
        self.index = Info("qa_index", "Index version and embedding model.", registry=r)

    def observe_answer(self, answer: Answer) -> None:
        self.retrieve.observe(answer.timings.retrieve / 1000)
        self.generate.observe(answer.timings.generate / 1000)
        self.tokens.labels("prompt").inc(answer.usage.prompt_tokens)
        self.tokens.labels("completion").inc(answer.usage.completion_tokens)
        outcome = "refused" if answer.insufficient_evidence else ("grounded" if answer.grounded else "ungrounded")
        self.answers.labels(outcome).inc()

    def observe_index(self, stats: dict[str, Any]) -> None:
        self.papers.set(stats.get("papers") or 0)
        self.chunks.set(stats.get("chunks") or 0)
        self.index.info({"version": str(stats.get("version") or ""), "embedding_model": str(stats.get("embedding_model") or "")})


def init_app(app: Flask, index_stats: Any) -> Metrics:
    """Count every request; serve /metrics, refreshing the index gauges at scrape time."""
    metrics = Metrics()

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
        try:
            metrics.observe_index(index_stats())
        except Exception:  # noqa: BLE001 - a scrape reports what it can, even with the index down
            pass
        return Response(generate_latest(metrics.registry), mimetype=CONTENT_TYPE_LATEST)

    return metrics
