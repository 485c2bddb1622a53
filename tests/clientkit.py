"""A real server on 127.0.0.1 for the client tests (openai, llm, LangChain, a generated client), and the small
corpus of OpenReview-shaped papers they read: titles, years, venues as OpenReview writes them, URLs."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from flask import Flask
from werkzeug.serving import make_server

from qa_service.config import Settings
from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, make_settings

OPENREVIEW_PAPERS = ROOT / "tests" / "data" / "openreview_papers.jsonl"


@contextmanager
def running(app: Flask) -> Iterator[str]:
    """The app on a free port of 127.0.0.1 (werkzeug, threaded): its base URL while the block runs."""
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        thread.join(timeout=10)


def openreview_settings(data_dir: Path) -> Settings:
    """A data dir holding the OpenReview-shaped papers as the default corpus, budgets off (they are test_access's)."""
    settings = make_settings(data_dir, rate_limit="", answer_rate_limit="")
    Index(settings).ingest(load_corpus([OPENREVIEW_PAPERS]))
    return settings


def app_over(settings: Settings, index: Index | None = None) -> Flask:
    return create_app(settings.replace(rate_limit="", answer_rate_limit=""), index=index)
