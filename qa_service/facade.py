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

from flask import Blueprint, jsonify

from .errors import BadRequest, QAError
from .inputs import history_turns, question_text
from .records import Answer, Delta, StreamEvent, Turn
from .sse import event_stream
from .webctx import json_body, observe, read_store, services, stream_holding_store

MODEL_ID = "qa-service"

blueprint = Blueprint("facade", __name__)


def _text(content: Any) -> str:
    """OpenAI content is a string or a list of parts; we read the text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise BadRequest("message 'content' must be a string or a list of text parts")


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
            turns.append({"role": message["role"], "content": _text(message.get("content", ""))})
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
        return chunk({"content": sources_block(event.answer)}, "stop", **_extras(event.answer))

    def fail(exc: QAError) -> str:
        return f"data: {json.dumps({'error': {'message': exc.message, 'code': exc.code, 'type': 'server_error'}})}\n\n"

    return stream_holding_store(event_stream(
        answerer.stream(question, None, history), write=write, fail=fail, on_final=observe,
        prefix=chunk({"role": "assistant", "content": ""}), done="data: [DONE]\n\n",
    ))

