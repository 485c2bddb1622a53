"""Run the app under gunicorn (the production server), configured from our settings.

The worker is gunicorn's gthread worker with two changes: a client that goes silent mid-request
(or stops reading our reply) is dropped after `client_timeout` seconds instead of holding a
thread for good, and the requests gunicorn refuses before the app sees them (too long a request
line, too large or too many headers, not HTTP at all) are answered in JSON like every other error.
Metrics run in prometheus-client's multiprocess mode, so that a scrape sees every worker.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

from flask import g, has_request_context
from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.http.errors import (
    ConfigurationProblem,
    ExpectationFailed,
    ForbiddenProxyRequest,
    InvalidResponseHeader,
    InvalidResponseHeaderName,
    LimitRequestHeaders,
    LimitRequestLine,
    ParseException,
    UnsupportedTransferCoding,
)
from gunicorn.workers.gthread import TConn, ThreadWorker
from prometheus_client import multiprocess, values
from werkzeug.http import HTTP_STATUS_CODES

from .access import check_proxy_hops, check_rate_limits, check_storage, printable
from ..config import Settings, redact_urls
from ..errors import ConfigError
from .metrics import MULTIPROC_ENV
from ..service import build_model
from .app import create_app

GUNICORN_MAX_REQUEST_LINE = 8190  # gunicorn lowers a larger limit_request_line to this, and 0 means unlimited
# What gunicorn answers to the parse errors it does not answer with 400 (gunicorn.workers.base.handle_error).
EARLY_STATUS = {LimitRequestLine: 414, LimitRequestHeaders: 431, UnsupportedTransferCoding: 501,
                ExpectationFailed: 417, ForbiddenProxyRequest: 403, ConfigurationProblem: 500}


class _TimedConn(TConn):
    """A connection whose every read and write gives up after `client_timeout` seconds of silence."""

    def __init__(self, cfg: Any, sock: socket.socket, client: Any, server: Any, client_timeout: float):
        super().__init__(cfg, sock, client, server)
        self.client_timeout = client_timeout

    def init(self) -> None:
        super().init()  # gunicorn makes the socket blocking (no timeout) before every request
        self.sock.settimeout(self.client_timeout)

    def close(self, graceful: bool = False) -> None:
        if self.sock.fileno() != -1:  # else QAWorker.handle closed it already (a second close would raise)
            super().close(graceful)


class _SilentClients(logging.Filter):
    """gunicorn logs a client that went silent mid-headers as a socket error with a traceback; it is one line of news."""

    def __init__(self, client_timeout: float):
        super().__init__()
        self.message = f"closed a connection whose client sent or read nothing for {client_timeout:g} s (client_timeout)"

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], TimeoutError):
            record.msg, record.args, record.exc_info, record.exc_text = self.message, (), None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


class QAWorker(ThreadWorker):
    """gunicorn's gthread worker: stalled clients time out, early errors are JSON."""

    def init_process(self) -> None:
        logging.getLogger("gunicorn.error").addFilter(_SilentClients(self.app.settings.client_timeout))
        super().init_process()

    def accept(self, listener: socket.socket) -> None:
        """gthread's accept, making a connection that times out."""
        try:
            client_sock, client_addr = listener.accept()
            self.nr_conns += 1
            client_sock.setblocking(True)
            conn = _TimedConn(self.cfg, client_sock, client_addr, listener.getsockname(), self.app.settings.client_timeout)
            self.enqueue_req(conn)
        except OSError as e:
            if e.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise

    def handle(self, conn: TConn) -> Any:
        """gthread's handle, but a connection it is done with is closed here, in a pool thread.

        gthread closes it in its main loop, waiting up to 2 s for each client to close its side:
        after 50 silent clients it could neither accept nor hand out requests for up to 100 s.
        """
        result = super().handle(conn)
        if not result:
            util.close_graceful(conn.sock)  # the main loop's own close is then a no-op
        return result

    def handle_error(self, req: Any, client: socket.socket, addr: Any, exc: BaseException) -> None:
        """The same statuses as gunicorn's own error page, as our JSON error object."""
        addr = addr or ("", -1)
        if isinstance(exc, ParseException) and not isinstance(exc, (InvalidResponseHeader, InvalidResponseHeaderName)):
            status = next((code for kind, code in EARLY_STATUS.items() if isinstance(exc, kind)), 400)
            self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)
            message = self._early_message(status, exc)
        else:
            self.log.exception("Error handling request")
            status, message = 500, "internal error; see the server log"
        reason = HTTP_STATUS_CODES.get(status, "Error")
        body = json.dumps({"error": {"code": reason.lower().replace(" ", "_"), "message": message}}).encode()
        head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nX-Content-Type-Options: nosniff\r\n\r\n")
        try:
            util.write_nonblock(client, head.encode("latin-1") + body)
        except Exception:  # noqa: BLE001 - the client may be gone; nothing else to do
            self.log.debug("Failed to send error message.")

    def _early_message(self, status: int, exc: BaseException) -> str:
        if status == 414:
            return f"the request line is longer than {self.cfg.limit_request_line} bytes; send long input in a JSON body"
        if status == 431:
            return (f"a header line is longer than {self.cfg.limit_request_field_size} bytes, "
                    f"or there are more than {self.cfg.limit_request_fields} headers")
        return f"the request is not valid HTTP/1.1: {str(exc)[:200]}"


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
    if settings.max_header_bytes < 1 or settings.client_timeout <= 0 or settings.threads < 1:
        raise ConfigError("max_header_bytes, client_timeout and threads must be positive")


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


def run_gunicorn(settings: Settings, host: str, port: int, threads: int | None = None, workers: int = 1) -> None:
    """gunicorn with our gthread worker; each worker opens its own Chroma client after the fork."""
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
        "child_exit": lambda _server, worker: multiprocess.mark_process_dead(worker.pid),  # its live gauges go
        "on_exit": lambda _server: shutil.rmtree(folder, ignore_errors=True) if ours else None,
    }
    configure_logging(settings)
    _Gunicorn(settings, options).run()
