"""The one server-sent-events writer, used by /api/ask/stream and /v1/chat/completions.

Retrieval runs before the response starts (its errors are plain HTTP errors); after
that, every stream ends with an event: the answer, or an error, never a silent cut.
"""

from __future__ import annotations

import logging
from typing import Callable, Iterator

from flask import Response, stream_with_context

from ..errors import QAError
from ..records import Answer, Final, StreamEvent

log = logging.getLogger(__name__)

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def event_stream(
    events: Iterator[StreamEvent],
    write: Callable[[StreamEvent], str],
    fail: Callable[[QAError], str],
    on_final: Callable[[Answer], None],
    prefix: str = "",
    done: str = "",
) -> Response:
    """An SSE response: `prefix`, each event through `write`, an error through `fail`, then `done`."""
    first = next(events)  # retrieval runs here

    def generate() -> Iterator[str]:
        if prefix:
            yield prefix
        try:
            for event in _chain(first, events):
                if isinstance(event, Final):
                    on_final(event.answer)
                yield write(event)
        except QAError as exc:
            yield fail(exc)
        except Exception:  # the stream must end with an event, never hang or cut silently
            log.exception("stream failed")
            yield fail(QAError("internal error; see the server log"))
        if done:
            yield done

    return Response(stream_with_context(generate()), mimetype="text/event-stream", headers=HEADERS)


def _chain(first: StreamEvent, rest: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    yield first
    yield from rest
