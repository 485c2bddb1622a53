"""The OpenAI-compatible facade through the real openai SDK, and /metrics."""

import threading

import openai
import pytest
from werkzeug.serving import make_server

from qa_service.web import create_app


@pytest.fixture(scope="module")
def server(seed_settings, seed_index):
    app = create_app(seed_settings, index=seed_index)
    httpd = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)


def test_models_lists_the_service(client):
    assert [m.id for m in client.models.list().data] == ["qa-service"]


def test_chat_completion_answers_with_sources_and_citations(client):
    reply = client.chat.completions.create(model="qa-service", messages=[
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "How many scientific law discovery tasks are in NewtonBench?"},
    ])
    content = reply.choices[0].message.content
    assert "324" in content and "[1]" in content
    assert "\n\nSources:\n[1] NewtonBench (003_94e388001bdf9878:16)" in content
    extra = reply.model_extra
    assert extra["grounded"] is True and extra["citations"][0]["paper_id"] == "003_94e388001bdf9878:16"


def test_earlier_turns_are_history(client):
    reply = client.chat.completions.create(model="qa-service", messages=[
        {"role": "user", "content": "What is Tequila?"},
        {"role": "assistant", "content": "A ternary quantization method [1]."},
        {"role": "user", "content": "How much faster is its inference?"},
    ])
    assert "3.0×" in reply.choices[0].message.content


def test_streaming_through_the_sdk(client):
    stream = client.chat.completions.create(model="qa-service", stream=True, messages=[{"role": "user", "content": "What is RouterArena?"}])
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "RouterArena" in text and "Sources:\n[1] RouterArena" in text
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].model_extra["citations"]


def test_bad_messages_are_400_through_the_sdk(client):
    with pytest.raises(openai.BadRequestError, match="last message must be a non-empty user message"):
        client.chat.completions.create(model="qa-service", messages=[{"role": "assistant", "content": "hi"}])


def test_metrics_count_requests_answers_and_index(seed_settings, seed_index):
    app = create_app(seed_settings, index=seed_index)
    web = app.test_client()
    web.post("/api/ask", json={"question": "What is RouterArena?"})
    web.post("/api/ask", json={"question": "What is the best sourdough bread recipe?"})
    web.get("/api/nothing")
    body = web.get("/metrics").get_data(as_text=True)
    assert 'qa_http_requests_total{method="POST",route="/api/ask",status="200"} 2.0' in body
    assert 'qa_http_requests_total{method="GET",route="other",status="404"} 1.0' in body
    assert 'qa_answers_total{outcome="grounded"} 1.0' in body and 'qa_answers_total{outcome="refused"} 1.0' in body
    assert "qa_index_papers 57.0" in body and 'embedding_model="all-MiniLM-L6-v2-onnx-int8"' in body
    assert "qa_retrieve_seconds_count 2.0" in body and "qa_http_request_seconds_bucket" in body


class BreaksMidStream:
    """A model that writes a little, then fails in a way nobody planned for."""

    name = "breaks"

    def complete(self, request):
        raise AssertionError("not used")

    def stream(self, request):
        yield "RouterArena is "
        raise RuntimeError("boom")


@pytest.mark.parametrize("path,body", [
    ("/v1/chat/completions", {"stream": True, "messages": [{"role": "user", "content": "What is RouterArena?"}]}),
    ("/api/ask/stream", {"question": "What is RouterArena?"}),
])
def test_an_unexpected_error_mid_stream_still_ends_the_stream(seed_settings, seed_index, path, body):
    """Both routes share one SSE writer: what was sent, an error event, and (on /v1) [DONE]."""
    app = create_app(seed_settings, index=seed_index, model=BreaksMidStream())
    text = app.test_client().post(path, json=body).get_data(as_text=True)
    assert "RouterArena is" in text and "internal error" in text and "boom" not in text
    if path.startswith("/v1"):
        assert text.rstrip().endswith("data: [DONE]")
    else:
        assert "event: error" in text and "event: final" not in text
