"""Structured output (web/structured.py): a JSON schema the service can fill, by property names and types,
recursively, gets exactly that shape, valid against it; any other is a 400 naming what it cannot fill.
Through LangChain's own with_structured_output (json_schema, and function_calling: one tool) and the
openai SDK's parse, against a real server on 127.0.0.1; each asserts that a citation's quote arrives."""

from __future__ import annotations

import json
from typing import Optional

import jsonschema
import openai
import pytest
from hypothesis import given, settings as hsettings, strategies as st
from langchain_openai import ChatOpenAI
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel

from qa_service.errors import BadRequest
from qa_service.records import Answer, Citation
from qa_service.web import structured
from tests.clientkit import app_over, openreview_settings, running

GRIP = "What success rate does GripNet reach?"
GRIP_QUOTE = "On 40 household objects it succeeds in 87% of grasps, 21 points above the best baseline."


class Quote(BaseModel):
    paper_id: str
    quote: str
    label: str
    url: str
    year: Optional[int] = None


class CitedAnswer(BaseModel):
    """An answer with the sentences that back it."""

    answer: str
    citations: list[Quote]
    refusal_reason: Optional[str] = None


class Unfillable(BaseModel):
    answer: str
    confidence: float
    citations: list[dict]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(app_over(openreview_settings(tmp_path_factory.mktemp("structured-data")))) as url:
        yield url


@pytest.mark.parametrize("schema", [CitedAnswer.model_json_schema(), to_strict_json_schema(CitedAnswer)])
def test_a_pydantic_schema_is_filled_in_its_own_shape_and_validates(schema):
    answer = Answer("GripNet grasps [1].", citations=[Citation(1, "p", "GripNet", "It grasps.", 0, 10, 1.0, True, 0)])
    structured.check(schema, "x")
    filled = structured.fill(schema, structured.answer_values(answer, {}), schema)
    assert filled == {"answer": "GripNet grasps [1].", "refusal_reason": None,
                      "citations": [{"paper_id": "p", "quote": "It grasps.", "label": "GripNet", "url": "", "year": None}]}
    jsonschema.validate(filled, schema)


def test_what_cannot_be_filled_is_named():
    with pytest.raises(BadRequest) as refused:
        structured.check(Unfillable.model_json_schema(), "response_format.json_schema.schema")
    message = refused.value.message
    assert "confidence (no such field)" in message and "citations[] (an object with no named properties)" in message
    assert refused.value.param == "response_format.json_schema.schema"
    year_required = {"type": "object", "properties": {"sources": {"type": "array", "items": {
        "type": "object", "properties": {"year": {"type": "integer"}}}}}}
    with pytest.raises(BadRequest, match=r"sources\[\]\.year \(not known for every answer: allow null\)"):
        structured.check(year_required, "x")
    with pytest.raises(BadRequest, match=r"answer \(asked as integer, the service has string\)"):
        structured.check({"type": "object", "properties": {"answer": {"type": "integer"}}}, "x")
    with pytest.raises(BadRequest, match="its enum does not hold"):
        structured.check({"type": "object", "properties": {"refusal_reason": {"type": ["string", "null"], "enum": ["off_topic", None]}}}, "x")


def test_the_openai_sdk_parse_gets_the_typed_answer(server):
    client = openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)
    reply = client.chat.completions.parse(model="qa-service", messages=[{"role": "user", "content": GRIP}], response_format=CitedAnswer)
    parsed = reply.choices[0].message.parsed
    assert isinstance(parsed, CitedAnswer) and "87%" in parsed.answer
    grip = next(c for c in parsed.citations if c.quote == GRIP_QUOTE)  # the answer also names the method, in its own sentence
    assert grip.url == "https://openreview.net/forum?id=gripnet" and grip.year == 2025 and parsed.refusal_reason is None
    jsonschema.validate(json.loads(reply.choices[0].message.content), to_strict_json_schema(CitedAnswer))


def test_a_schema_it_cannot_fill_is_a_400_through_the_sdk(server):
    client = openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="confidence") as refused:
        client.chat.completions.parse(model="qa-service", messages=[{"role": "user", "content": GRIP}], response_format=Unfillable)
    assert refused.value.code == "unsupported_schema"


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_langchain_with_structured_output(server, method):
    chat = ChatOpenAI(model="qa-service", base_url=server + "/v1", api_key="unused", max_retries=0)
    typed = chat.with_structured_output(CitedAnswer, method=method)
    found = typed.invoke(GRIP)
    assert isinstance(found, CitedAnswer) and GRIP_QUOTE in [c.quote for c in found.citations]
    raw = chat.with_structured_output(CitedAnswer.model_json_schema(), method=method).invoke(GRIP)  # a dict schema: a dict
    assert GRIP_QUOTE in [c["quote"] for c in raw["citations"]] and set(raw) <= {"answer", "citations", "refusal_reason"}


def test_langchain_structured_output_streams_and_batches(server):
    chat = ChatOpenAI(model="qa-service", base_url=server + "/v1", api_key="unused", max_retries=0)
    typed = chat.with_structured_output(CitedAnswer, method="function_calling")
    assert GRIP_QUOTE in [c.quote for c in list(typed.stream(GRIP))[-1].citations]
    assert [GRIP_QUOTE in [c.quote for c in a.citations] for a in typed.batch([GRIP, GRIP])] == [True, True]


def test_langchain_text_keeps_the_quotes(server):
    chat = ChatOpenAI(model="qa-service", base_url=server + "/v1", api_key="unused", max_retries=0)
    assert GRIP_QUOTE in chat.invoke(GRIP).content
    assert GRIP_QUOTE in "".join(chunk.content for chunk in chat.stream(GRIP))


def test_tool_choice_none_answers_in_text_and_another_tool_name_is_refused(server):
    client = openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)
    tool = {"type": "function", "function": {"name": "CitedAnswer", "parameters": CitedAnswer.model_json_schema()}}
    messages = [{"role": "user", "content": GRIP}]
    plain = client.chat.completions.create(model="qa-service", messages=messages, tools=[tool], tool_choice="none")
    assert GRIP_QUOTE in plain.choices[0].message.content and not plain.choices[0].message.tool_calls
    with pytest.raises(openai.BadRequestError, match="names the tool 'Other'"):
        client.chat.completions.create(model="qa-service", messages=messages, tools=[tool],
                                       tool_choice={"type": "function", "function": {"name": "Other"}})


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                        ["type", "properties", "items", "enum", "anyOf", "oneOf", "allOf", "$ref", "nullable", "answer", "citations",
                         "quote", "$defs", "string", "object", "array", "null"]), inner, max_size=4), max_leaves=20)


@given(JSON)
@hsettings(max_examples=300, deadline=None, database=None)
def test_any_json_schema_is_filled_or_refused_with_a_400_never_a_crash(schema):
    answer = Answer("x [1].", citations=[Citation(1, "p", "L", "q", 0, 1, 1.0, True, 0)])
    try:
        structured.check(schema, "x")
    except BadRequest:
        return
    structured.fill(schema, structured.answer_values(answer, {}), schema)
