"""An OpenAI-compatible facade, so existing chat clients (the openai SDK, `llm`, LangChain) use the service as a model.

The last user message is the question, earlier user/assistant turns are the history, system and
developer messages are the caller's own instructions. Every option is honoured or refused with a
400 (`inputs.chat_request`). The reply's content is the answer with [n] markers and a numbered
Sources list, since clients keep only the content; a `citations` field carries the same data.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from flask import Blueprint, jsonify

from ..errors import NotFound, QAError
from ..store.filters import parse_metadata
from ..inputs import MODEL_ID, MODEL_SEPARATOR, chat_request
from ..records import Answer, ChatRequest, Citation, Delta, Final, StreamEvent
from .sse import event_stream
from ..corpus.tokens import token_counter
from .context import json_body, observe, read_store, services, stream_holding_store

MODEL = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "qa-service"}


def model_ids() -> list[str]:
    """qa-service (every corpus), then qa-service:<corpus> for each corpus; only the first when the store cannot say."""
    try:
        read_store()
        names = services().corpora.names()
    except QAError:
        names = []
    return [MODEL_ID, *(f"{MODEL_ID}{MODEL_SEPARATOR}{name}" for name in names)]


def model_entry(model_id: str) -> dict:
    return {**MODEL, "id": model_id}
IGNORED_INSTRUCTIONS = ("the system message was not applied: the offline extractive model answers with the sources' own "
                        "sentences and cannot follow instructions (a model set with QA_MODEL / OPENAI_API_KEY does)")

blueprint = Blueprint("facade", __name__)


def openai_error(status: int, code: str, message: str, param: str | None = None) -> dict:
    """An error as OpenAI sends it (message, type, param, code), which OpenAI clients read."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def sources_block(answer: Answer) -> str:
    """The cited sources as a numbered list: clients that keep only the content keep these."""
    cited: dict[int, Citation] = {}
    for citation in answer.citations:
        cited.setdefault(citation.n, citation)
    if not cited:
        return ""
    several = len(answer.corpora) > 1  # then each source says which corpus holds it
    lines = [f"[{n}] {c.label} ({c.paper_id}{', ' + c.corpus if several and c.corpus else ''})" for n, c in sorted(cited.items())]
    return "\n\nSources:\n" + "\n".join(lines)


def answer_object(answer: Answer) -> dict:
    """The content under response_format json_object: the answer and what backs it."""
    full = answer.to_dict()
    keys = ("answer", "citations", "sources", "grounded", "insufficient_evidence", "refusal_reason", "refusal_explanation", "warnings")
    return {key: full[key] for key in keys}


def content_of(answer: Answer, chat: ChatRequest) -> str:
    if chat.json_object:
        return json.dumps(answer_object(answer), ensure_ascii=False)
    return answer.answer + sources_block(answer)


def notes_for(chat: ChatRequest) -> list[str]:
    """What the reply says it did not apply: sampling options, and instructions the model cannot follow."""
    notes = list(chat.notes)
    if chat.instructions and not services().model.follows_instructions:
        notes.append(IGNORED_INSTRUCTIONS)
    return notes


def _extras(answer: Answer, notes: list[str]) -> dict:
    return {"citations": [c.to_dict() for c in answer.citations], "grounded": answer.grounded,
            "insufficient_evidence": answer.insufficient_evidence, "warnings": answer.warnings + notes}


def usage_of(answer: Answer, content: str) -> dict:
    """prompt_tokens: what the answering model read (as it counted, or tiktoken); completion_tokens: the content sent, by tiktoken."""
    completion = token_counter(services().settings.tokenizer_encoding)(content)
    prompt = answer.usage.prompt_tokens
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def finish_reason(answer: Answer) -> str:
    return "length" if answer.truncated else "stop"


@blueprint.get("/v1/models")
def models() -> Any:
    return jsonify(object="list", data=[model_entry(model_id) for model_id in model_ids()])


@blueprint.get("/v1/models/<path:model_id>")
def model(model_id: str) -> Any:
    known = model_ids()
    if model_id not in known:
        raise NotFound(f"the model {model_id!r} does not exist here: the models are {', '.join(map(repr, known))}",
                       code="model_not_found", param="model")
    return jsonify(model_entry(model_id))


@blueprint.post("/v1/chat/completions")
def chat_completions() -> Any:
    body = json_body()
    settings = services().settings
    chat = chat_request(body, settings, model_ids())
    only = parse_metadata(body.get("metadata"), settings)
    notes = notes_for(chat)
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    model_name = f"{MODEL_ID}{MODEL_SEPARATOR}{chat.corpus}" if chat.corpus else MODEL_ID  # the reply names the model asked
    scope = services().corpora.scope([chat.corpus] if chat.corpus else None, only)
    answerer = services().answerer
    if not chat.stream:
        answer = answerer.ask(chat.question, None, chat.history, max_tokens=chat.max_tokens, instructions=chat.instructions,
                              scope=scope)
        observe(answer)
        content = content_of(answer, chat)
        return jsonify(
            id=completion_id, object="chat.completion", created=created, model=model_name,
            choices=[{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason(answer),
                      "logprobs": None}],
            usage=usage_of(answer, content), **_extras(answer, notes),
        )

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model_name,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def write(event: StreamEvent) -> str:
        if isinstance(event, Delta) and not chat.json_object:  # a JSON object is sent whole, at the end
            return chunk({"content": event.text})
        if isinstance(event, Final):
            answer = event.answer
            tail = content_of(answer, chat) if chat.json_object else sources_block(answer)
            last = chunk({"content": tail}, finish_reason(answer), **_extras(answer, notes))
            if chat.include_usage:  # OpenAI's usage chunk: no choices, after the last one
                usage = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model_name,
                         "choices": [], "usage": usage_of(answer, content_of(answer, chat))}
                last += f"data: {json.dumps(usage)}\n\n"
            return last
        return ""  # retrieval is done: the role chunk (prefix) goes out now, before the model's first word

    def fail(exc: QAError) -> str:
        return f"data: {json.dumps(openai_error(exc.status, exc.code, exc.message, exc.param))}\n\n"

    return stream_holding_store(event_stream(
        answerer.stream(chat.question, None, chat.history, max_tokens=chat.max_tokens, instructions=chat.instructions,
                        scope=scope),
        write=write, fail=fail, on_final=observe,
        prefix=chunk({"role": "assistant", "content": ""}), done="data: [DONE]\n\n",
    ))
