"""A chat client's own tasks, sent to the same model as the chat (Open WebUI: a title for the chat, its tags,
follow-up questions): they are about the chat, not the papers, so they are never answered from the abstracts.

Such a request quotes the conversation in a `<chat_history>` element and asks for a JSON object. A title is
answered plainly (the chat's first question, as the service has no model that summarises); any other task is
a 400 that says what to change in the client.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import BadRequest

_HISTORY = re.compile(r"<chat_history>(.*?)</chat_history>", re.S)
_OUTPUT_KEY = re.compile(r'\{\s*"(\w+)"\s*:')  # the first key of the JSON object the task asks for
_USER_LINE = re.compile(r"^\s*USER:\s*(.+)$", re.M)
PLACEHOLDER = "chat title"  # what the request's options are checked with, in place of the task's long text


def task_text(body: dict) -> str | None:
    """The last message's text when it is a client task (it quotes the chat history), else None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return None
    content: Any = messages[-1].get("content")
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) and _HISTORY.search(content) else None


def checked_body(body: dict) -> dict:
    """The body with the task's text replaced by a short one, so its options are checked as any request's."""
    messages = body["messages"]
    return {**body, "messages": [*messages[:-1], {**messages[-1], "content": PLACEHOLDER}]}


def task_reply(text: str) -> str:
    """The plain reply to a title task, as the JSON it asks for; any other task is a 400 naming what to change."""
    history = _HISTORY.search(text)
    outside = text[: history.start()] + text[history.end():] if history else text
    key = _OUTPUT_KEY.search(outside)
    asked = key.group(1) if key else ""
    if asked != "title":
        what = f"'{asked}'" if asked else "something"
        raise BadRequest(
            f"this request is a chat client's own task (it asks for {what} about the chat history), not a question about the "
            "papers, and qa-service answers only those; in Open WebUI set Admin Settings > Interface > Task Model to another "
            "model, or turn that generation off", code="unsupported_task", param="messages")
    first = _USER_LINE.search(history.group(1)) if history else None
    title = first.group(1).strip().rstrip("?.!").strip() if first else ""
    return json.dumps({"title": title or "Questions about the papers"}, ensure_ascii=False)
