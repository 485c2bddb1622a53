"""A client generated from /openapi.json by openapi-python-client (a dev extra), offline, in the suite: it must
generate every route (a `logprobs` declared as a boolean enum made it skip /v1/chat/completions) and call each
against a real server on 127.0.0.1, the quote of a citation reaching it. Corpus names are strings with the
known names as examples, not an enum, so a corpus added later needs no new client."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clientkit import app_over, openreview_settings, running

GRIP = "What success rate does GripNet reach?"
ROUTES = {"health", "ready", "get_info", "list_corpora", "list_papers", "get_paper", "metrics", "search", "ask", "ask_stream",
          "list_examples", "list_models", "retrieve_model", "create_chat_completion"}


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    settings = openreview_settings(tmp_path_factory.mktemp("generated-data"))
    app = app_over(settings)
    with running(app) as url:
        yield url, app


@pytest.fixture(scope="module")
def generated(served, tmp_path_factory):
    """The package openapi-python-client writes from the served document, importable as `qa_api_client`."""
    url, app = served
    folder = tmp_path_factory.mktemp("generated")
    (folder / "spec.json").write_text(app.test_client().get("/openapi.json").get_data(as_text=True), encoding="utf-8")
    (folder / "config.yml").write_text("post_hooks: []\n", encoding="utf-8")  # no ruff run over the output
    command = [sys.executable, "-m", "openapi_python_client", "generate", "--path", "spec.json", "--meta", "none",
               "--output-path", "qa_api_client", "--config", "config.yml"]
    result = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "Warning" not in result.stdout + result.stderr, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module("qa_api_client")
    finally:
        sys.path.remove(str(folder))
        for name in [n for n in sys.modules if n == "qa_api_client" or n.startswith("qa_api_client.")]:
            del sys.modules[name]


def route(package, name):
    return importlib.import_module(f"{package.__name__}.api.default.{name}")


def test_every_route_is_generated(generated):
    folder = Path(generated.__file__).parent / "api" / "default"
    assert {p.stem for p in folder.glob("*.py")} - {"__init__"} == ROUTES


def test_the_generated_client_calls_every_route(served, generated):
    url, _ = served
    client = generated.Client(base_url=url, raise_on_unexpected_status=True, timeout=60)
    models = importlib.import_module(f"{generated.__name__}.models")
    call = lambda name, **kw: route(generated, name).sync_detailed(client=client, **kw)  # noqa: E731
    assert call("health").parsed.status == "ok" and call("ready").status_code == 200
    assert call("get_info").parsed.index.papers == 4
    assert call("list_corpora", corpus=["iclr2026"]).parsed.corpora[0].papers == 4
    assert {p.id for p in call("list_papers", venue=["ICLR 2025"]).parsed.papers} == {"or-voxa", "or-gripnet"}  # Poster, Oral
    assert call("get_paper", paper_id="or-gripnet").parsed.url == "https://openreview.net/forum?id=gripnet"
    assert b"qa_http_requests_total" in call("metrics").content
    examples = call("list_examples").parsed.examples
    assert examples and all(e.question.strip() and e.paper_id.startswith("or-") for e in examples)
    assert call("search", body=models.SearchBody(question=GRIP)).parsed.results[0].paper_id == "or-gripnet"
    asked = call("ask", body=models.AskBody(question=GRIP)).parsed
    assert any("87%" in c.quote for c in asked.citations)
    assert b"event: final" in call("ask_stream", body=models.AskStreamBody(question=GRIP)).content
    assert [m.id for m in call("list_models").parsed.data] == ["qa-service", "qa-service:iclr2026"]
    assert call("retrieve_model", model_id="qa-service:iclr2026").parsed.id == "qa-service:iclr2026"
    body = models.CreateChatCompletionBody.from_dict({"model": "qa-service:iclr2026", "messages": [{"role": "user", "content": GRIP}]})
    completion = call("create_chat_completion", body=body).parsed
    quote = next(c.quote for c in completion.citations if "87%" in c.quote)
    assert quote in completion.choices[0].message.content


def test_a_corpus_name_is_a_string_with_examples_not_an_enum(served):
    _, app = served
    spec = app.test_client().get("/openapi.json").get_json()
    corpus = next(p for p in spec["paths"]["/api/papers"]["get"]["parameters"] if p["name"] == "corpus")["schema"]["items"]
    model = spec["paths"]["/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]["model"]
    assert "enum" not in corpus and corpus["example"] == "iclr2026" and "enum" not in model and "qa-service:iclr2026" in model["description"]
    logprobs = spec["paths"]["/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]["logprobs"]
    assert logprobs == {"type": "boolean", "nullable": True, "description": json.loads(json.dumps(logprobs["description"]))}
