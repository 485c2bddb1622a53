"""One small interface for answerers: the OpenAI-compatible client, the offline extractive
model, and a scripted fake for tests. Library errors are converted here, once."""

from __future__ import annotations

from typing import Any, Iterator, Protocol, Sequence

from .config import Settings, redact_url
from .errors import ModelError, ModelTimeout
from .records import Completion, ModelRequest, Usage


class ChatModel(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> Completion: ...

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """Text deltas, then one Usage."""
        ...


class OpenAIChatModel:
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp) via the openai SDK."""

    def __init__(self, settings: Settings, model: str | None = None, http_client: Any = None):
        import openai

        self.name = model or settings.model or settings.default_openai_model
        self._openai = openai
        self.shown_url = redact_url(settings.openai_base_url or "https://api.openai.com/v1")  # every message uses this one
        self.client = openai.OpenAI(
            api_key=settings.openai_api_key or "not-needed",
            base_url=settings.openai_base_url or None,
            timeout=settings.model_timeout,
            max_retries=settings.model_retries,
            http_client=http_client,
        )

    @property
    def _failures(self) -> tuple[type[Exception], ...]:
        """What a call can raise: the SDK's errors, and a reply shaped unlike a completion."""
        return (self._openai.OpenAIError, AttributeError, IndexError, KeyError, TypeError, ValueError)

    def _convert(self, exc: Exception) -> ModelError:
        """SDK errors to ours, with a plain message and never the key or the URL's credentials."""
        o = self._openai
        where = f"the model server at {self.shown_url}"
        if isinstance(exc, o.APITimeoutError):
            return ModelTimeout(f"{where} did not answer in time")
        if isinstance(exc, o.AuthenticationError):
            return ModelError(f"{where} rejected the API key (401); check OPENAI_API_KEY")
        if isinstance(exc, o.PermissionDeniedError):
            return ModelError(f"{where} refused access to model {self.name!r} (403)")
        if isinstance(exc, o.NotFoundError):
            return ModelError(f"{where} does not know model {self.name!r} (404); check QA_MODEL")
        if isinstance(exc, o.RateLimitError):
            return ModelError(f"{where} is rate limiting us (429), still after retries; try again later")
        if isinstance(exc, o.APIStatusError):
            return ModelError(f"{where} failed with HTTP {exc.status_code}, still after retries")
        if isinstance(exc, o.APIConnectionError):
            return ModelError(f"cannot reach {where}")
        return ModelError(f"{where} sent a reply we could not read ({type(exc).__name__})")

    def complete(self, request: ModelRequest) -> Completion:
        try:
            reply = self.client.chat.completions.create(
                model=self.name, messages=request.messages, max_tokens=request.max_tokens, temperature=0
            )
            text = reply.choices[0].message.content
        except self._failures as exc:
            raise self._convert(exc) from exc
        if not isinstance(text, str):
            raise ModelError(f"the model server at {self.shown_url} sent no answer text")
        usage = getattr(reply, "usage", None)
        return Completion(text, Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        usage = Usage()
        try:
            chunks = self.client.chat.completions.create(
                model=self.name, messages=request.messages, max_tokens=request.max_tokens, temperature=0,
                stream=True, stream_options={"include_usage": True},
            )
            for chunk in chunks:
                if getattr(chunk, "usage", None):
                    usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
                for choice in chunk.choices or []:
                    if choice.delta and choice.delta.content:
                        yield choice.delta.content
        except self._failures as exc:
            raise self._convert(exc) from exc
        yield usage


class FakeModel:
    """Replays scripted replies and records every request, so tests assert what the model saw."""

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
