"""Schemathesis hooks (loaded by tests/schemathesis.toml) for the rules of our API that JSON Schema cannot say."""

import schemathesis

QUESTION = {"role": "user", "content": "What is SERE?"}


@schemathesis.hook
def map_case(context, case):
    """/v1/chat/completions, a valid body made one we answer, still valid under the schema:

    - the last message is the user's question. JSON Schema can constrain every item of an array but not
      which one comes last, so a body with the question elsewhere gets its last message replaced;
    - a JSON schema asked for (`response_format` json_schema, or one tool's parameters) must ask for fields
      the service has, matched by name and type: whether it does is no JSON Schema rule, so a generated
      one is dropped (tests/test_structured.py fills and refuses schemas, arbitrary ones included);
    - `logprobs` is a boolean whose true is refused: declared without an enum, which openapi-python-client
      cannot read for a boolean (it skipped the whole route), so a true is made false.
    """
    # A case built from the document's examples has no generation meta: it is a positive one.
    if case.operation.path != "/v1/chat/completions" or (case.meta is not None and not case.meta.generation.mode.is_positive):
        return case
    if not isinstance(case.body, dict):
        return case
    body = dict(case.body)
    messages = body.get("messages")
    if isinstance(messages, list) and messages and messages[-1].get("role") != "user":
        body["messages"] = [*messages[:-1], QUESTION]
    if isinstance(body.get("response_format"), dict) and body["response_format"].get("type") == "json_schema":
        body["response_format"] = {"type": "text"}
    if body.get("tools"):
        body.pop("tools")
        body.pop("tool_choice", None)
    if body.get("logprobs") is True:
        body["logprobs"] = False
    case.body = body
    return case
