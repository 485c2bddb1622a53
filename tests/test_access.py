"""API key, rate limits, CORS, security headers, request ids, readiness, and where keys never go."""

import logging
import socket

import pytest
from limits import parse

from qa_service.config import Settings
from qa_service.errors import ConfigError
from qa_service.answering.models import FakeModel
from qa_service.web.app import SECURITY_HEADERS, create_app


def app_with(settings, index=None, **changes):
    return create_app(settings.replace(**changes), index=index)


def test_api_key_guards_the_api_but_not_the_page(seed_settings, seed_index):
    client = app_with(seed_settings, seed_index, api_key="s3cret-key").test_client()
    denied = client.post("/api/search", json={"question": "RouterArena"})
    assert denied.status_code == 401 and denied.get_json()["error"]["code"] == "unauthorized"
    assert client.post("/api/search", json={"question": "RouterArena"}, headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = client.post("/api/search", json={"question": "RouterArena"}, headers={"Authorization": "Bearer s3cret-key"})
    assert ok.status_code == 200
    assert client.get("/").status_code == 200 and client.get("/healthz").status_code == 200
    assert client.get("/api/info").status_code == 401  # issue 25 (7): it names the model and the index; the page asks on a 401
    info = client.get("/api/info", headers={"Authorization": "Bearer s3cret-key"}).get_json()
    assert info["auth_required"] is True and "s3cret-key" not in str(info)


def test_rate_limit_answers_429_json_with_retry_after(seed_settings, seed_index):
    client = app_with(seed_settings, seed_index, rate_limit="3 per minute").test_client()
    responses = [client.post("/api/search", json={"question": "RouterArena"}) for _ in range(4)]
    assert [r.status_code for r in responses] == [200, 200, 200, 429]
    assert not any("Retry-After" in r.headers for r in responses[:3])  # nothing to retry after a 200
    limited = client.post("/api/search", json={"question": "RouterArena"})
    assert limited.get_json()["error"]["code"] == "too_many_requests"
    assert int(limited.headers["Retry-After"]) > 0
    assert client.get("/healthz").status_code == 200  # probes are not limited


PAPER = "/api/papers/000_e3b5a0511f204a83:11"
ANSWER_ROUTES = [
    ("/api/ask", {"question": "What is RouterArena?"}),
    ("/api/ask/stream", {"question": "What is RouterArena?"}),
    ("/v1/chat/completions", {"model": "qa-service", "messages": [{"role": "user", "content": "What is RouterArena?"}]}),
]


def test_one_budget_per_client_across_all_routes(seed_settings, seed_index):
    """A client that spent its budget on one route finds it spent on every other: not rate_limit per route."""
    client = app_with(seed_settings, seed_index, rate_limit="4 per minute").test_client()
    assert [client.get(PAPER).status_code for _ in range(4)] == [200] * 4
    assert client.get(PAPER).status_code == 429
    elsewhere = [client.get("/api/papers"), client.get("/api/info"), client.get("/v1/models"),
                 client.post("/api/search", json={"question": "RouterArena"})]
    elsewhere += [client.post(path, json=body) for path, body in ANSWER_ROUTES]
    assert [r.status_code for r in elsewhere] == [429] * len(elsewhere)
    assert all(r.get_json()["error"]["code"] == ("rate_limit_exceeded" if r.request.path.startswith("/v1/") else "too_many_requests")
               and int(r.headers["Retry-After"]) > 0 for r in elsewhere)  # /v1: OpenAI's code, which its clients back off from
    assert client.get(PAPER, environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200  # another client, its own budget
    assert client.get("/healthz").status_code == 200 and client.get("/").status_code == 200


def test_answer_routes_share_a_separate_smaller_budget(seed_settings, seed_index):
    """Answers cost model calls: the three answer routes share a smaller budget of their own."""
    defaults = Settings()
    assert per_second(defaults.answer_rate_limit) < per_second(defaults.rate_limit)
    client = app_with(seed_settings, seed_index, rate_limit="20 per minute", answer_rate_limit="2 per minute").test_client()
    assert [client.post(path, json=body).status_code for path, body in ANSWER_ROUTES[:2]] == [200, 200]
    for path, body in ANSWER_ROUTES:
        limited = client.post(path, json=body)
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) > 0
        assert "answer" in limited.get_json()["error"]["message"] and "QA_ANSWER_RATE_LIMIT" in limited.get_json()["error"]["message"]
    searched = client.post("/api/search", json={"question": "RouterArena"})  # the general budget still has room
    assert searched.status_code == 200 and "Retry-After" not in searched.headers
    assert client.post("/api/ask", json={"question": "What is RouterArena?"}, environ_base={"REMOTE_ADDR": "192.0.2.7"}).status_code == 200


def per_second(limit: str) -> float:
    item = parse(limit)
    return item.amount / item.get_expiry()


def test_no_cors_unless_allowed(seed_settings, seed_index):
    closed = app_with(seed_settings, seed_index).test_client().get("/api/papers", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in closed.headers
    client = app_with(seed_settings, seed_index, cors_origins="https://app.example").test_client()
    allowed = client.get("/api/papers", headers={"Origin": "https://app.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example"
    assert "Access-Control-Allow-Origin" not in client.get("/api/papers", headers={"Origin": "https://evil.example"}).headers


@pytest.mark.parametrize("path", ["/", "/healthz", "/api/papers", "/api/nothing", "/static/app.js"])
def test_security_headers_and_request_id_on_every_response(seed_settings, seed_index, path):
    client = app_with(seed_settings, seed_index).test_client()
    with client.get(path, headers={"X-Request-ID": "abc-123"}) as response:
        for key, value in SECURITY_HEADERS.items():
            assert response.headers[key] == value
        assert response.headers["X-Request-ID"] == "abc-123"
    with client.get(path, headers={"X-Request-ID": "bad id; <script>"}) as response:
        assert len(response.headers["X-Request-ID"]) == 16


def test_readiness(seed_settings, seed_index, settings, tmp_path):
    assert app_with(seed_settings, seed_index).test_client().get("/readyz").get_json() == {"status": "ready", "papers": 57, "corpora": {"iclr2026": 57}}
    empty = create_app(settings).test_client()
    response = empty.get("/readyz")
    assert response.status_code == 503 and "qa-service ingest" in response.get_json()["error"]["message"]

    blocked = tmp_path / "not-a-dir"
    blocked.write_text("a file where the data folder should be")
    broken = create_app(settings.replace(data_dir=str(blocked))).test_client()
    assert broken.get("/healthz").get_json() == {"status": "ok", "papers": 0, "corpora": {}}
    ready = broken.get("/readyz")
    assert ready.status_code == 503 and "QA_DATA_DIR" in ready.get_json()["error"]["message"]
    ask = broken.post("/api/ask", json={"question": "What is RouterArena?"})
    assert ask.status_code == 503 and "qa-service ingest" in ask.get_json()["error"]["message"]


def test_unreachable_chroma_server_is_503_and_healthz_stays_up(settings):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens here once the socket closes
    client = create_app(settings.replace(chroma_url=f"http://127.0.0.1:{port}")).test_client()
    assert client.get("/healthz").status_code == 200
    assert client.get("/readyz").status_code == 503
    response = client.post("/api/search", json={"question": "RouterArena"})
    assert response.status_code == 503 and "QA_CHROMA_URL" in response.get_json()["error"]["message"]


def test_keys_never_reach_logs_health_or_page(seed_settings, seed_index, caplog):
    from qa_service.errors import ModelError

    settings = seed_settings.replace(openai_api_key="sk-never-show-me", api_key="qa-key-never-show")
    fake = FakeModel([ModelError("the model server at http://x rejected the API key (401); check OPENAI_API_KEY")])
    client = create_app(settings, index=seed_index, model=fake).test_client()
    auth = {"Authorization": "Bearer qa-key-never-show"}
    with caplog.at_level(logging.DEBUG):
        bodies = [
            client.get("/healthz").get_data(as_text=True),
            client.get("/api/info").get_data(as_text=True),
            client.get("/").get_data(as_text=True),
            client.post("/api/ask", json={"question": "What is RouterArena?"}, headers=auth).get_data(as_text=True),
        ]
    everything = " ".join(bodies) + " ".join(r.getMessage() + str(r.__dict__) for r in caplog.records)
    assert "sk-never-show-me" not in everything and "qa-key-never-show" not in everything
    assert any(getattr(r, "request_id", None) for r in caplog.records if r.name == "qa_service.access")


def test_model_server_credentials_never_reach_callers(seed_settings, seed_index):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://user:hunter2@127.0.0.1:{port}/v1?api-key=hunter2"
    client = app_with(seed_settings, seed_index, openai_base_url=url, openai_api_key="", model="m", model_retries=0).test_client()
    question = {"question": "What is RouterArena?"}
    ask = client.post("/api/ask", json=question)
    assert ask.status_code == 502
    assert ask.get_json()["error"]["message"] == f"cannot reach the model server at http://***@127.0.0.1:{port}/v1?api-key=***"
    bodies = [ask.get_data(as_text=True), client.post("/api/ask/stream", json=question).get_data(as_text=True),
              client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": question["question"]}]}).get_data(as_text=True)]
    assert all("hunter2" not in body and "***@127.0.0.1" in body for body in bodies)


FORGED = "2026-01-01 00:00:00,000 INFO qa_service.access [admin] GET /admin/delete-all 200 0.1ms"


@pytest.mark.parametrize("breaker", ["%0a", "%0d", "%0d%0a", "%e2%80%a8", "%c2%85", "%1b[2K%0d"])
def test_access_log_escapes_control_characters(seed_settings, seed_index, caplog, breaker):
    client = app_with(seed_settings, seed_index).test_client()
    with caplog.at_level(logging.INFO, logger="qa_service.access"):
        response = client.get("/api/papers/nope" + breaker + FORGED.replace(" ", "%20"), headers={"X-Request-ID": "forge-test"})
    assert response.status_code == 404
    [record] = [r for r in caplog.records if r.name == "qa_service.access"]
    line = record.getMessage()
    assert len(line.splitlines()) == 1 and line.isprintable() and FORGED in line
    assert str(record.path).isprintable()


def test_a_401_says_how_to_authenticate_and_tells_a_wrong_key_from_a_missing_one(seed_settings, seed_index):
    """RFC 6750: a Bearer challenge on every 401, with error="invalid_token" for a key that is wrong."""
    client = app_with(seed_settings, seed_index, api_key="s3cret-key", rate_limit="").test_client()
    body = {"question": "RouterArena"}
    missing = client.post("/api/search", json=body)
    malformed = client.post("/api/search", json=body, headers={"Authorization": "Basic czNjcmV0LWtleQ=="})
    wrong = client.post("/api/search", json=body, headers={"Authorization": "Bearer wrong"})
    assert [r.status_code for r in (missing, malformed, wrong)] == [401, 401, 401]
    assert missing.headers["WWW-Authenticate"] == 'Bearer realm="qa-service"'
    assert malformed.headers["WWW-Authenticate"] == 'Bearer realm="qa-service", error="invalid_request"'
    assert wrong.headers["WWW-Authenticate"] == 'Bearer realm="qa-service", error="invalid_token"'
    messages = [r.get_json()["error"]["message"] for r in (missing, malformed, wrong)]
    assert len(set(messages)) == 3 and "not valid" in messages[2] and "s3cret" not in str(messages)
    assert wrong.get_json()["error"]["code"] == "invalid_api_key"
    v1 = client.get("/v1/models", headers={"Authorization": "Bearer wrong"})
    assert v1.status_code == 401 and v1.headers["WWW-Authenticate"].startswith("Bearer")
    assert v1.get_json()["error"] == {"message": messages[2], "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}
    assert client.get("/v1/models", headers={"Authorization": "bearer s3cret-key"}).status_code == 200  # the scheme is case-blind


def test_a_405_is_json_and_lists_the_allowed_methods(seed_settings, seed_index):
    """RFC 9110: a 405 carries Allow; under /v1 the error is in OpenAI's shape."""
    client = app_with(seed_settings, seed_index, rate_limit="").test_client()
    for method, path, allowed in (("post", "/healthz", "GET"), ("delete", "/api/ask", "POST"), ("put", "/v1/models", "GET")):
        response = getattr(client, method)(path)
        assert response.status_code == 405 and response.is_json, path
        assert allowed in response.headers["Allow"], path
        error = response.get_json()["error"]
        assert error["code"] == "method_not_allowed" and error["message"]
        assert ("type" in error) == path.startswith("/v1/")


@pytest.mark.parametrize("name", ["rate_limit", "answer_rate_limit"])
@pytest.mark.parametrize("value", ["garbage", "-5 per second", "5 per fortnight", "0 per minute"])
def test_an_unparseable_rate_limit_is_refused_at_start(seed_settings, seed_index, name, value):
    """Issue 25 (4): before, it was accepted, and every route (/healthz, the page, the API) answered 500."""
    with pytest.raises(ConfigError, match=rf"{name} \(QA_{name.upper()}\) .* is not a rate limit: write N per second"):
        app_with(seed_settings, seed_index, **{name: value})
    assert app_with(seed_settings, seed_index, **{name: "5 per second; 300 per minute"}).test_client().get("/healthz").status_code == 200
