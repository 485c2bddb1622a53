"""Schemathesis fuzzes every route from /openapi.json: no 500s, every response as documented."""

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from qa_service.web import create_app  # noqa: E402
from tests.conftest import SEEDS, make_settings  # noqa: E402

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    from qa_service.corpus import load_corpus
    from qa_service.index import Index

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
    routes = {r.rule.replace("<path:paper_id>", "{paper_id}") for r in app.url_map.iter_rules()}
    assert routes - documented == {"/", "/openapi.json", "/static/<path:filename>"}


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
