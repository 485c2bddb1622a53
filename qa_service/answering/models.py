"""One small interface for answerers: the OpenAI-compatible client, the offline extractive
model, and a scripted fake for tests. The server connection, and the conversion of the SDK's
errors, is the provider's (providers.py), so a second backend reuses it."""

from __future__ import annotations

import time
from typing import Any, Iterator, Protocol, Sequence

from ..config import Settings
from ..errors import ModelError, ModelTimeout
from ..records import Completion, ModelRequest, Usage
from .providers import OpenAIProvider


class ChatModel(Protocol):
    name: str
    follows_instructions: bool  # reads the caller's instructions in the prompt (a language model does; a quoting one cannot)

    def complete(self, request: ModelRequest) -> Completion: ...

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """Text deltas, then one Usage."""
        ...


class OpenAIChatModel:
    """Chat completions from any OpenAI-compatible endpoint: the call and the reading of its reply. The
    connection (URL, key, HTTP client, retries, deadline, error conversion) is the provider's (providers.py)."""

    follows_instructions = True

    def __init__(self, settings: Settings, model: str | None = None, http_client: Any = None,
                 provider: OpenAIProvider | None = None):
        self.name = model or settings.model or settings.default_openai_model
        self.settings = settings
        self.provider = provider or OpenAIProvider(settings, http_client)
        self.shown_url = self.provider.shown_url

    def _convert(self, exc: Exception) -> ModelError:
        return self.provider.convert(exc, self.name)

    def complete(self, request: ModelRequest) -> Completion:
        with self.provider.slot():
            return self._complete(request)

    def _complete(self, request: ModelRequest) -> Completion:
        reply = self.provider.call(self.name, lambda client: client.chat.completions.create(
            model=self.name, messages=request.messages, max_tokens=request.max_tokens, temperature=0))
        try:
            text = reply.choices[0].message.content
        except self.provider.failures as exc:
            raise self._convert(exc) from exc
        if not isinstance(text, str):
            raise ModelError(f"the model server at {self.shown_url} sent no answer text")
        usage = getattr(reply, "usage", None)
        return Completion(text, Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """Deltas as they come, holding one model slot until the stream ends or is closed."""
        with self.provider.slot():
            yield from self._stream(request)

    def _stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """The deadline covers the whole stream; retries only before the first byte. A stream that
        ends without a finish reason was cut, and is an error, never an answer."""
        usage = Usage()
        end = time.monotonic() + self.settings.model_deadline
        chunks = self.provider.call(self.name, lambda client: client.chat.completions.create(
            model=self.name, messages=request.messages, max_tokens=request.max_tokens, temperature=0,
            stream=True, stream_options={"include_usage": True}))
        finished = False
        try:
            for chunk in chunks:
                if getattr(chunk, "usage", None):
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices or []:
                    finished = finished or bool(choice.finish_reason)
                    if choice.delta and choice.delta.content:
                        yield choice.delta.content
                if time.monotonic() > end:
                    raise ModelTimeout(f"the model server at {self.shown_url} did not finish within {self.settings.model_deadline:g} s")
        except self.provider.failures as exc:
            raise self._convert(exc) from exc
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()  # give the connection back, also when the client went away mid-answer
        if not finished:
            raise ModelError(f"the model server at {self.shown_url} closed the stream before the answer was complete")
        yield usage


class FakeModel:
    """Replays scripted replies and records every request, so tests assert what the model saw."""

    follows_instructions = True

    def __init__(self, replies: Sequence[str | Exception] = (), name: str = "fake"):
        self.name = name
        self.replies: list[str | Exception] = list(replies)
        self.requests: list[ModelRequest] = []

    def enqueue(self, *replies: str | Exception) -> None:
        self.replies.extend(replies)

    def _next(self, request: ModelRequest) -> str:
        self.requests.append(request)
        if not self.replies:
            raise AssertionError("FakeModel got a request with no reply queued")
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    def complete(self, request: ModelRequest) -> Completion:
        text = self._next(request)
        return Completion(text, Usage(7, len(text.split())))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        text = self._next(request)
        for word in text.split(" "):
            yield word + " "
        yield Usage(7, len(text.split()))
