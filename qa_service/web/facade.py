"""An OpenAI-compatible facade, so existing chat clients (the openai SDK, `llm`, LangChain) use the service as a model.

The last user message is the question, earlier user/assistant turns are the history, system and
developer messages are the caller's own instructions. Every option is honoured or refused with a
400 (`chat_inputs.chat_request`). The reply's content is the answer with [n] markers and its references
(references.py: per source its label, venue, year, URL and quoted sentences), since text clients keep only
the content; a `citations` field carries the same data. A JSON schema (response_format, or one tool) gets
exactly that shape (structured.py); a chat client's own task (a title) is not asked of the papers (tasks.py).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from flask import Blueprint, Response, jsonify

from ..errors import NotFound, QAError
from ..store.filters import parse_metadata
from ..chat_inputs import MODEL_ID, MODEL_SEPARATOR, chat_request
from ..records import Answer, ChatRequest, Delta, Final, Paper, StreamEvent
from ..store.corpora import Scope
from . import structured
from .references import references_block
from . import tasks
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
    """An error as OpenAI sends it (message, type, param, code), which OpenAI clients read; a 429 as OpenAI's
    rate limit (type requests, code rate_limit_exceeded), which clients back off from."""
    if status == 429:
        return {"error": {"message": message, "type": "requests", "param": None, "code": "rate_limit_exceeded"}}
    kind = "invalid_request_error" if status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def answer_object(answer: Answer) -> dict:
    """The content under response_format json_object: the answer and what backs it."""
    full = answer.to_dict()
    keys = ("answer", "citations", "sources", "grounded", "insufficient_evidence", "refusal_reason", "refusal_explanation", "warnings")
    return {key: full[key] for key in keys}


def papers_of(answer: Answer, scope: Scope) -> dict[str, Paper]:
    """The records (metadata only) of the papers the answer lists: title, year, venue and URL for its references."""
    wanted = {s.paper_id: s.corpus for s in answer.sources} | {c.paper_id: c.corpus for c in answer.citations}
    found: dict[str, Paper] = {}
    for part in scope.parts:
        ids = [pid for pid, corpus in wanted.items() if corpus in ("", part.name) and pid not in found]
        if ids:
            found.update(part.index.get_papers(ids, with_text=False))
    return found


def schema_of(chat: ChatRequest) -> dict | None:
    """The JSON schema the reply must follow: the response_format's, or the one tool's parameters."""
    return chat.tool["parameters"] if chat.tool else chat.schema


def content_of(answer: Answer, chat: ChatRequest, scope: Scope) -> str:
    """The message content (or the tool call's arguments): JSON when asked for, else the text and its references."""
    schema = schema_of(chat)
    if schema is not None:
        return json.dumps(structured.fill(schema, structured.answer_values(answer, papers_of(answer, scope)), schema),
                          ensure_ascii=False)
    if chat.json_object:
        return json.dumps(answer_object(answer), ensure_ascii=False)
    return answer.answer + references_of(answer, chat, scope)


def references_of(answer: Answer, chat: ChatRequest, scope: Scope) -> str:
    papers = papers_of(answer, scope) if chat.references == "full" else {}
    return references_block(answer, chat.references, papers)


def message_of(chat: ChatRequest, content: str) -> dict:
    """The assistant message: the content, or (a tool was given) one call of it with the answer's fields."""
    if not chat.tool:
        return {"role": "assistant", "content": content}
    call = {"id": f"call_{uuid.uuid4().hex[:24]}", "type": "function", "function": {"name": chat.tool["name"], "arguments": content}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


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


def finish_reason(answer: Answer, chat: ChatRequest) -> str:
    if chat.tool:
        return "tool_calls"
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
    task = tasks.task_text(body)
    chat = chat_request(tasks.checked_body(body) if task else body, settings, model_ids())
    only = parse_metadata(body.get("metadata"), settings)
    if chat.tool:
        structured.check(chat.tool["parameters"], "tools[0].function.parameters")
    elif chat.schema is not None:
        structured.check(chat.schema, "response_format.json_schema.schema")
    reply = Reply(chat, notes_for(chat))
    if task is not None:  # a chat client's own task (a title for the chat): not a question about the papers
        return reply.plain(tasks.task_reply(task))
    scope = services().corpora.scope([chat.corpus] if chat.corpus else None, only)
    answerer = services().answerer
    if not chat.stream:
        answer = answerer.ask(chat.question, None, chat.history, max_tokens=chat.max_tokens, instructions=chat.instructions,
                              scope=scope)
        observe(answer)
        return reply.complete(answer, content_of(answer, chat, scope))
    return stream_holding_store(event_stream(
        answerer.stream(chat.question, None, chat.history, max_tokens=chat.max_tokens, instructions=chat.instructions,
                        scope=scope),
        write=lambda event: reply.write(event, scope), fail=reply.fail, on_final=observe,
        prefix=reply.chunk({"role": "assistant", "content": ""}), done="data: [DONE]\n\n",
    ))


class Reply:
    """One completion's id and model name, and how its answer goes out: whole, or as chunks."""

    def __init__(self, chat: ChatRequest, notes: list[str]):
        self.chat, self.notes = chat, notes
        self.id, self.created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        self.model = f"{MODEL_ID}{MODEL_SEPARATOR}{chat.corpus}" if chat.corpus else MODEL_ID  # the reply names the model asked

    def head(self, kind: str) -> dict:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def complete(self, answer: Answer, content: str) -> Any:
        choice = {"index": 0, "message": message_of(self.chat, content), "finish_reason": finish_reason(answer, self.chat),
                  "logprobs": None}
        return jsonify(**self.head("chat.completion"), choices=[choice], usage=usage_of(answer, content), **_extras(answer, self.notes))

    def plain(self, text: str) -> Any:
        """A reply written by the service itself, from no source (a chat title)."""
        answer = Answer(text, grounded=False, model="qa-service")
        if not self.chat.stream:
            return self.complete(answer, text)
        chunks = self.chunk({"role": "assistant", "content": text}) + self.chunk({}, "stop", **_extras(answer, self.notes))
        if self.chat.include_usage:
            chunks += self.usage_chunk(answer, text)
        return Response(chunks + "data: [DONE]\n\n", mimetype="text/event-stream")

    def chunk(self, delta: dict, finish: str | None = None, **extra: Any) -> str:
        payload = {**self.head("chat.completion.chunk"), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def usage_chunk(self, answer: Answer, content: str) -> str:
        """OpenAI's usage chunk: no choices, after the last one."""
        return f"data: {json.dumps({**self.head('chat.completion.chunk'), 'choices': [], 'usage': usage_of(answer, content)})}\n\n"

    def write(self, event: StreamEvent, scope: Scope) -> str:
        whole = self.chat.json_object or schema_of(self.chat) is not None  # JSON is sent whole, at the end
        if isinstance(event, Delta) and not whole:
            return self.chunk({"content": event.text})
        if not isinstance(event, Final):
            return ""  # retrieval is done: the role chunk (prefix) goes out now, before the model's first word
        answer = event.answer
        content = content_of(answer, self.chat, scope)
        tail = content if whole else content[len(answer.answer):]
        delta: dict[str, Any] = {"content": tail}
        if self.chat.tool:
            call = message_of(self.chat, content)["tool_calls"][0]
            delta = {"tool_calls": [{"index": 0, **call}]}
        last = self.chunk(delta, finish_reason(answer, self.chat), **_extras(answer, self.notes))
        return last + (self.usage_chunk(answer, content) if self.chat.include_usage else "")

    def fail(self, exc: QAError) -> str:
        return f"data: {json.dumps(openai_error(exc.status, exc.code, exc.message, exc.param))}\n\n"
