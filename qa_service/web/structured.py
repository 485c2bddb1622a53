"""Structured output: the caller's JSON schema (`response_format` json_schema, or the parameters of the one
tool that LangChain's `with_structured_output` binds) filled from the answer.

A schema is accepted when every property it asks for is one the service has, matched by name and type,
recursively: the answer's text, its citations and sources with their fields, the refusal fields. The
reply is exactly that shape. Otherwise a 400 names each property it cannot fill, before any work.
`$ref` to `$defs`/`definitions`, `anyOf`/`oneOf` with null and `type: [x, "null"]` (how pydantic and
the openai SDK write optional fields) are understood.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import BadRequest
from ..records import Answer, Paper, RefusalReason


@dataclass(frozen=True)
class Have:
    """A value the service can give: its JSON type, whether it may be unknown (null), and what it holds."""

    kind: str
    nullable: bool = False
    items: "Have | None" = None
    fields: Mapping[str, "Have"] = field(default_factory=dict)
    values: tuple[str, ...] = ()  # a closed set of strings (the refusal reasons)


STRING, INTEGER, NUMBER, BOOLEAN = Have("string"), Have("integer"), Have("number"), Have("boolean")
STRINGS = Have("array", items=STRING)
PAPER = {"n": INTEGER, "paper_id": STRING, "label": STRING, "corpus": STRING, "title": STRING, "venue": STRING,
         "url": STRING, "year": Have("integer", nullable=True)}
CITATION = {**PAPER, "quote": STRING, "start": INTEGER, "end": INTEGER, "sentence": INTEGER, "score": NUMBER,
            "supported": BOOLEAN}
ANSWER = Have("object", fields={
    "answer": STRING, "citations": Have("array", items=Have("object", fields=CITATION)),
    "sources": Have("array", items=Have("object", fields=PAPER)), "grounded": BOOLEAN, "insufficient_evidence": BOOLEAN,
    "refused": BOOLEAN, "refusal_reason": Have("string", nullable=True, values=tuple(r.value for r in RefusalReason)),
    "refusal_explanation": Have("string", nullable=True), "warnings": STRINGS, "question": STRING, "model": STRING,
    "corpora": STRINGS, "did_you_mean": STRINGS,
})
# Constraints the service cannot promise its values meet.
UNPROMISED = ("pattern", "minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
              "exclusiveMaximum", "multipleOf", "const")


def _pointer(root: dict, ref: str) -> dict:
    """The schema a local `$ref` ("#/$defs/Citation") points at."""
    if not ref.startswith("#"):
        raise BadRequest(f"the schema's $ref {ref!r} is not local: only refs into the schema itself (#/$defs/...) are read")
    node: Any = root
    for part in [p.replace("~1", "/").replace("~0", "~") for p in ref[1:].split("/") if p]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        raise BadRequest(f"the schema's $ref {ref!r} points at nothing")
    return node


def resolve(schema: Any, root: dict) -> tuple[dict, bool]:
    """(the schema with $ref followed and a union with null unwrapped, whether null is allowed)."""
    nullable, seen = False, set()
    while True:
        if not isinstance(schema, dict):
            return {"type": "?"}, nullable
        nullable |= bool(schema.get("nullable"))
        rest = {k: v for k, v in schema.items() if k not in ("$ref", "anyOf", "oneOf", "allOf")}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref not in seen:
            seen.add(ref)
            schema = {**_pointer(root, ref), **rest}
            continue
        every = schema.get("allOf")
        union = schema.get("anyOf") or schema.get("oneOf") or (every if isinstance(every, list) and len(every) == 1 else None)
        if isinstance(union, list):
            options = [o for o in union if not (isinstance(o, dict) and o.get("type") == "null")]
            nullable |= len(options) < len(union)
            one = len(options) == 1 and isinstance(options[0], dict)
            schema = {**rest, **options[0]} if one else {**rest, "type": "choice"}
            continue
        kind = schema.get("type")
        if isinstance(kind, list):
            nullable |= "null" in kind
            kinds = [k for k in kind if k != "null"]
            schema = {**schema, "type": kinds[0] if len(kinds) == 1 else "choice"}
        return schema, nullable


def _kind(schema: dict) -> str | None:
    """The JSON type asked, None for any value."""
    return schema.get("type") or ("object" if "properties" in schema else "array" if "items" in schema else None)


def problems(schema: Any, have: Have, root: dict, path: str) -> list[str]:
    """What of `schema` the service cannot fill from `have`, each as `path (why)`."""
    schema, nullable = resolve(schema, root)
    kind = _kind(schema)
    where = path or "the schema"
    if kind is None and "enum" not in schema:
        return []  # any value will do
    if kind != have.kind and not (kind == "number" and have.kind == "integer"):
        return [f"{where} (asked as {kind or 'an enum'}, the service has {have.kind})"]
    if have.nullable and not nullable and (have.kind != "string" or "enum" in schema):
        return [f"{where} (not known for every answer: allow null)"]
    allowed = schema.get("enum")
    if allowed is not None and not (have.values and isinstance(allowed, list) and all(v in allowed for v in have.values)):
        return [f"{where} (its enum does not hold every value the service gives)"]
    bound = [key for key in UNPROMISED if key in schema]
    if bound:
        return [f"{where} ({bound[0]} cannot be promised)"]
    if kind == "array":
        return problems(schema.get("items", {}), have.items or STRING, root, f"{path}[]")
    if kind != "object":
        return []
    asked = schema.get("properties")
    if not isinstance(asked, dict) or not asked:
        return [f"{where} (an object with no named properties)"]
    found = []
    for name, sub in asked.items():
        inner = f"{path}.{name}" if path else name
        found += problems(sub, have.fields[name], root, inner) if name in have.fields else [f"{inner} (no such field)"]
    return found


def check(schema: Any, param: str) -> None:
    """A 400 naming every property the schema asks for that the service cannot fill, and what it can."""
    if not isinstance(schema, dict):
        raise BadRequest(f"'{param}' must be a JSON schema object", param=param)
    found = problems(schema, ANSWER, schema, "")
    if found:
        raise BadRequest(
            f"'{param}' asks for what the service cannot fill: {'; '.join(found)}. It can fill an object of "
            f"{', '.join(ANSWER.fields)}; citations with {', '.join(CITATION)}; sources with {', '.join(PAPER)}",
            code="unsupported_schema", param=param)


def fill(schema: Any, value: Any, root: dict) -> Any:
    """`value` in exactly the shape `schema` asks (checked first by `check`)."""
    schema, nullable = resolve(schema, root)
    kind = _kind(schema)
    if value is None:
        return None if nullable or kind != "string" else ""
    if kind == "object" and isinstance(value, dict):
        return {name: fill(sub, value.get(name), root) for name, sub in schema["properties"].items()}
    if kind == "array" and isinstance(value, list):
        return [fill(schema.get("items", {}), item, root) for item in value]
    return value


def answer_values(answer: Answer, papers: Mapping[str, Paper]) -> dict:
    """Every field the service can fill (ANSWER), for this answer; `papers` adds title, venue, year and URL."""
    def facts(paper_id: str) -> dict:
        paper = papers.get(paper_id)
        return {"title": paper.title if paper else "", "venue": paper.venue if paper else "",
                "url": paper.url if paper else "", "year": paper.year if paper else None}
    full = answer.to_dict()
    return {
        **{name: full[name] for name in ("answer", "grounded", "insufficient_evidence", "refusal_reason", "refusal_explanation",
                                         "warnings", "question", "model", "corpora", "did_you_mean")},
        "citations": [{**c.to_dict(), **facts(c.paper_id)} for c in answer.citations],
        "sources": [{**s.to_dict(), **facts(s.paper_id)} for s in answer.sources],
        "refused": answer.refusal_reason is not None,
    }
