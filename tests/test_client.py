"""The requests-based client and `qa-service ask --server`, against a server mocked with `responses`."""

import json

import pytest
import requests
import responses
from click.testing import CliRunner

from qa_service.cli import main
from qa_service.client import QAClient
from qa_service.errors import QAError
from qa_service.records import Answer

URL = "http://qa.test:8000"
ANSWER = {
    "answer": "RouterArena compares LLM routers [1].",
    "citations": [{"n": 1, "paper_id": "000_e3b5a0511f204a83:2", "label": "RouterArena", "quote": "q", "start": 0, "end": 1, "score": 1.0, "supported": True, "sentence": 0}],
    "warnings": [], "grounded": True, "insufficient_evidence": False,
}


@responses.activate
def test_ask_posts_the_question_and_returns_the_answer():
    responses.post(f"{URL}/api/ask", json=ANSWER)
    result = QAClient(URL, api_key="k1").ask("What is RouterArena?", k=3, history=[{"role": "user", "content": "hi"}])
    assert result == Answer.from_dict(ANSWER) and result.answer == ANSWER["answer"] and result.citations[0].paper_id == "000_e3b5a0511f204a83:2"
    sent = responses.calls[0].request
    assert json.loads(sent.body) == {"question": "What is RouterArena?", "k": 3, "history": [{"role": "user", "content": "hi"}]}
    assert sent.headers["Authorization"] == "Bearer k1"


@responses.activate
def test_errors_carry_the_servers_message_and_status():
    responses.post(f"{URL}/api/ask", status=503, json={"error": {"code": "not_indexed", "message": "run `qa-service ingest`"}})
    with pytest.raises(QAError, match="run `qa-service ingest`") as info:
        QAClient(URL).ask("q")
    assert (info.value.status, info.value.code) == (503, "not_indexed")


@responses.activate
def test_unreachable_and_non_json_replies():
    responses.post(f"{URL}/api/search", body=requests.ConnectionError("refused"))
    with pytest.raises(QAError, match="cannot reach qa-service"):
        QAClient(URL).search("q")
    responses.post(f"{URL}/api/ask", body="<html>proxy error</html>", status=200)
    with pytest.raises(QAError, match="not JSON"):
        QAClient(URL).ask("q")


@responses.activate
def test_cli_ask_with_server_prints_answer_and_sources():
    responses.post(f"{URL}/api/ask", json=ANSWER)
    result = CliRunner().invoke(main, ["ask", "What is RouterArena?", "--server", URL])
    assert result.exit_code == 0, result.output
    assert "RouterArena compares LLM routers [1]." in result.output
    assert "[1] RouterArena  (000_e3b5a0511f204a83:2)" in result.output


@responses.activate
def test_cli_ask_with_server_error_exits_non_zero():
    responses.post(f"{URL}/api/ask", status=502, json={"error": {"code": "model_error", "message": "the model server rejected the API key (401)"}})
    result = CliRunner().invoke(main, ["ask", "What is RouterArena?", "--server", URL])
    assert result.exit_code == 1 and "rejected the API key" in result.output and "Traceback" not in result.output


def test_cli_ask_locally_offline(seed_settings, monkeypatch):
    monkeypatch.setenv("QA_DATA_DIR", seed_settings.data_dir)
    result = CliRunner().invoke(main, ["ask", "How many scientific law discovery tasks are in NewtonBench?", "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert "324" in body["answer"] and body["grounded"] and body["model"] == "extractive"


@responses.activate
def test_client_errors_hide_credentials_in_the_server_url():
    secret_url = "http://user:hunter2@qa.test:8000"
    responses.post(f"{URL}/api/search", body=requests.ConnectionError("refused"))
    responses.post(f"{URL}/api/ask", body="<html>proxy error</html>", status=200)
    for call in (lambda c: c.search("q"), lambda c: c.ask("q")):
        with pytest.raises(QAError) as info:
            call(QAClient(secret_url))
        assert "hunter2" not in info.value.message and "http://***@qa.test:8000" in info.value.message


@responses.activate
def test_the_client_waits_out_retry_after_within_its_budget(monkeypatch):
    """`qa-service eval --server` against the answer budget (30 a minute) used to stop at the 31st question."""
    slept: list[float] = []
    monkeypatch.setattr("qa_service.client.time.sleep", slept.append)
    limited = {"error": {"code": "rate_limited", "message": "answer budget spent"}}
    responses.post(f"{URL}/api/ask", status=429, json=limited, headers={"Retry-After": "3"})
    responses.post(f"{URL}/api/ask", status=503, json={"error": {"code": "model_busy", "message": "busy"}}, headers={"Retry-After": "2"})
    responses.post(f"{URL}/api/ask", json=ANSWER)
    assert QAClient(URL).ask("q").answer == ANSWER["answer"] and slept == [3.0, 2.0]

    responses.post(f"{URL}/api/ask", status=429, json=limited, headers={"Retry-After": "50"})
    with pytest.raises(QAError, match="answer budget spent") as info:
        QAClient(URL, max_wait=10).ask("q")
    assert info.value.status == 429 and slept == [3.0, 2.0]  # longer than its budget: no wait, the error at once


# -- the Python API: open_service in-process, and QAClient's stream, papers, paper and info ----------


def test_open_service_is_the_packages_entry_point(seed_settings):
    from qa_service import Answer as Exported, open_service

    service = open_service(seed_settings.data_dir)
    answer = service.ask("What is RouterArena?")
    assert isinstance(answer, Exported) and answer.grounded and answer.citations[0].label == "RouterArena"


@pytest.fixture(scope="module")
def app_client(seed_settings, seed_index):
    from qa_service.web.app import create_app

    return create_app(seed_settings, index=seed_index).test_client()


@pytest.fixture
def served(app_client):
    """QAClient talks to the real app: `responses` hands each request to Flask's test client (the network edge only)."""
    import re

    def forward(request):
        reply = app_client.open(request.path_url, method=request.method, data=request.body,
                                headers={k: v for k, v in request.headers.items() if k.lower() != "content-length"})
        headers = [(k, v) for k, v in reply.headers.items() if k.lower() not in ("content-length", "content-type")]
        return reply.status_code, headers + [("Content-Type", reply.content_type)], reply.get_data()

    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        for method in (responses.GET, responses.POST):
            mock.add_callback(method, re.compile(re.escape(URL) + "/.*"), callback=forward)
        yield QAClient(URL)


def test_stream_yields_typed_events_ending_in_the_answer(served, app_client):
    from qa_service.records import Delta, Final, Sources

    events = list(served.stream("What is RouterArena?"))
    assert isinstance(events[0], Sources) and events[0].sources[0].label == "RouterArena"
    assert all(isinstance(e, Delta) for e in events[1:-1]) and isinstance(events[-1], Final)
    final = events[-1].answer
    assert "".join(e.text for e in events[1:-1]) == final.answer and final.grounded
    plain = served.ask("What is RouterArena?")
    assert (final.answer, final.citations, final.sources) == (plain.answer, plain.citations, plain.sources)


def test_stream_refusal_and_errors(served):
    from qa_service.records import Final

    *_, last = served.stream("What is the capital of France?")
    assert isinstance(last, Final) and last.answer.insufficient_evidence
    with pytest.raises(QAError, match="'k' must be a whole number") as info:
        list(served.stream("What is RouterArena?", k=0))
    assert info.value.status == 400


def test_papers_paper_and_info_are_typed(served, seed_papers):
    from qa_service.records import Paper, ServiceInfo

    listing = served.papers()
    assert len(listing) == 57 and all(isinstance(p, Paper) for p in listing)
    assert [p.label for p in served.papers("RouterArena")] == ["RouterArena"]
    paper = served.paper("000_e3b5a0511f204a83:2")
    expected = next(p for p in seed_papers if p.id == "000_e3b5a0511f204a83:2")
    assert (paper.label, paper.text, paper.abstract) == (expected.label, expected.text, expected.abstract)
    with pytest.raises(QAError, match="no paper with id") as info:
        served.paper("nope:1")
    assert info.value.status == 404
    about = served.info()
    assert isinstance(about, ServiceInfo) and about.model == "extractive" and about.papers == 57
    assert about.limits["question_chars"] == 2000


@responses.activate
def test_a_stream_cut_midway_is_an_error_not_a_silent_end():
    responses.post(f"{URL}/api/ask/stream", body='event: sources\ndata: {"question": "q", "sources": []}\n\n'
                   'event: error\ndata: {"error": {"code": "model_error", "message": "the model stream was cut"}}\n\n',
                   content_type="text/event-stream")
    events = QAClient(URL).stream("q")
    assert next(events).sources == []
    with pytest.raises(QAError, match="the model stream was cut"):
        next(events)


@pytest.mark.parametrize("question,k,message", [
    ("", None, "must not be empty"),
    ("\ud800 what?", None, "lone surrogate"),
    ("x " * 5000, None, "is longer than"),
    ("What is RouterArena?", 0, "'k' must be a whole number"),
])
def test_open_service_checks_its_input_as_http_does(seed_settings, question, k, message):
    """Before, open_service().ask("") went to retrieval as it was, and a lone surrogate failed deep in the tokenizer."""
    from qa_service import open_service
    from qa_service.errors import QAError

    with pytest.raises(QAError, match=message):
        open_service(seed_settings.data_dir).ask(question, k)


@responses.activate
@pytest.mark.parametrize("args", [["--server", URL, "QUESTION"], ["QUESTION", "--server", URL], ["QUESTION", "--k", "40", "--server", URL]])
def test_cli_ask_with_server_leaves_the_limits_to_the_server(monkeypatch, args):
    """Before, `ask --server` refused a question longer than the *local* max_question_chars (or a --k over the
    local max_k) that the server would take: the server's limits apply, and it says when one is broken."""
    monkeypatch.setenv("QA_MAX_QUESTION_CHARS", "20")
    monkeypatch.setenv("QA_MAX_K", "5")
    responses.post(f"{URL}/api/ask", json=ANSWER)
    question = "Which open platform compares LLM routers, and how?"  # 51 characters
    result = CliRunner().invoke(main, ["ask", *[question if a == "QUESTION" else a for a in args]])
    assert result.exit_code == 0, result.output
    assert json.loads(responses.calls[0].request.body)["question"] == question
    local = CliRunner().invoke(main, ["ask", question])
    assert local.exit_code == 2 and "longer than 20 characters" in local.output  # locally, the local limit
