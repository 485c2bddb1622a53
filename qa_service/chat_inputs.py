"""/v1/chat/completions bodies checked once: every OpenAI option honoured or refused with the reason (a 400).

One table (CHAT_OPTIONS) is both what the OpenAPI document shows and what chat_request() enforces.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Sequence

from .config import Settings
from .errors import BadRequest, ConfigError, NotFound, PayloadTooLarge
from .inputs import VISIBLE_PATTERN, YEAR_PATTERN, filter_text_schema, has_visible, question_text, unicode_text
from .records import ChatRequest, Turn

MODEL_ID = "qa-service"
#: How the /v1 text answer lists its sources (the request's `references`, default the setting of that name).
REFERENCE_STYLES = ("full", "labels", "none")
CHAT_ROLES = ("system", "developer", "user", "assistant")
MODEL_SEPARATOR = ":"  # qa-service:<corpus> asks one corpus
_SAMPLING = "answers are written at temperature 0, so that they can be checked against the sources"

# Every OpenAI option the facade reads, as the JSON schema the OpenAPI document shows and
# chat_request() enforces (one table, so the two cannot drift); null is "not given".
CHAT_OPTIONS: dict[str, dict] = {
    "model": {"type": "string"},
    "stream": {"type": "boolean", "nullable": True},
    "stream_options": {"type": "object", "nullable": True, "additionalProperties": False, "properties": {
        "include_usage": {"type": "boolean"}, "include_obfuscation": {"type": "boolean"}}},
    "max_tokens": {"type": "integer", "minimum": 1, "nullable": True},
    "max_completion_tokens": {"type": "integer", "minimum": 1, "nullable": True},
    "n": {"type": "integer", "minimum": 1, "maximum": 1, "nullable": True},
    "response_format": {"type": "object", "nullable": True, "required": ["type"], "additionalProperties": False, "properties": {
        "type": {"type": "string", "enum": ["text", "json_object", "json_schema"]},
        "json_schema": {"type": "object", "required": ["name"], "additionalProperties": False, "properties": {
            "name": {"type": "string"}, "description": {"type": "string", "nullable": True},
            "schema": {"type": "object", "additionalProperties": True}, "strict": {"type": "boolean", "nullable": True}}}}},
    "temperature": {"type": "number", "minimum": 0, "maximum": 2, "nullable": True},
    "top_p": {"type": "number", "minimum": 0, "maximum": 1, "nullable": True},
    "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2, "nullable": True},
    "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2, "nullable": True},
    "seed": {"type": "integer", "nullable": True},
    "logprobs": {"type": "boolean", "nullable": True, "description": "false or null: there are no log probabilities (true is a 400)"},
    "tools": {"type": "array", "nullable": True, "maxItems": 1, "items": {
        "type": "object", "required": ["type", "function"], "additionalProperties": False, "properties": {
            "type": {"type": "string", "enum": ["function"]},
            "function": {"type": "object", "required": ["name"], "additionalProperties": False, "properties": {
                "name": {"type": "string"}, "description": {"type": "string", "nullable": True},
                "parameters": {"type": "object", "additionalProperties": True}, "strict": {"type": "boolean", "nullable": True}}}}}},
    "tool_choice": {"nullable": True, "oneOf": [
        {"type": "string", "enum": ["none", "auto", "required"]},
        {"type": "object", "required": ["type", "function"], "additionalProperties": False, "properties": {
            "type": {"type": "string", "enum": ["function"]},
            "function": {"type": "object", "required": ["name"], "additionalProperties": False,
                         "properties": {"name": {"type": "string"}}}}}]},
    "references": {"type": "string", "nullable": True, "enum": list(REFERENCE_STYLES),
                   "description": "How the text answer ends: full (per source its label, year, venue, URL and quoted sentences), "
                                  "labels ([n] label (paper id)) or none; default: the setting `references`"},
    "parallel_tool_calls": {"type": "boolean", "nullable": True},
    "modalities": {"type": "array", "nullable": True, "items": {"type": "string", "enum": ["text"]}},
    "user": {"type": "string", "nullable": True},
    "store": {"type": "boolean", "nullable": True},
    "metadata": {"type": "object", "nullable": True},  # the metadata filters: see chat_options
    "service_tier": {"type": "string", "nullable": True},
}
def chat_options(settings: Settings, models: Sequence[str]) -> dict[str, dict]:
    """CHAT_OPTIONS for this server: the model ids it has (one per corpus), and `metadata` as filters
    (OpenAI's metadata values are strings, so a year is "2026")."""
    text = filter_text_schema(settings)
    year = {"type": "string", "pattern": YEAR_PATTERN, "description": 'a year from 1 to 9999, such as "2026"'}
    metadata = {"type": "object", "nullable": True, "additionalProperties": False, "properties": {
        "year": year, "year_from": year, "year_to": year, "venue": text, "author": text, "keyword": text}}
    model = {"type": "string",  # not an enum: a new corpus needs no new client
             "description": f"{MODEL_ID} (every corpus) or {MODEL_ID}{MODEL_SEPARATOR}<corpus>; here: {', '.join(models)} (GET /v1/models)"}
    return {**CHAT_OPTIONS, "model": model, "metadata": metadata}
# Why a value outside the schema is refused, where the schema alone does not say it.
_WHY = {
    "n": "one choice is returned: the answer is deterministic, so more choices would be copies",
    "tools": "one function tool is read, whose parameters ask for fields of the answer (how structured output asks)",
    "tool_choice": "the one tool is called with the answer's fields, or none",
    "modalities": "only text is written",
}
# Options refused whenever they are present, with the reason.
REFUSED_OPTIONS = {
    "stop": "an answer cut at a stop sequence could not be checked against its sources (max_tokens cuts it)",
    "functions": "the service answers from its abstracts, with no function calls",
    "function_call": "the service answers from its abstracts, with no function calls",
    "top_logprobs": "there are no log probabilities to return",
    "logit_bias": "the answer is written from the sources; token biases do not apply",
    "audio": "the service writes text only",
    "prediction": "the answer is written from the sources; there is nothing to predict",
    "web_search_options": "answers come from the corpus only",
    "reasoning_effort": "the answering model is not a reasoning model",
    "verbosity": "an answer is as long as its sources need (max_tokens caps it)",
}
_TYPES = {"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false",
          "object": "an object", "array": "a list"}


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, {"string": str, "boolean": bool, "object": dict, "array": list}[kind])


def violation(value: Any, schema: dict, name: str) -> str | None:
    """What is wrong with option `name` under its schema in CHAT_OPTIONS, or None: the small part of
    JSON Schema those use (type, nullable, enum, minimum, maximum, properties, required, items)."""
    if value is None:
        return None if schema.get("nullable") else f"'{name}' must not be null"
    if "oneOf" in schema:  # the alternative of the value's own type says what is wrong with it
        problems = [violation(value, alternative, name) for alternative in schema["oneOf"]]
        if None in problems:
            return None
        fitting = [p for alt, p in zip(schema["oneOf"], problems) if _is(value, alt["type"])]
        return (fitting or problems)[0]
    kind = schema["type"]
    if not _is(value, kind):
        return f"'{name}' must be {_TYPES[kind]}"
    allowed = [v for v in schema.get("enum", []) if v is not None]
    if allowed and value not in allowed:
        return f"'{name}' must be " + " or ".join(json.dumps(v) for v in allowed)
    if kind == "string" and len(value) < schema.get("minLength", 0):
        return f"'{name}' must not be empty"
    if kind == "string" and len(value) > schema.get("maxLength", len(value)):
        return f"'{name}' is longer than {schema['maxLength']} characters"
    if kind == "string" and "pattern" in schema and not re.search(schema["pattern"], value):
        return f"'{name}' must be {schema.get('description') or 'a text with a visible character'}"
    if "minimum" in schema and value < schema["minimum"]:
        return f"'{name}' must be at least {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"'{name}' must be at most {schema['maximum']}"
    if kind == "array" and len(value) > schema.get("maxItems", len(value)):
        return f"'{name}' holds more than {schema['maxItems']}"
    if kind == "array":
        return next(filter(None, (violation(item, schema["items"], f"{name}[{i}]") for i, item in enumerate(value))), None)
    if kind == "object" and "properties" in schema:
        missing = [key for key in schema.get("required", []) if key not in value]
        if missing:
            return f"'{name}' needs '{missing[0]}'"
        known = (violation(value[key], item, f"{name}.{key}") for key, item in schema["properties"].items() if key in value)
        extra = [f"'{name}' has no field '{key}'" for key in value if key not in schema["properties"]]
        return next(filter(None, (*known, *extra)), None)
    return None


def chat_request(body: dict, settings: Settings, models: Sequence[str] = (MODEL_ID,)) -> ChatRequest:
    """A /v1/chat/completions body: each option honoured, or refused here with the reason (400).

    `models`: the ids this server has, qa-service (every corpus) and qa-service:<corpus> for each."""
    options = chat_options(settings, models)
    for name, value in body.items():
        if name in REFUSED_OPTIONS:
            raise BadRequest(f"'{name}' is not supported: {REFUSED_OPTIONS[name]}", code="unsupported_parameter", param=name)
        if name != "messages" and name not in options:
            raise BadRequest(f"Unrecognized request argument supplied: {name}", code="unknown_parameter", param=name)
    model = body.get("model", MODEL_ID)
    if isinstance(model, str) and model not in models:
        raise NotFound(f"the model {model!r} does not exist here: the models are {', '.join(map(repr, models))} (see GET /v1/models)",
                       code="model_not_found", param="model")  # 404, as OpenAI answers an unknown model
    for name, schema in options.items():
        if name in body and (problem := violation(body[name], schema, name)):
            raise BadRequest(problem + (f" ({_WHY[name]})" if name in _WHY else ""), param=name)
    if body.get("logprobs") is True:
        raise BadRequest("'logprobs' must be false or null (log probabilities are not available)", param="logprobs")
    question, history, instructions = chat_messages(body.get("messages"), settings)
    given = {name: body[name] for name in CHAT_OPTIONS if body.get(name) is not None}
    caps = [given[name] for name in ("max_tokens", "max_completion_tokens") if name in given]
    output = given.get("response_format", {})
    if output.get("type") == "json_schema" and "schema" not in output.get("json_schema", {}):
        raise BadRequest("'response_format' of type json_schema needs 'json_schema': {\"name\": ..., \"schema\": {...}}",
                         param="response_format.json_schema")
    return ChatRequest(
        question, history, instructions,
        stream=bool(given.get("stream")),
        include_usage=bool(given.get("stream_options", {}).get("include_usage")),
        max_tokens=min(caps) if caps else None,
        json_object=output.get("type") == "json_object",
        notes=tuple(_sampling_notes(given)),
        corpus=model.partition(MODEL_SEPARATOR)[2] if isinstance(model, str) else "",
        references=given.get("references") or _default_references(settings),
        schema=output.get("json_schema", {}).get("schema", {}) if output.get("type") == "json_schema" else None,
        tool=_tool_asked(given),
    )


def _default_references(settings: Settings) -> str:
    if settings.references not in REFERENCE_STYLES:
        raise ConfigError(f"the setting references (QA_REFERENCES) is {settings.references!r}: it must be one of "
                          f"{', '.join(REFERENCE_STYLES)}")
    return settings.references


def _tool_asked(given: dict) -> dict | None:
    """The one function tool to call with the answer ({name, parameters}), or None (no tools, or tool_choice none)."""
    tools, choice = given.get("tools") or [], given.get("tool_choice", "auto")
    if not tools or choice == "none":
        return None
    function = tools[0]["function"]
    if isinstance(choice, dict) and choice["function"]["name"] != function["name"]:
        raise BadRequest(f"'tool_choice' names the tool {choice['function']['name']!r}, but the one tool given is "
                         f"{function['name']!r}", param="tool_choice")
    return {"name": function["name"], "parameters": function.get("parameters") or {"type": "object", "properties": {}}}


def _sampling_notes(given: dict) -> list[str]:
    """Sampling options that would change a sampled answer, said rather than silently dropped."""
    neutral = {"temperature": 0, "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0}
    return [f"'{name}' was not applied: {_SAMPLING}" for name, value in neutral.items() if name in given and given[name] != value]


def chat_messages(messages: Any, settings: Settings) -> tuple[str, list[Turn], str]:
    """(question, history, instructions): the last message is the user's question, earlier user and
    assistant messages the history, system and developer messages the caller's instructions."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list", param="messages")
    if len(messages) > settings.max_history_turns + 1:
        raise BadRequest(f"'messages' holds more than {settings.max_history_turns + 1} messages: the question and at most "
                         f"{settings.max_history_turns} earlier ones", param="messages")
    said = []
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(message, dict) or message.get("role") not in CHAT_ROLES:
            raise BadRequest(f"'{where}.role' must be system, developer, user or assistant (tool messages are not supported: "
                             "there is no tool calling)", param=f"{where}.role")
        if "content" not in message:
            raise BadRequest(f"'{where}.content' is required", param=f"{where}.content")
        if not isinstance(message.get("name", ""), str):
            raise BadRequest(f"'{where}.name' must be a string", param=f"{where}.name")
        said.append((message["role"], _message_text(message["content"], message["role"], where, settings)))
    if said[-1][0] != "user":
        raise BadRequest("the last message must be a non-empty user message: it is the question", param="messages")
    question = question_text(said[-1][1], settings, f"'messages[{len(said) - 1}].content'")
    history = [Turn(role, text) for role, text in said[:-1] if role in ("user", "assistant")]
    instructions = "\n\n".join(text for role, text in said[:-1] if role in ("system", "developer") and has_visible(text))
    return question, history, instructions


def _message_text(content: Any, role: str, where: str, settings: Settings) -> str:
    """A message's text: a string, or a list of text parts (each checked on its own, as the schema says)."""
    if content is None and role == "assistant":
        return ""
    if isinstance(content, str):
        parts = [(f"{where}.content", content)]
    elif isinstance(content, list) and content:
        parts = []
        for j, part in enumerate(content):
            name = f"{where}.content[{j}]"
            if not isinstance(part, dict) or part.get("type") != "text":
                raise BadRequest(f"'{name}' must be a text part {{\"type\": \"text\", \"text\": ...}}: images, audio and files "
                                 "are not read", param=name)
            if not isinstance(part.get("text"), str):
                raise BadRequest(f"'{name}.text' must be a string", param=f"{name}.text")
            parts.append((f"{name}.text", part["text"]))
    else:
        raise BadRequest(f"'{where}.content' must be a string or a non-empty list of text parts", param=f"{where}.content")
    for name, text in parts:
        unicode_text(text, f"'{name}'")
        if len(text) > settings.max_history_chars:
            raise PayloadTooLarge(f"'{name}' is longer than {settings.max_history_chars} characters", param=name)
        if role == "user" and not has_visible(text):
            raise BadRequest(f"'{name}' must not be empty: a user message needs a visible character", param=name)
    return "".join(text for _, text in parts)


def chat_body_schema(settings: Settings, models: list[str] | None = None) -> dict:
    """The /v1/chat/completions body as chat_inputs.chat_request checks it: options from CHAT_OPTIONS, messages by role.
    Which message is last cannot be said in JSON Schema: the last one must be the user's question."""
    text = {"type": "string", "maxLength": settings.max_history_chars}
    visible = {**text, "pattern": VISIBLE_PATTERN}
    parts = lambda part_text: {"type": "array", "minItems": 1, "items": {  # noqa: E731 - one shape, two texts
        "type": "object", "required": ["type", "text"], "properties": {"type": {"type": "string", "enum": ["text"]}, "text": part_text}}}
    def message(roles: list[str], content: dict) -> dict:
        return {"type": "object", "required": ["role", "content"], "properties": {
            "role": {"type": "string", "enum": roles}, "content": content, "name": {"type": "string"}}}
    messages = {"type": "array", "minItems": 1, "maxItems": settings.max_history_turns + 1,
                "description": "The last message is the question (a user message); earlier user and assistant messages are "
                               "the history; system and developer messages are the caller's instructions.",
                "items": {"oneOf": [
                    message(["user"], {"oneOf": [visible, parts(visible)]}),
                    message(["assistant"], {"oneOf": [{**text, "nullable": True}, parts(text)]}),
                    message(["system", "developer"], {"oneOf": [text, parts(text)]}),
                ]}}
    return {"type": "object", "required": ["messages"], "additionalProperties": False,
            "properties": {"messages": messages, **chat_options(settings, models or [MODEL_ID])}}
