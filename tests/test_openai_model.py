"""The OpenAI-compatible client through the real openai SDK, with no network."""

import json
import socket

import httpx2
import pytest

from qa_service.errors import ModelError, ModelTimeout
from qa_service.answering.models import ModelRequest, OpenAIChatModel, Usage
from qa_service.answering.providers import OpenAIProvider
from qa_service.answering.prompting import Source
from tests.conftest import make_settings
from tests.fake_openai import FakeOpenAI, completion

SOURCES = [Source(1, "p:1", "RouterArena", "We introduce RouterArena.")]
MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": '<source n="1" id="p:1">We introduce RouterArena.</source>\nQuestion: What is RouterArena?'}]


def request() -> ModelRequest:
    return ModelRequest(MESSAGES, "What is RouterArena?", SOURCES, max_tokens=64)


def mock_model(tmp_path, handler, **overrides) -> OpenAIChatModel:
    settings = make_settings(tmp_path, **{"openai_api_key": "sk-secret-123", "model": "gpt-test", "model_retries": 0, **overrides})
    return OpenAIChatModel(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_request_body_carries_model_and_sources(tmp_path):
    seen = []

    def handler(req):
        seen.append((req.url, dict(req.headers), json.loads(req.content)))
        return httpx2.Response(200, json=completion("RouterArena compares LLM routers [1].", "gpt-test"))

    model = mock_model(tmp_path, handler, openai_base_url="http://llm.local/v1")
    reply = model.complete(request())
    assert reply.text == "RouterArena compares LLM routers [1]."
    assert reply.usage == Usage(123, 9)
    url, headers, body = seen[0]
    assert str(url) == "http://llm.local/v1/chat/completions"
    assert headers["authorization"] == "Bearer sk-secret-123"
    assert body["model"] == "gpt-test" and body["messages"] == MESSAGES and body["max_tokens"] == 64


def test_streaming_through_mock_transport(tmp_path):
    def handler(req):
        chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
                   "choices": [{"index": 0, "delta": {"content": w}, "finish_reason": f}]} for w, f in (("Router", None), ("Arena [1].", "stop"))]
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return httpx2.Response(200, text=text, headers={"content-type": "text/event-stream"})

    pieces = list(mock_model(tmp_path, handler).stream(request()))
    assert pieces[:-1] == ["Router", "Arena [1]."] and isinstance(pieces[-1], Usage)


@pytest.mark.parametrize(
    "status,kind,needle",
    [
        (401, ModelError, "rejected the API key"),
        (429, ModelError, "rate limiting"),
        (500, ModelError, "HTTP 500"),
        (404, ModelError, "does not know model"),
    ],
)
def test_http_errors_become_plain_messages_without_the_key(tmp_path, status, kind, needle):
    model = mock_model(tmp_path, lambda req: httpx2.Response(status, json={"error": {"message": "sk-secret-123 is bad"}}))
    with pytest.raises(kind, match=needle) as info:
        model.complete(request())
    assert "sk-secret-123" not in info.value.message and info.value.status == 502


def test_timeout_is_504_and_connection_error_is_502(tmp_path):
    def timeout(req):
        raise httpx2.ReadTimeout("slow", request=req)

    with pytest.raises(ModelTimeout) as info:
        mock_model(tmp_path, timeout).complete(request())
    assert info.value.status == 504

    def refused(req):
        raise httpx2.ConnectError("refused", request=req)

    with pytest.raises(ModelError, match="cannot reach"):
        mock_model(tmp_path, refused).complete(request())


@pytest.mark.parametrize("payload", [{"choices": []}, {"unexpected": True}])
def test_malformed_replies_are_502(tmp_path, payload):
    with pytest.raises(ModelError) as info:
        mock_model(tmp_path, lambda req: httpx2.Response(200, json=payload)).complete(request())
    assert info.value.status == 502


@pytest.fixture
def fake_server():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def server_model(tmp_path, fake, **overrides) -> OpenAIChatModel:
    settings = make_settings(tmp_path, openai_api_key="sk-secret-123", openai_base_url=fake.base_url, model="fake-model", **overrides)
    return OpenAIChatModel(settings)


def test_fake_server_round_trip_and_stream(tmp_path, fake_server):
    fake_server.enqueue("reply", "RouterArena compares routers [1].")
    fake_server.enqueue("stream", "RouterArena compares routers [1].")
    model = server_model(tmp_path, fake_server)
    assert model.complete(request()).text == "RouterArena compares routers [1]."
    pieces = list(model.stream(request()))
    assert "".join(p for p in pieces if isinstance(p, str)) == "RouterArena compares routers [1]."
    assert pieces[-1] == Usage(11, 4)
    assert fake_server.requests[0]["messages"] == MESSAGES and fake_server.requests[1]["stream"] is True


def test_fake_server_429_is_retried_honouring_retry_after_then_502(tmp_path, fake_server):
    for _ in range(3):
        fake_server.enqueue("429")
    with pytest.raises(ModelError, match="rate limiting"):
        server_model(tmp_path, fake_server, model_retries=2).complete(request())
    assert len(fake_server.requests) == 3  # the first try and two retries


def test_fake_server_500_then_success_is_retried(tmp_path, fake_server):
    fake_server.enqueue("500")
    fake_server.enqueue("reply", "Recovered [1].")
    assert server_model(tmp_path, fake_server, model_retries=1).complete(request()).text == "Recovered [1]."


def test_fake_server_slow_reply_times_out(tmp_path, fake_server):
    fake_server.enqueue("slow", "2")
    with pytest.raises(ModelTimeout):
        server_model(tmp_path, fake_server, model_timeout=0.5, model_retries=0).complete(request())


def test_fake_server_401_and_malformed(tmp_path, fake_server):
    fake_server.enqueue("401")
    fake_server.enqueue("malformed")
    model = server_model(tmp_path, fake_server, model_retries=0)
    with pytest.raises(ModelError, match="rejected the API key"):
        model.complete(request())
    with pytest.raises(ModelError) as info:
        model.complete(request())
    assert "sk-secret" not in info.value.message


def test_broken_stream_raises_a_model_error(tmp_path, fake_server):
    fake_server.enqueue("broken-stream", "one two three four five six")
    with pytest.raises(ModelError):
        list(server_model(tmp_path, fake_server, model_retries=0).stream(request()))


def test_one_deadline_covers_every_retry(tmp_path, fake_server):
    """A hung server: attempts x timeout used to be 3 x 60 s. Now the whole call, backoff included,
    fits in model_deadline; with room for six attempts the deadline leaves time for two at most."""
    for _ in range(6):
        fake_server.enqueue("slow", "3")
    model = server_model(tmp_path, fake_server, model_timeout=0.6, model_deadline=1.0, model_retries=5)
    with pytest.raises(ModelTimeout):
        model.complete(request())
    assert 1 <= len(fake_server.requests) <= 2


def test_retries_still_recover_inside_the_deadline(tmp_path, fake_server):
    fake_server.enqueue("500")
    fake_server.enqueue("reply", "Recovered [1].")
    model = server_model(tmp_path, fake_server, model_deadline=10.0, model_retries=1)
    assert model.complete(request()).text == "Recovered [1]." and len(fake_server.requests) == 2


def test_a_stream_cut_mid_answer_is_an_error_not_an_answer(tmp_path, fake_server):
    """No finish_reason and no [DONE]: 'RouterArena is' must never be taken for the whole answer."""
    fake_server.enqueue("cut-stream", "RouterArena is the first open platform for routers [1].")
    pieces: list = []
    with pytest.raises(ModelError, match="closed the stream"):
        for piece in server_model(tmp_path, fake_server, model_retries=0).stream(request()):
            pieces.append(piece)
    assert pieces and not any(isinstance(p, Usage) for p in pieces)
    fake_server.enqueue("stream", "RouterArena compares routers [1].")
    assert isinstance(list(server_model(tmp_path, fake_server, model_retries=0).stream(request()))[-1], Usage)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens here once the socket closes


@pytest.mark.parametrize(
    "url,shown",
    [
        ("http://user:hunter2@127.0.0.1:{port}/v1", "http://***@127.0.0.1:{port}/v1"),
        ("http://127.0.0.1:{port}/v1?api-key=hunter2", "http://127.0.0.1:{port}/v1?api-key=***"),
    ],
)
def test_unreachable_server_error_hides_credentials_in_its_url(tmp_path, url, shown):
    port = closed_port()
    key = "" if "@" in url else "sk-secret-123"  # credentials in the URL are the key (with both, the start refuses)
    settings = make_settings(tmp_path, openai_api_key=key, openai_base_url=url.format(port=port), model="m", model_retries=0)
    with pytest.raises(ModelError) as info:
        OpenAIChatModel(settings).complete(request())
    assert info.value.message == f"cannot reach the model server at {shown.format(port=port)}"
    assert "hunter2" not in str(info.value)


def test_every_model_error_message_hides_credentials(tmp_path):
    url = "http://user:hunter2@llm.local/v1?api-key=hunter2"
    for status in (401, 403, 404, 429, 500):
        model = mock_model(tmp_path, lambda req, status=status: httpx2.Response(status, json={}), openai_base_url=url, openai_api_key="")
        with pytest.raises(ModelError) as info:
            model.complete(request())
        assert "hunter2" not in info.value.message and "http://***@llm.local/v1?api-key=***" in info.value.message
    model = mock_model(tmp_path, lambda req: httpx2.Response(200, json=completion(None, "m")), openai_base_url=url, openai_api_key="")
    with pytest.raises(ModelError, match="sent no answer text") as info:
        model.complete(request())
    assert "hunter2" not in info.value.message


def test_a_query_in_the_base_url_goes_with_every_request_and_keeps_the_path(tmp_path):
    """Azure-style `?api-version=`: before, the SDK sent http://llm.local/v1/?api-version=2024-06-01chat/completions."""
    seen = []

    def handler(req):
        seen.append(req.url)
        return httpx2.Response(200, json=completion("RouterArena compares LLM routers [1].", "gpt-test"))

    mock_model(tmp_path, handler, openai_base_url="http://llm.local/v1?api-version=2024-06-01").complete(request())
    assert seen[0].path == "/v1/chat/completions" and dict(seen[0].params) == {"api-version": "2024-06-01"}


def test_credentials_in_the_base_url_and_an_api_key_are_refused_at_start(tmp_path):
    """Before, the URL's user:password went as Basic auth and silently replaced the key's Bearer header."""
    from qa_service.errors import ConfigError

    with pytest.raises(ConfigError, match=r"holds credentials and an API key is set too") as caught:
        mock_model(tmp_path, lambda req: httpx2.Response(500), openai_base_url="http://user:hunter2@llm.local/v1")
    assert "hunter2" not in caught.value.message
    seen = []

    def handler(req):  # without a key, the URL's credentials are how the gateway is reached: sent as they were
        seen.append(req.headers.get("authorization"))
        return httpx2.Response(200, json=completion("RouterArena compares LLM routers [1].", "gpt-test"))

    settings = make_settings(tmp_path, openai_api_key="", model="gpt-test", model_retries=0, openai_base_url="http://user:hunter2@llm.local/v1")
    OpenAIChatModel(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(handler))).complete(request())
    assert seen[0].startswith("Basic ")


def test_serve_refuses_credentials_in_the_base_url_beside_a_key_before_it_starts(tmp_path):
    from click.testing import CliRunner

    from qa_service.cli import main

    env = {"QA_DATA_DIR": str(tmp_path / "data"), "OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://user:hunter2@llm.local/v1"}
    done = CliRunner().invoke(main, ["serve", "--port", "1"], env=env)
    assert done.exit_code == 1 and "holds credentials and an API key is set too" in done.output
    assert "hunter2" not in done.output and "Traceback" not in done.output


def test_a_second_backend_reuses_the_providers_retries_retry_after_and_errors(tmp_path):
    """The connection is the provider's: another call than chat (the legacy completions endpoint) gets the
    same URL and key, the retry after a 429 that names Retry-After, and the same error conversion."""
    seen = []

    def handler(req):
        seen.append((str(req.url), req.headers.get("authorization")))
        if len(seen) == 1:
            return httpx2.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}})
        if json.loads(req.content)["model"] == "gone":
            return httpx2.Response(404, json={"error": {"message": "no such model"}})
        return httpx2.Response(200, json={"id": "c", "object": "text_completion", "created": 0, "model": "m",
                                          "choices": [{"index": 0, "text": "RouterArena", "finish_reason": "stop", "logprobs": None}]})

    settings = make_settings(tmp_path, openai_api_key="sk-secret-123", openai_base_url="http://llm.local/v1", model_retries=1)
    provider = OpenAIProvider(settings, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    reply = provider.call("m", lambda client: client.completions.create(model="m", prompt="What is", max_tokens=2))
    assert reply.choices[0].text == "RouterArena"
    assert seen == [("http://llm.local/v1/completions", "Bearer sk-secret-123")] * 2  # refused once, retried
    with pytest.raises(ModelError, match="does not know model 'gone'"):
        provider.call("gone", lambda client: client.completions.create(model="gone", prompt="What is", max_tokens=2))
    chat = OpenAIChatModel(settings, provider=provider)
    assert chat.provider is provider and chat.shown_url == "http://llm.local/v1"
