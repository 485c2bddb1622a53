"""Run the app under gunicorn (the production server), configured from our settings."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from flask import g, has_request_context
from gunicorn.app.base import BaseApplication

from .access import printable
from .config import Settings, redact_urls
from .errors import ConfigError
from .web import create_app


class _Gunicorn(BaseApplication):
    def __init__(self, settings: Settings, options: dict[str, Any]):
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        """Runs in each worker after the fork: its own Chroma client, BM25 and model."""
        app = create_app(self.settings)
        app.extensions["qa"].warm()
        return app


class RequestIdFilter(logging.Filter):
    """Every record carries the request id (or '-' outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            record.request_id = g.get("request_id", "-") if has_request_context() else "-"
        return True


# Libraries that log every HTTP call with its full URL at INFO: chromadb's HttpClient (httpx) and the
# openai SDK (httpx2). The URL may carry OPENAI_BASE_URL's credentials; their core layers log at DEBUG.
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2")


def safe_message(record: logging.LogRecord) -> str:
    """The message on one line, with the credentials of any URL in it hidden."""
    return printable(redact_urls(record.getMessage()))


class PlainFormatter(logging.Formatter):
    """Plain lines: one line per message; no URL credentials in the message or the traceback."""

    def format(self, record: logging.LogRecord) -> str:
        safe = logging.makeLogRecord(record.__dict__)  # other handlers still see the record as logged
        safe.msg, safe.args = safe_message(record), None
        return redact_urls(super().format(safe))


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"time": self.formatTime(record), "level": record.levelname, "logger": record.name,
                 "message": safe_message(record), "request_id": getattr(record, "request_id", "-")}
        for key in ("path", "status", "ms"):
            if hasattr(record, key):
                entry[key] = getattr(record, key)
        if record.exc_info:
            entry["error"] = redact_urls(self.formatException(record.exc_info))
        return json.dumps(entry, ensure_ascii=False)


def configure_logging(settings: Settings) -> None:
    """One handler on stderr, plain or JSON lines, with the request id on every line and no URL credentials."""
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RequestIdFilter())
    if settings.log_json:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(PlainFormatter("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def check_workers(settings: Settings, workers: int) -> None:
    """Several processes must share a Chroma server: a local PersistentClient is not process-safe."""
    if workers > 1 and not settings.chroma_url:
        raise ConfigError(
            f"{workers} workers cannot share the embedded store in {settings.data_dir} (Chroma's local client is "
            "not safe across processes): start a Chroma server (chroma run --path DIR --host 127.0.0.1 --port 8001) "
            "and set QA_CHROMA_URL=http://127.0.0.1:8001, or use --workers 1"
        )


def run_gunicorn(settings: Settings, host: str, port: int, threads: int = 4, workers: int = 1) -> None:
    """gunicorn with gthread workers; each worker opens its own Chroma client after the fork."""
    check_workers(settings, workers)
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread",
        "timeout": int(settings.model_deadline) + 30,
        "keepalive": 30,  # clients that queue behind busy threads must not find their connection reset
        "accesslog": None,  # qa_service.access logs each request, with its id
    }
    configure_logging(settings)
    _Gunicorn(settings, options).run()
