"""The OpenAPI 3 document of every route, served at /openapi.json and fuzzed by schemathesis."""

from __future__ import annotations

from typing import Any

from ..config import Settings
from ..store.corpora import NAME_PATTERN
from ..store.filters import FIELDS, RANGE
from ..chat_inputs import MODEL_ID, MODEL_SEPARATOR, chat_body_schema
from ..inputs import VISIBLE_PATTERN, filter_text_schema, filters_schema
from ..records import Answer, AnswerKind, IssueKind, RefusalReason, SentenceKind, SentenceVerdict

_TEXT = ("venue", "author", "keyword")  # the filter fields whose values are strings

ERROR = {"$ref": "#/components/schemas/Error"}
OPENAI_ERROR = {"$ref": "#/components/schemas/OpenAIError"}
WORDS = {400: "Bad request", 401: "No API key, or a wrong one", 404: "Not found", 408: "Body stalled", 413: "Too large",
         414: "Request line over max_request_line (answered by the server before the app, in this shape on every route)",
         415: "Not JSON", 429: "Over this client's budget", 502: "Model failed", 503: "Not ready, or every model slot busy",
         504: "Model timed out"}
HEADERS = {  # what a client reads from an error besides its body
    401: {"WWW-Authenticate": {"required": True, "description": "Bearer challenge (RFC 6750)", "schema": {"type": "string"}}},
    429: {"Retry-After": {"required": True, "description": "Seconds to wait", "schema": {"type": "integer"}}},
    503: {"Retry-After": {"required": False, "description": "Seconds to wait (model_busy)", "schema": {"type": "integer"}}},
}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int, shape: dict = ERROR) -> dict:
    responses = {}
    for code in codes:
        responses[str(code)] = _json(shape, WORDS[code])
        if code in HEADERS:
            responses[str(code)]["headers"] = HEADERS[code]
    return responses


def _body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def question_schema(settings: Settings) -> dict:
    """The question as inputs.question_text checks it. Its length limit counts the question as it is searched
    (spaces collapsed, markup dropped), which JSON Schema cannot say: it is in the description and in
    x-max-length-as-searched, and a longer question is a 413."""
    return {"type": "string", "minLength": 1, "pattern": VISIBLE_PATTERN, "x-max-length-as-searched": settings.max_question_chars,
            "description": f"At most {settings.max_question_chars} characters as searched (spaces collapsed, markup "
                           f"removed; longer is 413), with at least one visible character."}


def corpus_schema(corpora: list[str]) -> dict:
    """One corpus name, by its form: a string, not an enum, so that a generated client serves a corpus added later
    (an unknown one is a 404); the names the store holds now are the example and the description."""
    schema = {"type": "string", "pattern": NAME_PATTERN}
    return {**schema, "example": corpora[0], "description": f"A corpus name; here now: {', '.join(corpora)}"} if corpora else schema


def corpus_parameter(corpora: list[str]) -> dict:
    return {"name": "corpus", "in": "query", "required": False, "style": "form", "explode": True,
            "description": "The corpora to read (repeat it for several); none: every corpus",
            "schema": {"type": "array", "minItems": 1, "items": corpus_schema(corpora)}}


def filter_parameters(settings: Settings) -> list[dict]:
    """?year=&venue=&author=&keyword=: the metadata filters of a GET route, each repeatable."""
    year = {"type": "integer", "minimum": 1, "maximum": 9999}
    ends = [{"name": name, "in": "query", "required": False, "schema": year,
             "description": f"Only papers from this year or {'later' if name == 'year_from' else 'earlier'}"} for name in RANGE]
    return [{"name": name, "in": "query", "required": False, "style": "form", "explode": True,
             "description": f"Only papers with this {name} (repeat it for any of several)",
             "schema": {"type": "array", "minItems": 1, "maxItems": settings.max_filter_values,
                        "items": year if name == "year" else filter_text_schema(settings)}} for name in FIELDS] + ends


def openapi_spec(settings: Settings, corpora: list[str] | None = None) -> dict[str, Any]:
    """The document of what this server, with these settings and corpora, does: limits, auth and budgets included."""
    corpora = corpora or []
    keyed = bool(settings.api_key)
    security: dict[str, Any] = {"security": [{"ApiKey": []}]} if keyed else {}
    open_route: dict[str, Any] = {"security": []} if keyed else {}
    budget = bool(settings.rate_limit)
    answers = budget or bool(settings.answer_rate_limit)
    api = {**_errors(*([401] if keyed else []), *([429] if budget else []), 503)}
    paths = {
        "/healthz": {"get": {"operationId": "health", "summary": "The process is up", **open_route,
                             "responses": {"200": _json({"$ref": "#/components/schemas/Health"}, "Up")}}},
        "/readyz": {"get": {"operationId": "ready", "summary": "The index can answer", **open_route,
            "parameters": [corpus_parameter(corpora)], "responses": {
            "200": _json({"$ref": "#/components/schemas/Health"}, "Ready"),
            "503": _json({"type": "object", "required": ["status", "error"]}, "Not ready"), **_errors(400, 404, 414)}}},
        "/api/info": {"get": {"operationId": "getInfo", "summary": "What answers, over which corpora", **security,
            "parameters": [corpus_parameter(corpora)], "responses": {
            "200": _json({"$ref": "#/components/schemas/Info"}, "What answers"),
            **_errors(*([401] if keyed else []), *([429] if budget else []), 400, 404, 414)}}},
        "/api/corpora": {"get": {"operationId": "listCorpora", "summary": "The corpora, with the years and venues of their papers",
            **security, "parameters": [corpus_parameter(corpora)],
            "responses": {"200": _json({"$ref": "#/components/schemas/CorpusList"}, "Corpora"), **api, **_errors(400, 404, 414)}}},
        "/api/examples": {"get": {"operationId": "listExamples", "summary": "Example questions drawn from the papers' names or titles",
            **security, "parameters": [corpus_parameter(corpora)],
            "responses": {"200": _json({"$ref": "#/components/schemas/ExampleList"}, "Examples"), **api, **_errors(400, 404, 414)}}},
        "/api/papers": {"get": {"operationId": "listPapers", "summary": "The indexed papers, optionally filtered", **security,
            "parameters": [{"name": "q", "in": "query", "required": False, "description": "Part of an id, label or title",
                            "schema": {"type": "string", "maxLength": settings.max_filter_chars}},
                           {"name": "limit", "in": "query", "required": False, "description": "At most this many papers (default: all)",
                            "schema": {"type": "integer", "minimum": 1, "maximum": settings.max_page_papers}},
                           {"name": "cursor", "in": "query", "required": False,
                            "description": "The next_cursor of the page before", "schema": {"type": "string", "minLength": 1}},
                           corpus_parameter(corpora), *filter_parameters(settings)],
            "responses": {"200": _json({"$ref": "#/components/schemas/PaperList"}, "Papers"), **api, **_errors(400, 404, 414)}}},
        "/api/papers/{paper_id}": {"get": {"operationId": "getPaper", "summary": "One paper", **security,
            "parameters": [{"name": "paper_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}},
                           corpus_parameter(corpora)],
            "responses": {"200": _json({"$ref": "#/components/schemas/Paper"}, "One paper"), **api, **_errors(400, 404, 414)}}},
        "/metrics": {"get": {"operationId": "metrics", "summary": "Prometheus metrics", **open_route, "responses": {
            "200": {"description": "Prometheus metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
        **_question_paths(settings, security, api, answers, corpora),
        **_openai_paths(settings, security, keyed, budget, answers, corpora),
    }
    components: dict[str, Any] = {"schemas": _schemas()}
    if keyed:
        components["securitySchemes"] = {"ApiKey": {"type": "http", "scheme": "bearer",
                                                    "description": "The server's QA_API_KEY, as 'Authorization: Bearer <key>'"}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "qa-service", "version": "0.1.0", "description": "Cited answers over ICLR 2026 abstracts."},
        "paths": paths,
        "components": components,
    }


def _question_paths(settings: Settings, security: dict, api: dict, answers: bool, corpora: list[str]) -> dict:
    question = question_schema(settings)
    name = corpus_schema(corpora)
    scope = {"corpus": {"oneOf": [name, {"type": "array", "minItems": 1, "items": name}],
                        "description": "The corpus to read, or a list of them; none: every corpus"},
             "filters": filters_schema(settings)}
    k = {"type": "integer", "minimum": 1, "maximum": settings.max_k}
    turn = {"type": "object", "required": ["role", "content"], "properties": {
        "role": {"type": "string", "enum": ["user", "assistant"]}, "content": {"type": "string", "maxLength": settings.max_history_chars}}}
    history = {"type": "array", "nullable": True, "items": turn, "maxItems": settings.max_history_turns}
    ask_body = {"type": "object", "required": ["question"], "properties": {"question": question, "k": k, "history": history, **scope}}
    body_errors = _errors(400, 404, 408, 413, 415)  # 408: the body stalled past client_timeout; 404: an unknown corpus
    answer_errors = {**api, **_errors(*([429] if answers else [])), **body_errors, **_errors(502, 504)}
    # Each event: `event: sources|delta|final|error` and a `data:` line of JSON. No type: schemathesis reads the
    # stream as {event, data} objects, openapi-python-client as text, and both must take it.
    events = {"description": "server-sent events, each {event, data} with data a JSON text"}
    return {
        "/api/search": {"post": {"operationId": "search", "summary": "The papers most relevant to a question", **security,
            "requestBody": _body({"type": "object", "required": ["question"], "properties": {"question": question, "k": k, **scope}}),
            "responses": {"200": _json({"$ref": "#/components/schemas/SearchResults"}, "Ranked papers"), **api, **body_errors}}},
        "/api/ask": {"post": {"operationId": "ask", "summary": "A cited answer, or a refusal with its reason", **security,
            "requestBody": _body(ask_body),
            "responses": {"200": _json({"$ref": "#/components/schemas/Answer"}, "A cited answer"), **answer_errors}}},
        "/api/ask/stream": {"post": {"operationId": "askStream", "summary": "The answer as server-sent events", **security,
            "requestBody": _body(ask_body),
            "responses": {"200": {"description": "Server-sent events: sources {question, sources} once retrieval is done, "
                                                 "delta {text}..., then final (an Answer) or error",
                                  "content": {"text/event-stream": {"schema": events}}}, **answer_errors}}},
    }


def _openai_paths(settings: Settings, security: dict, keyed: bool, budget: bool, answers: bool, corpora: list[str]) -> dict:
    """The OpenAI-compatible routes: their errors are in OpenAI's shape, as its clients read them."""
    limited = [429] if budget else []
    common = _errors(*([401] if keyed else []), *limited, shape=OPENAI_ERROR)
    model_id = {"name": "model_id", "in": "path", "required": True, "example": MODEL_ID, "schema": {"type": "string", "minLength": 1}}
    return {
        "/v1/models": {"get": {"operationId": "listModels", "summary": "The one model: qa-service", **security, "responses": {
            "200": _json({"$ref": "#/components/schemas/ModelList"}, "The one model"), **common}}},
        "/v1/models/{model_id}": {"get": {"operationId": "retrieveModel", "summary": "A model by id", **security,
            "parameters": [model_id], "responses": {
                "200": _json({"$ref": "#/components/schemas/Model"}, "The model"), **common, **_errors(404, shape=OPENAI_ERROR),
                **_errors(414)}}},
        "/v1/chat/completions": {"post": {"operationId": "createChatCompletion", "summary": "An answer as an OpenAI chat completion",
            **security, "requestBody": _body(chat_body_schema(settings, model_ids(corpora))), "responses": {
                "200": {"description": "A chat completion (JSON), or chunks (server-sent events) when stream is true",
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletion"}},
                                    "text/event-stream": {"schema": {"description": "server-sent events: data lines of chunks"}}}},
                **common, **_errors(*([429] if answers else []), 400, 404, 408, 413, 415, 502, 503, 504, shape=OPENAI_ERROR)}}},
    }


def model_ids(corpora: list[str]) -> list[str]:
    """qa-service (every corpus), and qa-service:<corpus> for each."""
    return [MODEL_ID, *(f"{MODEL_ID}{MODEL_SEPARATOR}{name}" for name in corpora)]


def _schemas() -> dict:
    string, integer, number, boolean = ({"type": t} for t in ("string", "integer", "number", "boolean"))
    nullable_string = {"type": "string", "nullable": True}
    evidence = {"type": "object", "required": ["text", "start", "end"], "properties": {"text": string, "start": integer, "end": integer}}
    citation = {"type": "object", "required": ["n", "paper_id", "label", "quote", "start", "end", "score", "supported"], "properties": {
        "n": integer, "paper_id": string, "label": string, "quote": string, "start": integer, "end": integer,
        "score": number, "supported": boolean, "sentence": integer, "corpus": string}}
    counts = {"type": "object", "additionalProperties": integer}  # per corpus, per year, per venue
    index = {"type": "object", "required": ["papers", "built_at", "embedding_model"], "properties": {
        "papers": integer, "chunks": integer, "built_at": nullable_string, "embedding_model": nullable_string}}
    model = {"type": "object", "required": ["id", "object", "created", "owned_by"], "properties": {
        "id": string, "object": {"type": "string", "enum": ["model"]}, "created": integer, "owned_by": string}}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["code", "message"], "properties": {"code": string, "message": string}}}},
        "Health": {"type": "object", "required": ["status", "papers"], "properties": {"status": string, "papers": integer,
                                                                                   "corpora": counts}},
        "Info": {"type": "object", "required": ["model", "auth_required", "index"], "properties": {
            "model": nullable_string, "auth_required": boolean, "index": index, "corpora": {"type": "array", "items": string},
            "limits": {"type": "object", "properties": {"question_chars": integer, "history_turns": integer, "history_chars": integer}}}},
        "PaperList": {"type": "object", "required": ["papers", "total"], "properties": {
            "total": integer, "corpora": counts, "next_cursor": nullable_string, "papers": {
            "type": "array", "items": {"type": "object", "required": ["id", "label"], "properties": {
                "id": string, "label": string, "title": string, "year": {"type": "integer", "nullable": True},
                "venue": string, "corpus": string, "snippet": string}}}}},
        "CorpusList": {"type": "object", "required": ["corpora"], "properties": {"corpora": {"type": "array", "items": {
            "type": "object", "required": ["name", "default", "papers", "version", "embedding_model"], "properties": {
                "name": string, "default": boolean, "papers": integer, "chunks": integer, "version": nullable_string,
                "built_at": nullable_string, "embedding_model": nullable_string, "years": counts, "venues": counts}}}}},
        "ExampleList": {"type": "object", "required": ["examples"], "properties": {"examples": {"type": "array", "items": {
            "type": "object", "required": ["question", "paper_id", "corpus"], "properties": {
                "question": string, "paper_id": string, "corpus": string}}}}},
        "Paper": {"type": "object", "required": ["id", "label", "text", "abstract"], "properties": {
            "id": string, "label": string, "title": string, "text": string, "abstract": string, "source": string, "corpus": string,
            "authors": {"type": "array", "items": string}, "keywords": {"type": "array", "items": string},
            "year": {"type": "integer", "nullable": True}, "venue": string, "url": string}},
        "SearchResults": {"type": "object", "required": ["results"], "properties": {
            "corpora": {"type": "array", "items": string}, "filters": _applied_filters(),
            "results": {"type": "array", "items": {
            "type": "object", "required": ["paper_id", "label", "score", "evidence"], "properties": {
                "paper_id": string, "label": string, "corpus": string, "score": number, "evidence": {"type": "array", "items": evidence}}}}}},
        "OpenAIError": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["message", "type", "param", "code"], "properties": {
                "message": string, "type": string, "param": nullable_string, "code": nullable_string}}}},
        "Model": model,
        "ModelList": {"type": "object", "required": ["object", "data"], "properties": {
            "object": {"type": "string", "enum": ["list"]}, "data": {"type": "array", "items": model}}},
        "ChatCompletion": {"type": "object", "required": ["id", "object", "created", "model", "choices", "usage", "citations",
                                                          "grounded", "insufficient_evidence", "warnings"], "properties": {
            "id": string, "object": {"type": "string", "enum": ["chat.completion"]}, "created": integer,
            "model": {"type": "string", "pattern": f"^{MODEL_ID}"},
            "choices": {"type": "array", "minItems": 1, "maxItems": 1, "items": {
                "type": "object", "required": ["index", "message", "finish_reason"], "properties": {
                    "index": integer, "finish_reason": {"type": "string", "enum": ["stop", "length", "tool_calls"]},
                    "message": {"type": "object", "required": ["role", "content"], "properties": {
                        "role": {"type": "string", "enum": ["assistant"]}, "content": nullable_string,
                        "tool_calls": {"type": "array", "items": _tool_call()}}}}}},
            "usage": {"type": "object", "required": ["prompt_tokens", "completion_tokens", "total_tokens"], "properties": {
                "prompt_tokens": integer, "completion_tokens": integer, "total_tokens": integer}},
            "citations": {"type": "array", "items": citation}, "grounded": boolean, "insufficient_evidence": boolean,
            "warnings": {"type": "array", "items": string}}},
        "Answer": answer_schema(citation, index),
    }


def answer_schema(citation: dict, index: dict) -> dict:
    """The Answer object: its properties are checked against `Answer.to_dict()` so they cannot drift."""
    string, number, boolean = ({"type": t} for t in ("string", "number", "boolean"))
    nullable_string = {"type": "string", "nullable": True}
    properties = {
        "answer": string,
        "citations": {"type": "array", "items": citation},
        "sources": {"type": "array", "items": {"type": "object", "required": ["n", "paper_id", "label"], "properties": {
            "n": {"type": "integer"}, "paper_id": string, "label": string, "corpus": string}}},
        "grounded": boolean,
        "insufficient_evidence": boolean,
        "refusal_reason": {"type": "string", "nullable": True, "enum": [r.value for r in RefusalReason] + [None]},
        "refusal_explanation": nullable_string,
        "did_you_mean": {"type": "array", "items": string},
        "warnings": {"type": "array", "items": string},
        "issues": {"type": "array", "items": {"type": "object", "required": ["kind", "sentence", "detail"], "properties": {
            "kind": {"type": "string", "enum": [k.value for k in IssueKind]},
            "sentence": {"type": "integer", "nullable": True}, "detail": string}}},
        "question": string,
        "asked": string,
        "asks": {"type": "string", "enum": [k.value for k in AnswerKind],
                 "description": "Which kind of answer the question wants (definition, mechanism, problem, results, ...)."},
        "model": string,
        "usage": {"type": "object", "required": ["prompt_tokens", "completion_tokens"], "properties": {
            "prompt_tokens": {"type": "integer"}, "completion_tokens": {"type": "integer"}}},
        "timings_ms": {"type": "object", "required": ["retrieve", "generate", "total"], "properties": {
            "retrieve": number, "generate": number, "total": number}},
        "index": index,
        "corpora": {"type": "array", "items": string},
        "filters": _applied_filters(),
        "sentences": {"type": "array", "items": _sentence_schema(citation)},
    }
    return {"type": "object", "required": list(Answer("").to_dict()), "properties": properties}


def _sentence_schema(citation: dict) -> dict:
    """One unit of the answer with its verdict: answer[start:end] is the unit as written."""
    string, integer = {"type": "string"}, {"type": "integer"}
    return {"type": "object", "required": ["start", "end", "text", "kind", "verdict", "cites", "quotes", "reason"], "properties": {
        "start": integer, "end": integer, "text": string,
        "kind": {"type": "string", "enum": [k.value for k in SentenceKind]},
        "verdict": {"type": "string", "enum": [v.value for v in SentenceVerdict]},
        "cites": {"type": "array", "items": integer}, "quotes": {"type": "array", "items": citation}, "reason": string}}


def _tool_call() -> dict:
    """One call of the request's one tool, its arguments the answer's fields as a JSON text (structured output)."""
    string = {"type": "string"}
    return {"type": "object", "required": ["id", "type", "function"], "properties": {
        "id": string, "type": {"type": "string", "enum": ["function"]},
        "function": {"type": "object", "required": ["name", "arguments"], "properties": {"name": string, "arguments": string}}}}


def _applied_filters() -> dict:
    """The metadata filters a result ran under, each field as a list of the values given."""
    return {"type": "object", "properties": {name: {"type": "array", "items": {"type": "string" if name in _TEXT else "integer"}}
                                             for name in (*FIELDS, *RANGE)}}
