"""Schemathesis fuzzes every route from /openapi.json: no 500s, every response as documented."""

import os
import re
import subprocess
import sys
import unicodedata

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from qa_service.store.corpora import Corpora  # noqa: E402
from qa_service.corpus.reading import load_corpus  # noqa: E402
from qa_service.errors import QAError  # noqa: E402
from qa_service.store.index import Index  # noqa: E402
from qa_service.web.app import create_app  # noqa: E402
from tests.conftest import ROOT, SEEDS, gunicorn, make_settings  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    settings = make_settings(tmp_path_factory.mktemp("openapi-data"), rate_limit="", answer_rate_limit="")
    index = Index(settings)
    index.ingest(load_corpus([SEEDS / "004_b7de3c5bc70ac347.txt"]))
    return create_app(settings, index=index)


@pytest.fixture(scope="module")
def api_schema(app):
    return schemathesis.openapi.from_wsgi("/openapi.json", app)


def operations(api_schema) -> list:
    return [result.ok() for result in api_schema.get_all_operations()]


def test_every_route_keeps_its_contract(api_schema):
    """A bounded number of generated requests per route (25), each checked against the document."""
    for operation in operations(api_schema):

        @given(case=operation.as_strategy())
        @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case) -> None:
            case.call_and_validate(checks=CHECKS)

        check()


def test_the_document_lists_every_route(app):
    documented = set(app.test_client().get("/openapi.json").get_json()["paths"])
    routes = {re.sub(r"<path:(\w+)>", r"{\1}", r.rule) for r in app.url_map.iter_rules()}
    assert routes - documented == {"/", "/openapi.json", "/static/{filename}"}


def test_the_answer_schema_is_the_answer_type(app):
    """Every key Answer.to_dict() writes is documented and required, and nothing else: the two cannot drift."""
    from qa_service.records import Answer

    schema = app.test_client().get("/openapi.json").get_json()["components"]["schemas"]["Answer"]
    keys = set(Answer("").to_dict())
    assert set(schema["properties"]) == keys and set(schema["required"]) == keys


def test_history_limits_are_the_ones_enforced(app):
    """The document's history limits are the settings the validator uses."""
    settings = app.extensions["qa"].settings
    body = app.test_client().get("/openapi.json").get_json()["paths"]["/api/ask"]["post"]["requestBody"]
    history = body["content"]["application/json"]["schema"]["properties"]["history"]
    assert history["maxItems"] == settings.max_history_turns
    assert history["items"]["properties"]["content"]["maxLength"] == settings.max_history_chars
    client = app.test_client()
    too_long = client.post("/api/ask", json={"question": "What is SERE?", "history": [{"role": "user", "content": "x" * (settings.max_history_chars + 1)}]})
    assert too_long.status_code == 413
    turns = [{"role": "user", "content": "hi"}] * (settings.max_history_turns + 1)
    messages = turns + [{"role": "user", "content": "What is SERE?"}]
    assert client.post("/api/ask", json={"question": "What is SERE?", "history": turns}).status_code == 400
    assert client.post("/v1/chat/completions", json={"messages": messages}).status_code == 400


# -- the document and the code are one truth ------------------------------------------------

BLANKS = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zs", "Zl", "Zp") or chr(c).isspace()]


def question_pattern(app) -> str:
    body = app.test_client().get("/openapi.json").get_json()["paths"]["/api/ask"]["post"]["requestBody"]
    return body["content"]["application/json"]["schema"]["properties"]["question"]["pattern"]


def test_a_question_needs_a_visible_character_in_the_document_and_in_the_code(app):
    """"\\u001d" matched the document's \\S in ECMAScript and Rust (not Python) and was a 400: now one class, every engine."""
    import jsonschema_rs

    from qa_service.inputs import question_text

    settings = app.extensions["qa"].settings
    schema = jsonschema_rs.validator_for({"type": "string", "pattern": question_pattern(app)})
    for text in [*BLANKS, "a", "é", "?", "是", "\U0001F600", "\x1dWhat is SERE?"]:
        try:
            question_text(text, settings)
            accepted = True
        except QAError:
            accepted = False
        assert accepted == schema.is_valid(text) == bool(re.search(question_pattern(app), text)), repr(text)
    assert app.test_client().post("/api/ask", json={"question": "\u001d"}).status_code == 400


def test_the_papers_filter_is_as_long_as_the_document_says(app):
    limit = app.extensions["qa"].settings.max_filter_chars
    client = app.test_client()
    parameter = client.get("/openapi.json").get_json()["paths"]["/api/papers"]["get"]["parameters"][0]
    assert parameter["name"] == "q" and parameter["schema"]["maxLength"] == limit
    assert client.get("/api/papers", query_string={"q": "x" * limit}).status_code == 200
    refused = client.get("/api/papers", query_string={"q": "x" * (limit + 1)})
    assert refused.status_code == 400 and "'q' is longer than" in refused.get_json()["error"]["message"]


def test_an_empty_user_message_is_invalid_in_the_document_and_refused(app):
    """The document allowed {"role": "user", "content": ""} and the code refused it; an earlier one was accepted."""
    import jsonschema_rs

    spec = app.test_client().get("/openapi.json").get_json()
    body = spec["paths"]["/v1/chat/completions"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    validator = jsonschema_rs.Draft4Validator(to_json_schema(body))
    client = app.test_client()
    for messages in ([{"role": "user", "content": ""}], [{"role": "user", "content": " "}, {"role": "user", "content": "What is SERE?"}]):
        assert not validator.is_valid({"messages": messages})
        assert client.post("/v1/chat/completions", json={"messages": messages}).status_code == 400
    good = {"messages": [{"role": "system", "content": ""}, {"role": "assistant", "content": None}, {"role": "user", "content": "What is SERE?"}]}
    assert validator.is_valid(good) and client.post("/v1/chat/completions", json=good).status_code == 200


def to_json_schema(schema):
    """OpenAPI 3.0's `nullable` as JSON Schema's null type, so that jsonschema_rs can read a request schema."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: to_json_schema(v) for k, v in schema.items() if k != "nullable" and not k.startswith("x-")}
    if schema.get("nullable") and "type" in schema:
        out["type"] = [schema["type"], "null"]
    return out


@pytest.fixture(scope="module")
def guarded_spec(tmp_path_factory):
    """The document of a server with an API key and rate limits."""
    settings = make_settings(tmp_path_factory.mktemp("spec-data"), api_key="k3y", rate_limit="100 per minute", answer_rate_limit="10 per minute")
    return create_app(settings).test_client().get("/openapi.json").get_json()


def test_every_operation_has_an_id_and_says_who_may_call_and_how_often(guarded_spec):
    operations = {(path, method): op for path, item in guarded_spec["paths"].items() for method, op in item.items()}
    ids = [op.get("operationId") for op in operations.values()]
    assert all(ids) and len(set(ids)) == len(ids)
    assert guarded_spec["components"]["securitySchemes"]["ApiKey"] == {
        "type": "http", "scheme": "bearer", "description": "The server's QA_API_KEY, as 'Authorization: Bearer <key>'"}
    for (path, method), op in operations.items():
        keyed = path.startswith(("/api/", "/v1/"))  # /api/info too: it names the model and the index
        limited = path.startswith(("/api/", "/v1/"))
        assert op["security"] == ([{"ApiKey": []}] if keyed else []), path
        assert ("401" in op["responses"]) == keyed, path
        assert ("429" in op["responses"]) == limited, path
        if keyed:
            assert op["responses"]["401"]["headers"]["WWW-Authenticate"]["required"] is True
        if limited:
            assert op["responses"]["429"]["headers"]["Retry-After"]["required"] is True
        if path.startswith("/v1/"):  # except 414: the server answers it before it knows the path
            assert all(r["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/OpenAIError"}
                       for code, r in op["responses"].items() if code >= "400" and code != "414"), path


# -- schemathesis, every check, against the server as `qa-service serve` runs it -------------------

API_KEY = "st-key"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """gunicorn with an API key and rate limits too high to reach: 401 and 429 are in the document, and tested."""
    data = tmp_path_factory.mktemp("served-data")
    corpora = Corpora(make_settings(data))  # two corpora: names and filters are in the document, and fuzzed
    corpora.default.ingest(load_corpus([SEEDS / "004_b7de3c5bc70ac347.txt"]))
    corpora.open("conf").ingest(load_corpus([ROOT / "tests" / "data" / "metadata_papers.jsonl"]))
    env = {"QA_API_KEY": API_KEY, "QA_RATE_LIMIT": "100000 per minute", "QA_ANSWER_RATE_LIMIT": "100000 per minute"}
    with gunicorn(data, env) as url:
        yield url


@pytest.mark.slow
def test_schemathesis_finds_nothing_with_every_check(served, tmp_path):
    """`schemathesis run --checks all`: examples, coverage (boundaries, undeclared methods, missing auth), fuzzing
    and stateful phases, a bounded 20 examples per operation, seeded so that a run can be repeated."""
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(ROOT / "tests" / "schemathesis.toml"), "--no-color",
               "run", served + "/openapi.json", "--checks", "all", "--max-examples", "20", "--seed", "14",
               "--header", f"Authorization: Bearer {API_KEY}", "--request-timeout", "30"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-12000:] + result.stderr[-3000:]
    assert "No issues found" in result.stdout or " passed in " in result.stdout, result.stdout[-3000:]
