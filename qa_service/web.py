"""create_app(): the chat page, the JSON API, its error handlers and security headers."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Iterator

from flask import Flask, Response, current_app, jsonify, request, stream_with_context
from werkzeug.exceptions import HTTPException

from . import access, facade, metrics
from .answering import Answerer, validate_history
from .config import Settings, load_settings
from .errors import BadRequest, NotIndexed, PayloadTooLarge, QAError
from .index import Index
from .models import ChatModel
from .openapi import openapi_spec

log = logging.getLogger(__name__)


class Services:
    """What a request needs, built once per process by the app factory."""

    def __init__(self, settings: Settings, index: Index | None = None, model: ChatModel | None = None):
        self.settings = settings
        self._index = index
        self._model = model
        self._answerer: Answerer | None = None

    @property
    def index(self) -> Index:
        if self._index is None:
            try:
                self._index = Index(self.settings)
            except QAError:
                raise
            except Exception as exc:  # chroma unreachable, data dir unreadable, ...
                raise NotIndexed(
                    f"the index cannot be opened ({type(exc).__name__}: {exc}); check QA_DATA_DIR / QA_CHROMA_URL "
                    f"and run `qa-service ingest`"
                ) from exc
        return self._index

    def warm(self) -> None:
        """Open the index, load BM25 and the embedding model now, so the first request is not slow."""
        try:
            self.index.load_lexical()
            self.index.embedder.embed_query(["warm-up"])
        except Exception as exc:  # noqa: BLE001 - an empty or unreachable index is reported per request
            log.warning("warm-up skipped: %s", exc)

    @property
    def answerer(self) -> Answerer:
        if self._answerer is None:
            self._answerer = Answerer(self.index, self.settings, self._model)
        return self._answerer


def services() -> Services:
    return current_app.extensions["qa"]


def json_body() -> dict:
    """The request's JSON object, or a 415/400 that says what was wrong."""
    if not request.is_json:
        raise QAError("send a JSON body with Content-Type: application/json", status=415, code="unsupported_media_type")
    data = request.get_json(silent=True)
    if data is None:
        raise BadRequest("the body is not valid JSON")
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return data


def question_field(data: dict, settings: Settings) -> str:
    question = data.get("question")
    if question is None:
        raise BadRequest("'question' is required")
    if not isinstance(question, str):
        raise BadRequest("'question' must be a string")
    if not question.strip():
        raise BadRequest("'question' must not be empty")
    if len(question) > settings.max_question_chars:
        raise PayloadTooLarge(f"'question' is longer than {settings.max_question_chars} characters")
    return question.strip()


def k_field(data: dict, settings: Settings) -> int:
    k = data.get("k", settings.retrieval_k)
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= settings.max_k:
        raise BadRequest(f"'k' must be a whole number from 1 to {settings.max_k}")
    return k


CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def register_page(app: Flask) -> None:
    index_html = (Path(app.static_folder) / "index.html").read_bytes()  # read once, not per request

    @app.get("/")
    def page() -> Response:
        return Response(index_html, mimetype="text/html")

    @app.get("/api/info")
    def info() -> Any:
        """What answers and over which corpus: the page shows it."""
        svc = services()
        auth = bool(svc.settings.api_key)
        try:
            stats = svc.index.stats()
            model = svc.answerer.model.name
        except QAError as exc:
            empty = {"papers": 0, "chunks": 0, "built_at": None, "embedding_model": None}
            return jsonify(model=None, auth_required=auth, index=empty, error=exc.to_dict()["error"])
        return jsonify(model=model, auth_required=auth, index={k: stats[k] for k in ("papers", "chunks", "built_at", "embedding_model")})

    @app.get("/openapi.json")
    def openapi() -> Any:
        return jsonify(openapi_spec(services().settings))

    @app.after_request
    def security_headers(response: Response) -> Response:
        for key, value in SECURITY_HEADERS.items():
            response.headers.setdefault(key, value)
        return response


def register_api(app: Flask) -> None:
    @app.get("/healthz")
    def healthz() -> Any:
        """The process is up (even when the index is not): for liveness probes."""
        try:
            papers = services().index.papers.count()
        except Exception:  # noqa: BLE001 - liveness must not depend on the store
            papers = 0
        return jsonify(status="ok", papers=papers)

    @app.get("/readyz")
    def readyz() -> Any:
        """Ready to answer: the index opens and holds papers; else 503 saying what to do."""
        try:
            index = services().index
            index.require_ready()
            return jsonify(status="ready", papers=index.papers.count())
        except QAError as exc:
            return jsonify(status="not_ready", **exc.to_dict()), 503
        except Exception as exc:  # noqa: BLE001 - e.g. the Chroma server went away after start
            message = f"the index is unreachable ({type(exc).__name__}); check QA_CHROMA_URL / QA_DATA_DIR"
            return jsonify(status="not_ready", error={"code": "not_ready", "message": message}), 503

    @app.get("/api/papers")
    def papers() -> Any:
        index = services().index
        records = index.list_papers()
        query = request.args.get("q", "").strip().lower()
        if query:
            records = [r for r in records if query in f"{r['id']} {r['label']} {r['title']}".lower()]
        return jsonify(papers=[{k: r[k] for k in ("id", "label", "title", "year")} for r in records], total=len(records))

    @app.get("/api/papers/<path:paper_id>")
    def paper(paper_id: str) -> Any:
        return jsonify(services().index.get_paper(paper_id))

    @app.post("/api/search")
    def search() -> Any:
        data = json_body()
        settings = services().settings
        question, k = question_field(data, settings), k_field(data, settings)
        services().index.require_ready()
        hits = services().answerer.retriever.search(question, k, texts=False)
        return jsonify(results=[h.to_dict() for h in hits])


def ask_arguments() -> tuple[str, int, list[dict]]:
    data = json_body()
    settings = services().settings
    return question_field(data, settings), k_field(data, settings), validate_history(data.get("history"), settings.max_history_turns)


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def event_text(kind: str, payload: Any) -> str:
    return sse(kind, {"text": payload} if kind == "delta" else payload)


def register_ask(app: Flask) -> None:
    @app.post("/api/ask")
    def ask() -> Any:
        question, k, history = ask_arguments()
        result = services().answerer.ask(question, k, history)
        app.extensions["qa_metrics"].observe_answer(result)
        return jsonify(result)

    @app.post("/api/ask/stream")
    def ask_stream() -> Response:
        """Server-sent events: 'delta' {text} as the answer is written, then 'final' or 'error'."""
        question, k, history = ask_arguments()
        events = services().answerer.stream(question, k, history)
        first = event_text(*next(events))  # retrieval runs here: its errors are still plain HTTP errors

        def generate() -> Iterator[str]:
            yield first
            try:
                for kind, payload in events:
                    if kind == "final":
                        app.extensions["qa_metrics"].observe_answer(payload)
                    yield event_text(kind, payload)
            except QAError as exc:
                yield sse("error", exc.to_dict())
            except Exception:  # the stream must end with an event, never hang or cut silently
                log.exception("stream failed")
                yield sse("error", {"error": {"code": "internal_error", "message": "internal error; see the server log"}})

        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        return Response(stream_with_context(generate()), mimetype="text/event-stream", headers=headers)


def register_errors(app: Flask) -> None:
    @app.errorhandler(QAError)
    def qa_error(exc: QAError) -> tuple[Response, int]:
        return jsonify(exc.to_dict()), exc.status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> tuple[Response, int]:
        code = (exc.name or "error").lower().replace(" ", "_")
        message = exc.description or exc.name
        if exc.code == 413:
            message = f"the request body is larger than {app.config['MAX_CONTENT_LENGTH']} bytes"
        return jsonify(error={"code": code, "message": message}), exc.code or 500

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> tuple[Response, int]:
        log.exception("unhandled error")
        return jsonify(error={"code": "internal_error", "message": "internal error; see the server log"}), 500


def create_app(settings: Settings | None = None, *, index: Index | None = None, model: ChatModel | None = None) -> Flask:
    """The app factory: settings and parts are passed in, nothing is global."""
    settings = settings or load_settings()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.ensure_ascii = False
    app.extensions["qa"] = Services(settings, index, model)
    register_errors(app)
    access.init_app(app, settings)
    app.extensions["qa_metrics"] = metrics.init_app(app, lambda: services().index.stats())
    register_page(app)
    register_api(app)
    register_ask(app)
    facade.register(
        app, lambda: services().answerer, json_body, lambda: services().settings,
        lambda result: app.extensions["qa_metrics"].observe_answer(result),
    )
    return app
