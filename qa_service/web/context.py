"""What every route reads: the app's services, its metrics, and the JSON body."""

from __future__ import annotations

from contextlib import ExitStack

from flask import Response, current_app, g, request
from werkzeug.exceptions import RequestEntityTooLarge

from ..errors import BadRequest, QAError
from ..records import Answer
from ..service import Services


def services() -> Services:
    return current_app.extensions["qa"]


def read_store() -> None:
    """This request reads the store: hold the readers' lock until it ends (a stream included), or 503 while
    an ingest writes. Released by `release_store` at teardown."""
    if "qa_store" not in g:
        stack = ExitStack()
        stack.enter_context(services().reading())
        g.qa_store = stack


def stream_holding_store(response: Response) -> Response:
    """A stream reads the store after its view has returned (and after teardown has run once): the
    readers' lock goes with the response, released when the server closes it, finished or cut."""
    stack = g.pop("qa_store", None)
    if stack is not None:
        response.call_on_close(stack.close)
    return response


def release_store(_exc: BaseException | None = None) -> None:
    stack = g.pop("qa_store", None)
    if stack is not None:
        stack.close()


def observe(answer: Answer) -> None:
    current_app.extensions["qa_metrics"].observe_answer(answer)


def body_within_limit() -> None:
    """A chunked body (no Content-Length) is cut at max_body_bytes by werkzeug, and the cut read as JSON
    was a 400 'not valid JSON'; one that reaches the limit is a 413, as a declared length over it is."""
    data = request.get_data(cache=True)
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    if request.content_length is None and limit is not None and len(data) >= limit:
        raise RequestEntityTooLarge()


def json_body() -> dict:
    """The request's JSON object, or a 415/400 that says what was wrong."""
    if not request.is_json:
        raise QAError("send a JSON body with Content-Type: application/json", status=415, code="unsupported_media_type")
    body_within_limit()
    try:
        data = request.get_json(silent=True)
    except RecursionError:  # the parser recurses once per level; no body of ours is more than five deep
        raise BadRequest("the JSON body is nested too deeply; a request needs no more than five levels") from None
    if data is None:
        raise BadRequest("the body is not valid JSON")
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    return data
