"""create_app(): the chat page and the JSON API as blueprints, error handlers and security headers."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, jsonify, request
from werkzeug.exceptions import ClientDisconnected, HTTPException

from . import access, facade, metrics
from .config import Settings, load_settings
from .errors import QAError
from .index import Index
from .inputs import history_turns, k_value, paper_filter, question_text
from .models import ChatModel
from .openapi import openapi_spec
from .records import Turn
from .service import Services
from .sse import event_stream
from .textclean import sentence_spans
from .webctx import json_body, observe, read_store, release_store, services, stream_holding_store

log = logging.getLogger(__name__)

page = Blueprint("page", __name__)
api = Blueprint("api", __name__)


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


@page.get("/")
def index_page() -> Response:
    return Response(current_app.extensions["qa_page"], mimetype="text/html")


@page.get("/api/info")
def info() -> Any:
    """What answers and over which corpus: the page shows it."""
    svc = services()
    auth = bool(svc.settings.api_key)
    limits = {"question_chars": svc.settings.max_question_chars, "history_turns": svc.settings.max_history_turns,
              "history_chars": svc.settings.max_history_chars}  # the page counts characters against these
    try:
        read_store()
        stats = svc.index.stats()
        model = svc.model.name
    except QAError as exc:
        empty = {"papers": 0, "chunks": 0, "built_at": None, "embedding_model": None}
        return jsonify(model=None, auth_required=auth, index=empty, limits=limits, error=exc.to_dict()["error"])
    return jsonify(model=model, auth_required=auth, limits=limits,
                   index={k: stats[k] for k in ("papers", "chunks", "built_at", "embedding_model")})


@page.get("/openapi.json")
def openapi() -> Any:
    return jsonify(openapi_spec(services().settings))


@page.after_app_request
def security_headers(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    return response


@api.get("/healthz")
def healthz() -> Any:
    """The process is up (even when the index is not): for liveness probes."""
    try:
        services().index.follow(None)  # a Chroma server: probes alone keep an idle worker's corpus version fresh
        papers = services().index.papers.count()
    except Exception:  # noqa: BLE001 - liveness must not depend on the store
        papers = 0
    return jsonify(status="ok", papers=papers)


@api.get("/readyz")
def readyz() -> Any:
    """Ready to answer: the store opens and holds papers, BM25 matches the corpus version and a test
    query returns; else 503 naming the part and what repairs it."""
    try:
        read_store()
        stats = services().index.readiness()
        return jsonify(status="ready", papers=stats["papers"])
    except QAError as exc:
        return jsonify(status="not_ready", **exc.to_dict()), 503
    except Exception as exc:  # noqa: BLE001 - e.g. the Chroma server went away after start
        message = f"the index is unreachable ({type(exc).__name__}); check QA_CHROMA_URL / QA_DATA_DIR"
        return jsonify(status="not_ready", error={"code": "not_ready", "message": message}), 503


@api.get("/api/papers")
def papers() -> Any:
    """Every paper; with q, those whose id, label, title or abstract holds it (the page's filter)."""
    read_store()
    query = paper_filter(request.args.get("q", ""), services().settings)
    if not query:
        listing = services().index.list_papers()
        return jsonify(papers=[{"id": p.id, "label": p.label, "title": p.title, "year": p.year} for p in listing], total=len(listing))
    found = []
    for p in services().index.list_papers(with_text=True):
        named = query in f"{p.id} {p.label} {p.title}".lower()
        snippet = "" if named else matching_sentence(p.text, query)
        if named or snippet:
            found.append({"id": p.id, "label": p.label, "title": p.title, "year": p.year, "snippet": snippet})
    return jsonify(papers=found, total=len(found))


def matching_sentence(text: str, query: str) -> str:
    """The abstract's sentence that holds `query` (lower-case), so the page can show why a paper matched."""
    at = text.lower().find(query)
    if at < 0:
        return ""
    for start, end in sentence_spans(text):
        if start <= at < end:
            return text[start:end]
    return text


@api.get("/api/papers/<path:paper_id>")
def paper(paper_id: str) -> Any:
    read_store()
    return jsonify(services().index.get_paper(paper_id).to_dict())


@api.post("/api/search")
def search() -> Any:
    data = json_body()
    settings = services().settings
    question, k = question_text(data.get("question"), settings), k_value(data.get("k", settings.retrieval_k), settings)
    read_store()
    services().index.require_ready()
    hits = services().answerer.retriever.search(question, k, texts=False)
    return jsonify(results=[h.to_dict() for h in hits])


def ask_arguments() -> tuple[str, int, list[Turn]]:
    data = json_body()
    settings = services().settings
    return question_text(data.get("question"), settings), k_value(data.get("k", settings.retrieval_k), settings), history_turns(data.get("history"), settings)


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


@api.post("/api/ask")
def ask() -> Any:
    question, k, history = ask_arguments()
    read_store()
    answer = services().answerer.ask(question, k, history)
    observe(answer)
    return jsonify(answer.to_dict())


@api.post("/api/ask/stream")
def ask_stream() -> Response:
    """Server-sent events: 'delta' {text} as the answer is written, then 'final' or 'error'."""
    question, k, history = ask_arguments()
    read_store()
    return stream_holding_store(event_stream(
        services().answerer.stream(question, k, history),
        write=lambda event: sse(event.name, event.payload()),
        fail=lambda exc: sse("error", exc.to_dict()),
        on_final=observe,
    ))


def error_response(status: int, code: str, message: str, param: str | None = None, headers: Any = ()) -> Response:
    """Every error as JSON: in OpenAI's shape under /v1/ (what its clients read), else {"error": {code, message}}."""
    if request.path.startswith("/v1/"):
        body = facade.openai_error(status, code, message, param)
    else:
        body = {"error": {"code": code, "message": message}}
    response = jsonify(body)
    response.status_code = status
    response.headers.extend(headers)
    return response


def register_errors(app: Flask) -> None:
    @app.errorhandler(QAError)
    def qa_error(exc: QAError) -> Response:
        if exc.retry_after:  # e.g. an ingest is writing, or every model slot is taken: when to come back
            g.retry_after = exc.retry_after  # the rate limiter's headers must not replace it
        return error_response(exc.status, exc.code, exc.message, exc.param, exc.headers())

    @app.errorhandler(ClientDisconnected)
    def body_stalled(exc: ClientDisconnected) -> Response:
        """The body stopped short of its Content-Length: the client stalled past client_timeout, or left."""
        return error_response(408, "request_timeout", "the request body stopped arriving before its Content-Length; send it whole")

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        """werkzeug's and flask-limiter's errors, with their headers (Allow on a 405, as RFC 9110 asks)."""
        code = (exc.name or "error").lower().replace(" ", "_")
        message = exc.description or exc.name
        if exc.code == 413:
            message = f"the request body is larger than {app.config['MAX_CONTENT_LENGTH']} bytes"
        headers = [(k, v) for k, v in exc.get_headers() if k.lower() != "content-type"]
        return error_response(exc.code or 500, code, message, headers=headers)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        log.exception("unhandled error")
        return error_response(500, "internal_error", "internal error; see the server log")


def create_app(settings: Settings | None = None, *, index: Index | None = None, model: ChatModel | None = None) -> Flask:
    """The app factory: settings and parts are passed in, nothing is global."""
    settings = settings or load_settings()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.ensure_ascii = False
    app.extensions["qa_page"] = (Path(app.static_folder) / "index.html").read_bytes()  # read once, not per request
    register_errors(app)
    app.teardown_request(release_store)
    access.init_app(app, settings)
    facts = metrics.init_app(app, lambda: app.extensions["qa"].index.stats(), lambda: app.extensions["qa"].index.writer_status())
    app.extensions["qa_metrics"] = facts
    app.extensions["qa"] = Services(settings, index, model, on_lexical=facts.observe_lexical)
    app.register_blueprint(page)
    app.register_blueprint(api)
    app.register_blueprint(facade.blueprint)
    return app

