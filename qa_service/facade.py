"""An OpenAI-compatible facade, so existing chat front ends can use the service as a model.

The last user message is the question, earlier user/assistant turns are the history; the
reply's content is the answer with [n] markers and a numbered source list, and a structured
`citations` field carries the same data.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any, Iterator

from flask import Flask, Response, jsonify, stream_with_context

from .errors import BadRequest, PayloadTooLarge, QAError

MODEL_ID = "qa-service"


def _text(content: Any) -> str:
    """OpenAI content is a string or a list of parts; we read the text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise BadRequest("message 'content' must be a string or a list of text parts")


def parse_messages(body: dict, max_chars: int, max_turns: int) -> tuple[str, list[dict]]:
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
    question = turns[-1]["content"].strip()
    if len(question) > max_chars:
        raise PayloadTooLarge(f"the question is longer than {max_chars} characters")
    return question, turns[:-1][-max_turns:]


def sources_block(result: dict) -> str:
    cited = {}
    for citation in result["citations"]:
        cited.setdefault(citation["n"], citation)
    if not cited:
        return ""
    lines = [f"[{n}] {c['label']} ({c['paper_id']})" for n, c in sorted(cited.items())]
    return "\n\nSources:\n" + "\n".join(lines)


def _extras(result: dict) -> dict:
    return {"citations": result["citations"], "grounded": result["grounded"], "insufficient_evidence": result["insufficient_evidence"], "warnings": result["warnings"]}


def register(app: Flask, answerer: Any, body: Any, settings: Any, observe: Any) -> None:
    """`answerer()`, `body()` and `observe(result)` come from the web layer."""

    @app.get("/v1/models")
    def models() -> Any:
        return jsonify(object="list", data=[{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "qa-service"}])

    @app.post("/v1/chat/completions")
    def chat_completions() -> Any:
        data = body()
        question, history = parse_messages(data, settings().max_question_chars, settings().max_history_turns)
        completion_id, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())
        if not data.get("stream"):
            result = answerer().ask(question, None, history)
            observe(result)
            usage = result["usage"]
            return jsonify(
                id=completion_id, object="chat.completion", created=created, model=MODEL_ID,
                choices=[{"index": 0, "message": {"role": "assistant", "content": result["answer"] + sources_block(result)}, "finish_reason": "stop"}],
                usage={**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
                **_extras(result),
            )
        events = answerer().stream(question, None, history)
        first = next(events)

        def chunk(delta: dict, finish: str | None = None, **extra: Any) -> str:
            payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"

        def generate() -> Iterator[str]:
            yield chunk({"role": "assistant", "content": ""})
            try:
                for kind, payload in [first, *events]:
                    if kind == "delta":
                        yield chunk({"content": payload})
                    else:
                        observe(payload)
                        yield chunk({"content": sources_block(payload)}, "stop", **_extras(payload))
            except QAError as exc:
                yield f"data: {json.dumps({'error': {'message': exc.message, 'code': exc.code, 'type': 'server_error'}})}\n\n"
            yield "data: [DONE]\n\n"

        return Response(stream_with_context(generate()), mimetype="text/event-stream", headers={"Cache-Control": "no-cache"})
