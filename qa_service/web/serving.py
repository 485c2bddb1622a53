"""Run the app under gunicorn (the production server), configured from our settings.

The worker is gunicorn's gthread worker made safe against slow clients (`worker.QAWorker`).
Metrics run in prometheus-client's multiprocess mode, so that a scrape sees every worker.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from flask import g, has_request_context
from gunicorn.app.base import BaseApplication
from prometheus_client import multiprocess, values

from .access import check_proxy_hops, check_rate_limits, check_storage, printable
from ..config import Settings, redact_urls
from ..errors import ConfigError
from ..preflight import check_port
from .metrics import MULTIPROC_ENV
from ..service import build_model
from .app import create_app
from .worker import QAWorker

GUNICORN_MAX_REQUEST_LINE = 8190  # gunicorn lowers a larger limit_request_line to this, and 0 means unlimited


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


def check_limits(settings: Settings) -> None:
    """gunicorn would quietly lower or ignore these; say so instead."""
    if not 1 <= settings.max_request_line <= GUNICORN_MAX_REQUEST_LINE:
        raise ConfigError(f"max_request_line must be 1..{GUNICORN_MAX_REQUEST_LINE} (gunicorn's cap), got {settings.max_request_line}")
    if settings.max_header_bytes < 1 or settings.client_timeout <= 0 or settings.request_timeout <= 0 or settings.threads < 1:
        raise ConfigError("max_header_bytes, client_timeout, request_timeout and threads must be positive")


def metrics_folder() -> tuple[Path, bool]:
    """Multiprocess metrics for this run: the operator's PROMETHEUS_MULTIPROC_DIR, or a new temporary
    folder (True: ours to remove at exit). An earlier run's files are removed: their counts are not ours."""
    given = os.environ.get(MULTIPROC_ENV)
    folder = Path(given) if given else Path(tempfile.mkdtemp(prefix="qa-metrics-"))
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()
    os.environ[MULTIPROC_ENV] = str(folder)  # the workers inherit it
    values.ValueClass = values.get_value_class()  # prometheus-client chose its value class when imported, before this
    return folder, not given


def page_url(address: Any) -> str:
    """Where a browser on this machine finds the page, from the address the worker listens on."""
    host, port = address[0], address[1]
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # every interface: this machine's own address
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def say_where(worker: Any) -> None:
    """Once the first worker has built the app (it answers from now on), say where the page is: once, not per worker."""
    if worker.age == 1 and worker.sockets:
        print(f"Open {page_url(worker.sockets[0].getsockname())}", flush=True)


def run_gunicorn(settings: Settings, host: str, port: int, threads: int | None = None, workers: int = 1) -> None:
    """gunicorn with our gthread worker; each worker opens its own Chroma client after the fork."""
    check_port(host, port)  # a busy port is one line, not gunicorn's eleven over six seconds
    check_workers(settings, workers)
    check_limits(settings)
    check_storage(settings)
    check_rate_limits(settings)
    check_proxy_hops(settings)  # here, before the fork: a ConfigError in each worker would be a traceback each
    build_model(settings)  # the same: a model endpoint configured two ways at once is refused here
    folder, ours = metrics_folder()
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads or settings.threads,
        "worker_class": QAWorker,
        "timeout": int(settings.model_deadline) + 30,
        "keepalive": 30,  # clients that queue behind busy threads must not find their connection reset
        "limit_request_line": settings.max_request_line,
        "limit_request_field_size": settings.max_header_bytes,
        "accesslog": None,  # qa_service.access logs each request, with its id
        "post_worker_init": say_where,
        "child_exit": lambda _server, worker: multiprocess.mark_process_dead(worker.pid),  # its live gauges go
        "on_exit": lambda _server: shutil.rmtree(folder, ignore_errors=True) if ours else None,
    }
    configure_logging(settings)
    _Gunicorn(settings, options).run()
