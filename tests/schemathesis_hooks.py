"""Schemathesis hooks (loaded by tests/schemathesis.toml) for the one rule of our API that JSON Schema cannot say."""

import schemathesis

QUESTION = {"role": "user", "content": "What is SERE?"}


@schemathesis.hook
def map_case(context, case):
    """/v1/chat/completions: the last message is the user's question. JSON Schema can constrain every item
    of an array but not which one comes last, so a valid body generated with the question elsewhere gets
    its last message replaced by a question: it stays valid under the schema and becomes one we answer."""
    # A case built from the document's examples (the model id's) has no generation meta: it is a positive one.
    if case.operation.path != "/v1/chat/completions" or (case.meta is not None and not case.meta.generation.mode.is_positive):
        return case
    messages = case.body.get("messages") if isinstance(case.body, dict) else None
    if isinstance(messages, list) and messages and messages[-1].get("role") != "user":
        case.body = {**case.body, "messages": [*messages[:-1], QUESTION]}
    return case
