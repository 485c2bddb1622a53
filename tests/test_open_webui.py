"""Open WebUI as an OpenAI-compatible connection: the requests it sends, as it sends them (Open WebUI itself
cannot run here). It lists /v1/models, streams with stream_options and its own system message, and asks the
same model for a chat title (and tags, follow-ups) with a task prompt that quotes the chat history: a title is
answered plainly, never from the abstracts; the other tasks are a 400 that says what to change."""

from __future__ import annotations

import json

import pytest
import requests

from tests.clientkit import app_over, openreview_settings, running

GRIP = "What success rate does GripNet reach?"
GRIP_QUOTE = "On 40 household objects it succeeds in 87% of grasps, 21 points above the best baseline."
# Open WebUI's default task prompts (open_webui/config.py), with {{MESSAGES:END:2}} filled as it fills it.
HISTORY = f"<chat_history>\nUSER: {GRIP}\nASSISTANT: GripNet succeeds in 87% of grasps [1].\n</chat_history>"
TITLE_TASK = ("### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Guidelines:\n"
              "- The title should clearly represent the main theme or subject of the conversation.\n"
              "- Write the title in the chat's primary language; default to English if multilingual.\n### Output:\n"
              'JSON format: { "title": "your concise title here" }\n### Examples:\n- { "title": "📉 Stock Market Trends" },\n'
              f"### Chat History:\n{HISTORY}")
TAGS_TASK = ("### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history, along with 1-3 more specific "
             'subtopic tags.\n### Output:\nJSON format: { "tags": ["tag1", "tag2", "tag3"] }\n### Chat History:\n' + HISTORY)
FOLLOW_UPS_TASK = ("### Task:\nSuggest 3-5 relevant follow-up questions or prompts that the user might naturally ask next.\n"
                   '### Output:\nJSON format: { "follow_ups": ["Question 1?", "Question 2?"] }\n### Chat History:\n' + HISTORY)
SYSTEM = "You are a helpful assistant. Use markdown."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(app_over(openreview_settings(tmp_path_factory.mktemp("webui-data")))) as url:
        yield url


def post(server: str, body: dict) -> requests.Response:
    return requests.post(server + "/v1/chat/completions", json=body, headers={"Authorization": "Bearer unused"}, timeout=60)


def test_the_connection_check_lists_the_models(server):
    listed = requests.get(server + "/v1/models", headers={"Authorization": "Bearer unused"}, timeout=30).json()
    assert listed["object"] == "list" and [m["id"] for m in listed["data"]] == ["qa-service", "qa-service:iclr2026"]


def test_a_chat_streams_with_usage_and_the_quotes_in_the_text(server):
    body = {"model": "qa-service", "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": GRIP}]}
    with requests.post(server + "/v1/chat/completions", json=body, stream=True, timeout=60) as response:
        assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/event-stream")
        events = [line[len("data: "):] for line in response.iter_lines(decode_unicode=True) if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert "87%" in text and GRIP_QUOTE in text and "https://openreview.net/forum?id=gripnet" in text
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert any("system message was not applied" in w for w in chunks[-2]["warnings"])


@pytest.mark.parametrize("stream", [False, True])
def test_a_title_request_is_answered_plainly_not_from_the_abstracts(server, stream):
    response = post(server, {"model": "qa-service", "stream": stream, "messages": [{"role": "user", "content": TITLE_TASK}]})
    assert response.status_code == 200
    if stream:
        chunks = [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")]
        content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        extra = chunks[-1]
    else:
        content, extra = response.json()["choices"][0]["message"]["content"], response.json()
    assert json.loads(content) == {"title": "What success rate does GripNet reach"}
    assert extra["citations"] == [] and "Sources:" not in content


@pytest.mark.parametrize("task, key", [(TAGS_TASK, "tags"), (FOLLOW_UPS_TASK, "follow_ups")])
def test_other_client_tasks_are_a_clear_400(server, task, key):
    response = post(server, {"model": "qa-service", "stream": False, "messages": [{"role": "user", "content": task}]})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unsupported_task" and f"'{key}'" in error["message"] and "Task Model" in error["message"]


def test_a_task_with_a_bad_option_is_still_refused_for_the_option(server):
    response = post(server, {"model": "gpt-4o", "messages": [{"role": "user", "content": TITLE_TASK}]})
    assert response.status_code == 404 and response.json()["error"]["code"] == "model_not_found"
