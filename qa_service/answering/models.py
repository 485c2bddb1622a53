"""One small interface for answerers: the OpenAI-compatible client, the offline extractive
model, and a scripted fake for tests. Library errors are converted here, once."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Protocol, Sequence, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ..config import Settings, redact_url
from ..errors import ConfigError, ModelBusy, ModelError, ModelTimeout
from ..records import Completion, ModelRequest, Usage

T = TypeVar("T")


class ChatModel(Protocol):
    name: str
    follows_instructions: bool  # reads the caller's instructions in the prompt (a language model does; a quoting one cannot)

    def complete(self, request: ModelRequest) -> Completion: ...

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """Text deltas, then one Usage."""
        ...


def endpoint(url: str, has_key: bool, shown: str) -> tuple[str | None, dict[str, str]]:
    """OPENAI_BASE_URL as the SDK needs it: a query (Azure's `?api-version=...`) goes with every request
    (the SDK appended the path after it: `/v1/?api-version=1chat/completions`). Credentials in the URL
    are sent as Basic auth, which replaces the API key's Bearer header: with a key too, that is refused."""
    if not url:
        return None, {}
    parts = urlsplit(url)
    if (parts.username or parts.password) and has_key:
        raise ConfigError(f"OPENAI_BASE_URL ({shown}) holds credentials and an API key is set too: the SDK would send the "
                          f"URL's as Basic auth instead of the key; keep one (the key in OPENAI_API_KEY, or user:password in the URL)")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), dict(parse_qsl(parts.query, keep_blank_values=True))


class OpenAIChatModel:
    """Any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp) via the openai SDK."""

    follows_instructions = True

    def __init__(self, settings: Settings, model: str | None = None, http_client: Any = None):
        import openai

        self.name = model or settings.model or settings.default_openai_model
        self._openai = openai
        self.shown_url = redact_url(settings.openai_base_url or "https://api.openai.com/v1")  # every message uses this one
        self.settings = settings
        self._slots = threading.BoundedSemaphore(max(1, settings.model_concurrency))
        base_url, query = endpoint(settings.openai_base_url, bool(settings.openai_api_key), self.shown_url)
        self.client = openai.OpenAI(  # retries are ours, under one deadline (see _within_deadline)
            api_key=settings.openai_api_key or "not-needed",
            base_url=base_url,
            default_query=query or None,
            timeout=settings.model_timeout,
            max_retries=0,
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

    @contextmanager
    def _slot(self) -> Iterator[None]:
        """At most `model_concurrency` calls at once: a hung model server then holds that many request
        threads, never all of them, so health checks, search and the page keep answering."""
        if not self._slots.acquire(timeout=self.settings.model_queue_wait):
            raise ModelBusy(f"{self.settings.model_concurrency} questions are already waiting for the model; try again shortly")
        try:
            yield
        finally:
            self._slots.release()

    def _retryable(self, exc: Exception) -> bool:
        o = self._openai
        return isinstance(exc, (o.APIConnectionError, o.RateLimitError, o.InternalServerError)) or (
            isinstance(exc, o.APIStatusError) and exc.status_code >= 500)

    def _within_deadline(self, call: Callable[[Any], T]) -> T:
        """`call(client)` with retries and backoff, all inside one `model_deadline`: each attempt gets
        what is left (at most `model_timeout`), so a hung server costs the deadline, not attempts x timeout."""
        s = self.settings
        end = time.monotonic() + s.model_deadline
        attempt = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise ModelTimeout(f"the model server at {self.shown_url} did not answer within {s.model_deadline:g} s")
            try:
                return call(self.client.with_options(timeout=min(s.model_timeout, left)))
            except self._failures as exc:
                if attempt >= s.model_retries or not self._retryable(exc):
                    raise self._convert(exc) from exc
                wait = min(0.5 * 2 ** attempt, max(0.0, end - time.monotonic()))
                retry_after = getattr(getattr(exc, "response", None), "headers", {}).get("retry-after", "")
                if retry_after.replace(".", "", 1).isdigit():
                    wait = min(float(retry_after), max(0.0, end - time.monotonic()))
                time.sleep(wait)
                attempt += 1
                if time.monotonic() >= end:
                    raise self._convert(exc) from exc

    def complete(self, request: ModelRequest) -> Completion:
        with self._slot():
            return self._complete(request)

    def _complete(self, request: ModelRequest) -> Completion:
        reply = self._within_deadline(lambda client: client.chat.completions.create(
            model=self.name, messages=request.messages, max_tokens=request.max_tokens, temperature=0))
        try:
            text = reply.choices[0].message.content
        except self._failures as exc:
            raise self._convert(exc) from exc
        if not isinstance(text, str):
            raise ModelError(f"the model server at {self.shown_url} sent no answer text")
        usage = getattr(reply, "usage", None)
        return Completion(text, Usage(getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0))

    def stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """Deltas as they come, holding one model slot until the stream ends or is closed."""
        with self._slot():
            yield from self._stream(request)

    def _stream(self, request: ModelRequest) -> Iterator[str | Usage]:
        """The deadline covers the whole stream; retries only before the first byte. A stream that
        ends without a finish reason was cut, and is an error, never an answer."""
        usage = Usage()
        end = time.monotonic() + self.settings.model_deadline
        chunks = self._within_deadline(lambda client: client.chat.completions.create(
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
        except self._failures as exc:
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
