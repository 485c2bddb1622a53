"""The OpenAPI 3 document of every route, served at /openapi.json and fuzzed by schemathesis."""

from __future__ import annotations

from typing import Any

from .config import Settings
from .records import Answer, IssueKind, RefusalReason

ERROR = {"$ref": "#/components/schemas/Error"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict:
    words = {400: "Bad request", 401: "Missing or wrong API key", 404: "Not found", 408: "Body stalled", 413: "Too large",
             415: "Not JSON", 429: "Rate limited", 502: "Model failed", 503: "Not ready", 504: "Model timed out"}
    return {str(code): _json(ERROR, words[code]) for code in codes}


def openapi_spec(settings: Settings) -> dict[str, Any]:
    question = {"type": "string", "minLength": 1, "maxLength": settings.max_question_chars, "pattern": r"\S"}
    k = {"type": "integer", "minimum": 1, "maximum": settings.max_k}
    turn = {"type": "object", "required": ["role", "content"], "properties": {
        "role": {"type": "string", "enum": ["user", "assistant"]}, "content": {"type": "string", "maxLength": settings.max_history_chars}}}
    ask_body = {"type": "object", "required": ["question"], "properties": {
        "question": question, "k": k, "history": {"type": "array", "items": turn, "maxItems": settings.max_history_turns}}}
    common = _errors(429) if settings.rate_limit else {}
    if settings.api_key:
        common.update(_errors(401))
    api = {**common, **_errors(503)}
    answers = {**api, **(_errors(429) if settings.answer_rate_limit else {})}  # the answer routes' own, smaller budget
    body_errors = _errors(400, 408, 413, 415)  # 408: the body stalled past client_timeout
    return {
        "openapi": "3.0.3",
        "info": {"title": "qa-service", "version": "0.1.0", "description": "Cited answers over ICLR 2026 abstracts."},
        "paths": {
            "/healthz": {"get": {"responses": {"200": _json({"$ref": "#/components/schemas/Health"}, "Up")}}},
            "/readyz": {"get": {"responses": {
                "200": _json({"$ref": "#/components/schemas/Health"}, "Ready"),
                "503": _json({"type": "object", "required": ["status", "error"]}, "Not ready")}}},
            "/api/info": {"get": {"responses": {"200": _json({"$ref": "#/components/schemas/Info"}, "What answers"), **common}}},
            "/api/papers": {"get": {
                "parameters": [{"name": "q", "in": "query", "required": False, "schema": {"type": "string", "maxLength": 200}}],
                "responses": {"200": _json({"$ref": "#/components/schemas/PaperList"}, "Papers"), **api}}},
            "/api/papers/{paper_id}": {"get": {
                "parameters": [{"name": "paper_id", "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}],
                "responses": {"200": _json({"$ref": "#/components/schemas/Paper"}, "One paper"), **api, **_errors(404)}}},
            "/api/search": {"post": {
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["question"], "properties": {"question": question, "k": k}}}}},
                "responses": {"200": _json({"$ref": "#/components/schemas/SearchResults"}, "Ranked papers"), **api, **body_errors}}},
            "/api/ask": {"post": {
                "requestBody": {"required": True, "content": {"application/json": {"schema": ask_body}}},
                "responses": {"200": _json({"$ref": "#/components/schemas/Answer"}, "A cited answer"), **answers, **body_errors, **_errors(502, 504)}}},
            "/api/ask/stream": {"post": {
                "requestBody": {"required": True, "content": {"application/json": {"schema": ask_body}}},
                "responses": {"200": {"description": "Server-sent events: sources {question, sources} once retrieval is done, delta {text}..., then final (an Answer) or error",
                                      "content": {"text/event-stream": {"schema": {
                                          "type": "object", "required": ["event", "data"], "properties": {
                                              "event": {"type": "string", "enum": ["sources", "delta", "final", "error"]},
                                              "data": {"type": "string"}}}}}},
                              **answers, **body_errors, **_errors(502, 504)}}},
            "/metrics": {"get": {"responses": {"200": {"description": "Prometheus metrics", "content": {"text/plain": {"schema": {"type": "string"}}}}}}},
            "/v1/models": {"get": {"responses": {"200": _json({"type": "object", "required": ["object", "data"]}, "The one model"), **common}}},
            "/v1/chat/completions": {"post": {
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "type": "object", "required": ["messages"], "properties": {
                        "model": {"type": "string"}, "stream": {"type": "boolean"},
                        "messages": {"type": "array", "minItems": 1, "maxItems": settings.max_history_turns + 1, "items": {
                            "type": "object", "required": ["role", "content"], "properties": {
                                "role": {"type": "string", "enum": ["system", "user", "assistant"]},
                                "content": {"type": "string", "maxLength": settings.max_question_chars}}}}}}}}},
                "responses": {
                    "200": {"description": "A chat completion (JSON), or chunks (server-sent events) when stream is true",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ChatCompletion"}},
                                        "text/event-stream": {"schema": {"type": "object", "required": ["data"], "properties": {"data": {"type": "string"}}}}}},
                    **answers, **body_errors, **_errors(502, 504)}}},
        },
        "components": {"schemas": _schemas()},
    }


def _schemas() -> dict:
    string, integer, number, boolean = ({"type": t} for t in ("string", "integer", "number", "boolean"))
    nullable_string = {"type": "string", "nullable": True}
    evidence = {"type": "object", "required": ["text", "start", "end"], "properties": {"text": string, "start": integer, "end": integer}}
    citation = {"type": "object", "required": ["n", "paper_id", "label", "quote", "start", "end", "score", "supported"], "properties": {
        "n": integer, "paper_id": string, "label": string, "quote": string, "start": integer, "end": integer,
        "score": number, "supported": boolean, "sentence": integer}}
    index = {"type": "object", "required": ["papers", "built_at", "embedding_model"], "properties": {
        "papers": integer, "chunks": integer, "built_at": nullable_string, "embedding_model": nullable_string}}
    return {
        "Error": {"type": "object", "required": ["error"], "properties": {"error": {
            "type": "object", "required": ["code", "message"], "properties": {"code": string, "message": string}}}},
        "Health": {"type": "object", "required": ["status", "papers"], "properties": {"status": string, "papers": integer}},
        "Info": {"type": "object", "required": ["model", "auth_required", "index"], "properties": {
            "model": nullable_string, "auth_required": boolean, "index": index,
            "limits": {"type": "object", "properties": {"question_chars": integer, "history_turns": integer, "history_chars": integer}}}},
        "PaperList": {"type": "object", "required": ["papers", "total"], "properties": {"total": integer, "papers": {
            "type": "array", "items": {"type": "object", "required": ["id", "label"], "properties": {
                "id": string, "label": string, "title": string, "year": {"type": "integer", "nullable": True},
                "snippet": string}}}}},
        "Paper": {"type": "object", "required": ["id", "label", "text", "abstract"], "properties": {
            "id": string, "label": string, "title": string, "text": string, "abstract": string, "source": string,
            "authors": {"type": "array", "items": string}, "keywords": {"type": "array", "items": string},
            "year": {"type": "integer", "nullable": True}, "venue": string, "url": string}},
        "SearchResults": {"type": "object", "required": ["results"], "properties": {"results": {"type": "array", "items": {
            "type": "object", "required": ["paper_id", "label", "score", "evidence"], "properties": {
                "paper_id": string, "label": string, "score": number, "evidence": {"type": "array", "items": evidence}}}}}},
        "ChatCompletion": {"type": "object", "required": ["id", "object", "choices", "citations"], "properties": {
            "id": string, "object": string, "model": string, "choices": {"type": "array", "items": {"type": "object"}},
            "citations": {"type": "array", "items": citation}, "grounded": boolean}},
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
            "n": {"type": "integer"}, "paper_id": string, "label": string}}},
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
        "model": string,
        "usage": {"type": "object", "required": ["prompt_tokens", "completion_tokens"], "properties": {
            "prompt_tokens": {"type": "integer"}, "completion_tokens": {"type": "integer"}}},
        "timings_ms": {"type": "object", "required": ["retrieve", "generate", "total"], "properties": {
            "retrieve": number, "generate": number, "total": number}},
        "index": index,
    }
    return {"type": "object", "required": list(Answer("").to_dict()), "properties": properties}
