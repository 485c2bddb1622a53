"""An OpenAI-compatible facade, so existing chat front ends can use the service as a model.

The last user message is the question, earlier user/assistant turns are the history; the
reply's content is the answer with [n] markers and a numbered source list, and a structured
`citations` field carries the same data.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from flask import Blueprint, Response, jsonify

from .errors import BadRequest, QAError
from .inputs import history_turns, question_text
from .records import Answer, Delta, Final, StreamEvent, Turn
from .sse import event_stream
from .webctx import json_body, observe, read_store, services, stream_holding_store

MODEL_ID = "qa-service"

blueprint = Blueprint("facade", __name__)


def _text(content: Any, where: str) -> str:
    """OpenAI content is a string or a list of parts; we read the text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if isinstance(part, dict) and part.get("type") == "text":
                if not isinstance(part.get("text"), str):
                    raise BadRequest(f"'{where}.content[{j}].text' must be a string")
                texts.append(part["text"])
        return "".join(texts)
    raise BadRequest(f"'{where}.content' must be a string or a list of text parts")


def openai_error(exc: QAError) -> dict:
    """An error as OpenAI sends it (message, type, param, code), which OpenAI clients read."""
    kind = "invalid_request_error" if exc.status < 500 else "server_error"
    return {"error": {"message": exc.message, "type": kind, "param": None, "code": exc.code}}


@blueprint.errorhandler(QAError)
def facade_error(exc: QAError) -> tuple[Response, int]:
    return jsonify(openai_error(exc)), exc.status


def parse_messages(body: dict) -> tuple[str, list[Turn]]:
    """The last user message is the question; earlier turns go through the same history check as /api/ask."""
    settings = services().settings
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    turns = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise BadRequest(f"'messages[{i}]' needs a valid 'role'")
        if message["role"] in ("user", "assistant"):
            turns.append({"role": message["role"], "content": _text(message.get("content", ""), f"messages[{i}]")})
    if not turns or turns[-1]["role"] != "user" or not turns[-1]["content"].strip():
        raise BadRequest("the last message must be a non-empty user message: it is the question")
    question = question_text(turns[-1]["content"], settings, "the question")
    return question, history_turns(turns[:-1], settings)


def sources_block(answer: Answer) -> str:
    cited = {}
    for citation in answer.citations:
        cited.setdefault(citation.n, citation)
    if not cited:
        return ""
    lines = [f"[{n}] {c.label} ({c.paper_id})" for n, c in sorted(cited.items())]
    return "\n\nSources:\n" + "\n".join(lines)


def _extras(answer: Answer) -> dict:
    return {"citations": [c.to_dict() for c in answer.citations], "grounded": answer.grounded,
            "insufficient_evidence": answer.insufficient_evidence, "warnings": answer.warnings}


@blueprint.get("/v1/models")
def models() -> Any:
    return jsonify(object="list", data=[{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "qa-service"}])


@blueprint.post("/v1/chat/completions")
def chat_completions() -> Any:
    data = json_body()
    question, history = parse_messages(data)
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
    read_store()
    answerer = services().answerer
    if not data.get("stream"):
        answer = answerer.ask(question, None, history)
        observe(answer)
        usage = answer.usage
        return jsonify(
            id=completion_id, object="chat.completion", created=created, model=MODEL_ID,
            choices=[{"index": 0, "message": {"role": "assistant", "content": answer.answer + sources_block(answer)}, "finish_reason": "stop"}],
            usage={**usage.to_dict(), "total_tokens": usage.prompt_tokens + usage.completion_tokens},
            **_extras(answer),
        )

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
        payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
        return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

    def write(event: StreamEvent) -> str:
        if isinstance(event, Delta):
            return chunk({"content": event.text})
        if isinstance(event, Final):
            return chunk({"content": sources_block(event.answer)}, "stop", **_extras(event.answer))
        return ""  # retrieval is done: the role chunk (prefix) goes out now, before the model's first word

    def fail(exc: QAError) -> str:
        return f"data: {json.dumps(openai_error(exc))}\n\n"

    return stream_holding_store(event_stream(
        answerer.stream(question, None, history), write=write, fail=fail, on_final=observe,
        prefix=chunk({"role": "assistant", "content": ""}), done="data: [DONE]\n\n",
    ))

