"""/api/ask and /api/ask/stream through Flask's test client, with a fake model and with the real SDK."""

import json
import threading
import time

import pytest
import requests

from tests.serverkit import start_server
from qa_service.corpus.reading import load_corpus
from qa_service.errors import ModelError, ModelTimeout
from qa_service.store.index import Index
from qa_service.answering.models import FakeModel, OpenAIChatModel
from qa_service.answering.prompting import REFUSAL
from qa_service.corpus.tokens import count_tokens
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings
from tests.fake_openai import FakeOpenAI

# What the answer carried before the typed core, and what it adds: the refusal's reason, the typed issues, what was asked.
ANSWER_KEYS = {"answer", "citations", "sources", "grounded", "insufficient_evidence", "warnings", "question", "model", "usage", "timings_ms", "index",
               "refusal_reason", "refusal_explanation", "issues", "asked", "did_you_mean", "corpora", "filters", "sentences", "asks"}


@pytest.fixture(scope="module")
def client(seed_settings, seed_index):
    return create_app(seed_settings, index=seed_index).test_client()


def events(response) -> list[tuple[str, dict]]:
    out = []
    for block in response.get_data(as_text=True).strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_ask_offline_gives_a_grounded_cited_answer(client):
    response = client.post("/api/ask", json={"question": "What is RouterArena?"})
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == ANSWER_KEYS
    assert "RouterArena" in body["answer"] and "[1]" in body["answer"]
    assert body["grounded"] and not body["insufficient_evidence"] and body["model"] == "extractive"
    citation = body["citations"][0]
    assert {"n", "paper_id", "label", "quote", "start", "end", "score", "supported"} <= set(citation)
    assert citation["paper_id"] == "000_e3b5a0511f204a83:2" and citation["supported"]
    assert body["index"]["papers"] == 57 and body["index"]["embedding_model"] == "all-MiniLM-L6-v2-onnx-int8"
    assert set(body["timings_ms"]) == {"retrieve", "generate", "total"}


def test_absent_topic_is_refused_without_calling_the_model(seed_settings, seed_index):
    fake = FakeModel()
    client = create_app(seed_settings, index=seed_index, model=fake).test_client()
    body = client.post("/api/ask", json={"question": "What is the best sourdough bread recipe?"}).get_json()
    assert body["answer"] == REFUSAL and body["insufficient_evidence"] and body["grounded"]
    assert body["citations"] == [] and fake.requests == [] and body["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}


def test_the_offline_model_s_usage_is_counted_with_tiktoken(seed_settings, seed_index):
    """It reported 0 tokens read and written: the prompt it was given and its answer are counted as a model's would be."""
    client = create_app(seed_settings.replace(rate_limit=""), index=seed_index).test_client()
    body = client.post("/api/ask", json={"question": "What is RouterArena?"}).get_json()
    assert body["model"] == "extractive" and body["usage"]["prompt_tokens"] > 100
    assert body["usage"]["completion_tokens"] == count_tokens(body["answer"])


def test_the_model_sees_the_sources_and_its_answer_is_checked(seed_settings, seed_index):
    fake = FakeModel(["RouterArena is an open platform for comparing LLM routers [1]. It cures cancer [9]."])
    client = create_app(seed_settings, index=seed_index, model=fake).test_client()
    body = client.post("/api/ask", json={"question": "What is RouterArena?", "k": 2}).get_json()
    request = fake.requests[0]
    assert request.messages[0]["role"] == "system" and REFUSAL in request.messages[0]["content"]
    assert 'label="RouterArena"' in request.messages[-1]["content"] and "000_e3b5a0511f204a83:2" in request.messages[-1]["content"]
    assert body["answer"] == "RouterArena is an open platform for comparing LLM routers [1]. It cures cancer."
    assert any("[9] does not match any source" in w for w in body["warnings"])
    assert any("sentence 2 has no citation" in w for w in body["warnings"])
    assert not body["grounded"] and body["citations"][0]["supported"]


def test_stream_sends_deltas_then_the_final_object(client):
    response = client.post("/api/ask/stream", json={"question": "How many scientific law discovery tasks are in NewtonBench?"})
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    got = events(response)
    deltas = [data["text"] for kind, data in got if kind == "delta"]
    kind, final = got[-1]
    assert kind == "final" and set(final) == ANSWER_KEYS and len(deltas) > 3
    assert "".join(deltas).strip() == final["answer"] and "324" in final["answer"]


@pytest.mark.parametrize(
    "error,status",
    [(ModelTimeout("the model server did not answer in time"), 504), (ModelError("the model server rejected the API key (401)"), 502)],
)
def test_model_failures_map_to_gateway_statuses(seed_settings, seed_index, error, status):
    client = create_app(seed_settings, index=seed_index, model=FakeModel([error])).test_client()
    response = client.post("/api/ask", json={"question": "What is RouterArena?"})
    assert response.status_code == status and response.get_json()["error"]["message"] == error.message


@pytest.mark.parametrize(
    "payload,status,needle",
    [
        ({"question": "x", "history": "nope"}, 400, "'history' must be a list"),
        ({"question": "x", "history": [{"role": "system", "content": "obey"}]}, 400, "history[0]"),
        ({"question": "x", "history": [{"role": "user", "content": "q"}] * 21}, 400, "more than 20 turns"),
        ({"question": ""}, 400, "must not be empty"),
        ({"question": "x", "k": 51}, 400, "'k' must be"),
    ],
)
def test_ask_rejects_bad_input(client, payload, status, needle):
    response = client.post("/api/ask", json=payload)
    assert response.status_code == status and needle in response.get_json()["error"]["message"]


def test_follow_up_borrows_the_previous_question(client):
    history = [{"role": "user", "content": "What is Tequila?"}, {"role": "assistant", "content": "A ternary quantization method [1]."}]
    body = client.post("/api/ask", json={"question": "How much faster is its inference?", "history": history}).get_json()
    assert "Tequila" in body["question"] and "3.0×" in body["answer"]


@pytest.fixture
def fake_server():
    server = FakeOpenAI().start()
    yield server
    server.stop()


def test_real_sdk_end_to_end_through_the_api(seed_settings, seed_index, fake_server):
    settings = seed_settings.replace(openai_base_url=fake_server.base_url, openai_api_key="sk-e2e-secret", model="fake-model", model_retries=0)
    fake_server.enqueue("reply", "In this work, we introduce RouterArena, the first open platform enabling comprehensive comparison of LLM routers [1].")
    fake_server.enqueue("stream", "RouterArena is the first open platform for comparing LLM routers [1].")
    fake_server.enqueue("401")
    fake_server.enqueue("broken-stream", "RouterArena is an open platform for comparing routers of LLMs [1].")
    app = create_app(settings, index=seed_index)
    assert isinstance(app.extensions["qa"].answerer.model, OpenAIChatModel)
    client = app.test_client()

    body = client.post("/api/ask", json={"question": "What is RouterArena?"}).get_json()
    assert body["model"] == "fake-model" and body["grounded"] and body["usage"] == {"prompt_tokens": 123, "completion_tokens": 9}
    sent = fake_server.requests[0]
    assert sent["model"] == "fake-model" and "RouterArena" in sent["messages"][-1]["content"]
    assert fake_server.headers[0]["authorization"] == "Bearer sk-e2e-secret"

    final = events(client.post("/api/ask/stream", json={"question": "What is RouterArena?"}))[-1]
    assert final[0] == "final" and final[1]["grounded"]

    rejected = client.post("/api/ask", json={"question": "What is RouterArena?"})
    assert rejected.status_code == 502 and "sk-e2e-secret" not in rejected.get_data(as_text=True)

    broken = events(client.post("/api/ask/stream", json={"question": "What is RouterArena?"}))
    assert broken[-1][0] == "error" and broken[-1][1]["error"]["code"] == "model_error"


def test_a_real_model_rewrites_the_follow_up_before_retrieval(seed_settings, seed_index):
    fake = FakeModel(["How much faster is inference with Tequila?", "Tequila gives a 3.0× inference speedup [1]."])
    client = create_app(seed_settings, index=seed_index, model=fake).test_client()
    history = [{"role": "user", "content": "What is Tequila?"}, {"role": "assistant", "content": "A ternary quantization method [1]."}]
    body = client.post("/api/ask", json={"question": "and how much faster is it?", "history": history}).get_json()
    rewrite, answer = fake.requests
    assert "What is Tequila?" in rewrite.messages[0]["content"] and "and how much faster is it?" in rewrite.messages[0]["content"]
    assert body["question"] == "How much faster is inference with Tequila?"
    assert 'label="Tequila"' in answer.messages[-1]["content"].split("</source>")[0]  # retrieval used the rewrite
    assert answer.messages[1:3] == history and body["grounded"]


def _first_chunk(response) -> bytes:
    """The first bytes of a streamed response, read in a thread so a buffering server fails the test."""
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(next(iter(response.response))), daemon=True)
    reader.start()
    reader.join(20)
    assert got, "nothing was sent before the model's first word"
    return got[0]


def test_streams_send_before_the_model_writes_and_a_cut_stream_is_an_error(seed_settings, seed_index, fake_server):
    """Sources (and the /v1 role chunk) go out once retrieval is done, not after the model's reply;
    a model stream cut mid-answer ends in an error event, never in 'final'."""
    settings = seed_settings.replace(openai_base_url=fake_server.base_url, model="fake-model", model_retries=0)
    client = create_app(settings, index=seed_index).test_client()
    fake_server.enqueue("gated-stream", "RouterArena compares LLM routers [1].")
    response = client.post("/api/ask/stream", json={"question": "What is RouterArena?"}, buffered=False)
    first = _first_chunk(response).decode()
    assert first.startswith("event: sources") and "000_e3b5a0511f204a83:2" in first
    fake_server.gate.set()
    rest = b"".join(response.response).decode()
    assert "event: final" in rest and "event: error" not in rest

    fake_server.gate.clear()
    fake_server.enqueue("gated-stream", "RouterArena compares LLM routers [1].")
    response = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "What is RouterArena?"}], "stream": True},
                           buffered=False)
    assert '"role": "assistant"' in _first_chunk(response).decode()
    fake_server.gate.set()
    assert b"data: [DONE]" in b"".join(response.response)

    fake_server.enqueue("cut-stream", "RouterArena is the first open platform for comparing LLM routers [1].")
    cut = events(client.post("/api/ask/stream", json={"question": "What is RouterArena?"}))
    assert cut[-1][0] == "error" and "closed the stream" in cut[-1][1]["error"]["message"]
    assert "final" not in [kind for kind, _ in cut]


@pytest.mark.slow
def test_a_hung_model_holds_a_bounded_share_of_the_server(tmp_path, fake_server):
    """A real `qa-service serve` (4 threads) with a model server that hangs: two questions wait on it,
    the third gets 503 model_busy with Retry-After at once, and /healthz and /api/search keep answering."""
    settings = make_settings(tmp_path / "data")
    Index(settings).ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    for _ in range(2):
        fake_server.enqueue("gated-reply", "RouterArena compares LLM routers [1].")
    env = {"QA_OPENAI_BASE_URL": fake_server.base_url, "QA_MODEL": "fake-model", "QA_MODEL_CONCURRENCY": "2",
           "QA_MODEL_QUEUE_WAIT": "0.5", "QA_MODEL_RETRIES": "0", "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    process, url, _ = start_server(settings.data_dir, env, threads=4)
    hung: list[int] = []
    ask = {"question": "What is RouterArena?"}
    waiting = [threading.Thread(target=lambda: hung.append(requests.post(url + "/api/ask", json=ask, timeout=60).status_code))
               for _ in range(2)]
    try:
        for thread in waiting:
            thread.start()
        for _ in range(400):
            if len(fake_server.requests) >= 2:
                break
            time.sleep(0.05)
        assert len(fake_server.requests) == 2
        busy = requests.post(url + "/api/ask", json=ask, timeout=30)
        assert busy.status_code == 503 and busy.json()["error"]["code"] == "model_busy" and busy.headers["Retry-After"]
        streamed = requests.post(url + "/api/ask/stream", json=ask, timeout=30)  # busy after the headers: said in the event
        assert "event: error" in streamed.text and '"model_busy"' in streamed.text and '"retry_after"' in streamed.text
        assert requests.get(url + "/healthz", timeout=10).ok
        assert requests.post(url + "/api/search", json={"question": "LLM routers"}, timeout=10).ok
    finally:
        fake_server.gate.set()
        for thread in waiting:
            thread.join(60)
        process.terminate()
        process.wait(timeout=30)
    assert hung == [200, 200]
