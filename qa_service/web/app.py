"""create_app(): the chat page and the JSON API as blueprints, error handlers and security headers."""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePath
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, jsonify, request
from werkzeug.exceptions import ClientDisconnected, HTTPException

from . import access

from . import facade

from . import metrics
from ..config import Settings, load_settings
from ..store.corpora import Scope, corpus_names
from ..errors import BadRequest, NotFound, QAError
from ..store.filters import MetadataFilter, filters_from_query, parse_filters
from ..store.index import Index
from ..inputs import history_turns, k_value, paper_filter, question_text
from ..answering.models import ChatModel
from .examples import example_questions
from .openapi import openapi_spec
from .paging import cut, page_request
from ..records import IndexStats, Turn
from ..service import Services
from .sse import event_stream
from ..corpus.textclean import sentence_spans
from .context import json_body, observe, read_store, release_store, services, stream_holding_store

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
    """What answers and over which corpora (every one, or ?corpus=): the page shows it."""
    svc = services()
    auth = bool(svc.settings.api_key)
    limits = {"question_chars": svc.settings.max_question_chars, "history_turns": svc.settings.max_history_turns,
              "history_chars": svc.settings.max_history_chars}  # the page counts characters against these
    names = query_corpora()
    try:
        read_store()
        scope = svc.corpora.scope(names)
        stats: list[IndexStats] = [part.index.stats() for part in scope.parts]
        model = svc.model.name
    except NotFound:
        raise
    except QAError as exc:
        empty = {"papers": 0, "chunks": 0, "built_at": None, "embedding_model": None}
        return jsonify(model=None, auth_required=auth, index=empty, limits=limits, corpora=[], error=exc.to_dict()["error"])
    built = [s.built_at for s in stats if s.built_at]
    index = {"papers": sum(s.papers for s in stats), "chunks": sum(s.chunks for s in stats),
             "built_at": max(built) if built else None, "embedding_model": stats[0].embedding_model}
    return jsonify(model=model, auth_required=auth, limits=limits, index=index, corpora=scope.names)


def query_corpora() -> list[str] | None:
    """?corpus=a&corpus=b: the corpora a GET route reads; none given is every corpus."""
    return corpus_names(request.args.getlist("corpus") or None, default=services().settings.collection)


def body_scope(data: dict) -> tuple[list[str] | None, MetadataFilter]:
    """A body's `corpus` and `filters`, checked before the store is read (a 400 names the field)."""
    if "corpus" in data and data["corpus"] is None:
        raise BadRequest("'corpus' must be a corpus name or a list of them; leave it out to read every corpus", param="corpus")
    return corpus_names(data.get("corpus"), default=services().settings.collection), parse_filters(data.get("filters"), services().settings)


def open_scope(names: list[str] | None, filter: MetadataFilter) -> Scope:
    """The scope of a request, once it reads the store: an unknown corpus is a 404 naming those there are."""
    read_store()
    return services().corpora.scope(names, filter)


@page.get("/openapi.json")
def openapi() -> Any:
    try:  # the corpora the store holds are the document's corpus names and model ids
        read_store()
        names = services().corpora.names()
    except QAError:
        names = []
    return jsonify(openapi_spec(services().settings, names))


@page.after_app_request
def security_headers(response: Response) -> Response:
    for key, value in SECURITY_HEADERS.items():
        response.headers.setdefault(key, value)
    return response


@api.get("/healthz")
def healthz() -> Any:
    """The process is up (even when the index is not): for liveness probes. Papers per corpus."""
    counts: dict[str, int] = {}
    try:
        corpora = services().corpora
        corpora.follow(None)  # a Chroma server: probes alone keep an idle worker's corpus versions fresh
        counts = corpora.each(Index.paper_count)
    except Exception:  # noqa: BLE001 - liveness must not depend on the store
        pass
    return jsonify(status="ok", papers=sum(counts.values()), corpora=counts)


@api.get("/readyz")
def readyz() -> Any:
    """Ready to answer: the store opens and holds papers, and for each corpus that holds any, BM25 matches
    its version and a test query returns; else 503 naming the part and what repairs it."""
    names = query_corpora()
    try:
        scope = open_scope(names, MetadataFilter())
        scope.require_ready()
        counts = {part.name: part.index.readiness().papers if part.index.stats().papers else 0 for part in scope.parts}
        warnings = [f"corpus {part.name}: an ingest stopped midway and was not run again; the papers it finished are "
                    f"served: run `qa-service ingest` with the same files to finish it" for part in scope.parts if part.index.interrupted()]
        return jsonify(status="ready", papers=sum(counts.values()), corpora=counts, **({"warnings": warnings} if warnings else {}))
    except NotFound:
        raise
    except QAError as exc:
        return jsonify(status="not_ready", **exc.to_dict()), 503
    except Exception as exc:  # noqa: BLE001 - e.g. the Chroma server went away after start
        message = f"the index is unreachable ({type(exc).__name__}); check QA_CHROMA_URL / QA_DATA_DIR"
        return jsonify(status="not_ready", error={"code": "not_ready", "message": message}), 503


@api.get("/api/papers")
def papers() -> Any:
    """Every paper of the corpora (?corpus=, default every one) the metadata filters allow; with q, those
    whose id, label, title or abstract holds it (the page's filter). Counted per corpus; ?limit= and
    ?cursor= read the list a page at a time (`total` and `corpora` still count every match)."""
    settings = services().settings
    query = paper_filter(request.args.get("q", ""), settings)
    names, only, chosen = query_corpora(), filters_from_query(request.args, settings), page_request(request.args, settings)
    scope = open_scope(names, only)
    found, counts = [], {}
    for part in scope.parts:
        counts[part.name] = 0
        for p in part.index.list_papers(with_text=bool(query)):
            if only and not only.matches(p):
                continue
            entry = {"id": p.id, "label": p.label, "title": p.title, "year": p.year, "venue": p.venue, "corpus": part.name}
            if query:
                named = query in f"{p.id} {p.label} {p.title}".lower()
                entry["snippet"] = "" if named else matching_sentence(p.text, query)
                if not (named or entry["snippet"]):
                    continue
            found.append(entry)
            counts[part.name] += 1
    shown, next_cursor = cut(found, chosen, lambda entry: (entry["corpus"], entry["id"]))
    paged = {"next_cursor": next_cursor} if chosen.limit else {}  # the unpaged answer keeps its shape
    return jsonify(papers=shown, total=len(found), corpora=counts, **paged)


@api.get("/api/corpora")
def corpora() -> Any:
    """Each corpus: papers, version, embedding model, and the years and venues its papers have (the page's filters)."""
    scope = open_scope(query_corpora(), MetadataFilter())
    registry = services().corpora
    return jsonify(corpora=[{**registry.describe(part.name), **registry.facets(part)} for part in scope.parts])


def matching_sentence(text: str, query: str) -> str:
    """The abstract's sentence that holds `query` (lower-case), so the page can show why a paper matched."""
    at = text.lower().find(query)
    if at < 0:
        return ""
    for start, end in sentence_spans(text):
        if start <= at < end:
            return text[start:end]
    return text


@api.get("/api/examples")
def examples() -> Any:
    """Questions the page offers on a first visit, drawn from the papers of the corpora (?corpus=, default every one)."""
    scope = open_scope(query_corpora(), MetadataFilter())
    papers = [(part.name, p) for part in scope.parts for p in part.index.list_papers(with_text=False)]
    return jsonify(examples=[e.to_dict() for e in example_questions(papers)])


@api.get("/api/papers/<path:paper_id>")
def paper(paper_id: str) -> Any:
    """One paper, from whichever corpus (of ?corpus=, default every one) holds it: ids are unique across corpora."""
    scope = open_scope(query_corpora(), MetadataFilter())
    for part in scope.parts:
        found = part.index.get_papers([paper_id]).get(paper_id)
        if found is not None:  # a store written before sources were relative held the absolute path: only its name goes out
            shown = PurePath(found.source).name if PurePath(found.source).is_absolute() else found.source
            return jsonify({**found.to_dict(), "source": shown, "corpus": part.name})
    raise NotFound(f"no paper with id {paper_id!r}")


@api.post("/api/search")
def search() -> Any:
    data = json_body()
    settings = services().settings
    question, k = question_text(data.get("question"), settings), k_value(data.get("k", settings.retrieval_k), settings)
    scope = open_scope(*body_scope(data))
    scope.require_ready()
    # read as an answer reads it: a question in another language with its words' English terms, MiniLM its English words
    hits = services().retriever.search(services().answerer.read(question, scope), k, texts=False, scope=scope)
    return jsonify(results=[h.to_dict() for h in hits], corpora=scope.names, filters=scope.filter.to_dict())


def ask_arguments() -> tuple[str, int, list[Turn], Scope]:
    data = json_body()
    settings = services().settings
    question = question_text(data.get("question"), settings)
    k, history = k_value(data.get("k", settings.retrieval_k), settings), history_turns(data.get("history"), settings)
    return question, k, history, open_scope(*body_scope(data))


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


@api.post("/api/ask")
def ask() -> Any:
    question, k, history, scope = ask_arguments()
    answer = services().answerer.ask(question, k, history, scope=scope)
    observe(answer)
    return jsonify(answer.to_dict())


def stream_error(exc: QAError) -> dict:
    """An error event's body: the headers are long sent, so a time to come back travels in it (`retry_after`, seconds)."""
    body = exc.to_dict()
    if exc.retry_after:
        body["error"]["retry_after"] = exc.retry_after
    return body


@api.post("/api/ask/stream")
def ask_stream() -> Response:
    """Server-sent events: 'delta' {text} as the answer is written, then 'final' or 'error'."""
    question, k, history, scope = ask_arguments()
    return stream_holding_store(event_stream(
        services().answerer.stream(question, k, history, scope=scope),
        write=lambda event: sse(event.name, event.payload()),
        fail=lambda exc: sse("error", stream_error(exc)),
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
    app.json.ensure_ascii = False  # type: ignore[attr-defined]  # Flask's DefaultJSONProvider has it
    app.extensions["qa_page"] = (Path(app.root_path) / "static" / "index.html").read_bytes()  # read once, not per request
    register_errors(app)
    app.teardown_request(release_store)
    access.init_app(app, settings)
    facts = metrics.init_app(app, lambda: app.extensions["qa"].corpora.each(Index.stats), lambda: app.extensions["qa"].index.writer_status())
    app.extensions["qa_metrics"] = facts
    app.extensions["qa"] = Services(settings, index, model, on_lexical=facts.observe_lexical)
    app.register_blueprint(page)
    app.register_blueprint(api)
    app.register_blueprint(facade.blueprint)
    return app

