"""The connection to a model server, apart from what is asked of it (as pydantic-ai splits provider and model).

`OpenAIProvider` holds what every backend speaking the OpenAI protocol needs: the base URL and key,
the SDK client over one HTTP client, a bound on calls at once, retries with backoff (honouring
Retry-After) inside one deadline, and the SDK's errors converted to ours, once. A model
(models.py) holds only the call: what to send and how to read the reply.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ..config import Settings, redact_url
from ..errors import ConfigError, ModelBusy, ModelError, ModelTimeout

T = TypeVar("T")


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


class OpenAIProvider:
    """An OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp) reached through the openai SDK."""

    def __init__(self, settings: Settings, http_client: Any = None):
        import openai

        self._openai = openai
        self.settings = settings
        self.shown_url = redact_url(settings.openai_base_url or "https://api.openai.com/v1")  # every message uses this one
        self._slots = threading.BoundedSemaphore(max(1, settings.model_concurrency))
        base_url, query = endpoint(settings.openai_base_url, bool(settings.openai_api_key), self.shown_url)
        self.client = openai.OpenAI(  # retries are ours, under one deadline (see call)
            api_key=settings.openai_api_key or "not-needed",
            base_url=base_url,
            default_query=query or None,
            timeout=settings.model_timeout,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def failures(self) -> tuple[type[Exception], ...]:
        """What a call can raise: the SDK's errors, and a reply shaped unlike a completion."""
        return (self._openai.OpenAIError, AttributeError, IndexError, KeyError, TypeError, ValueError)

    def convert(self, exc: Exception, model: str) -> ModelError:
        """SDK errors to ours, with a plain message and never the key or the URL's credentials."""
        o = self._openai
        where = f"the model server at {self.shown_url}"
        if isinstance(exc, o.APITimeoutError):
            return ModelTimeout(f"{where} did not answer in time")
        if isinstance(exc, o.AuthenticationError):
            return ModelError(f"{where} rejected the API key (401); check OPENAI_API_KEY")
        if isinstance(exc, o.PermissionDeniedError):
            return ModelError(f"{where} refused access to model {model!r} (403)")
        if isinstance(exc, o.NotFoundError):
            return ModelError(f"{where} does not know model {model!r} (404); check QA_MODEL")
        if isinstance(exc, o.RateLimitError):
            return ModelError(f"{where} is rate limiting us (429), still after retries; try again later")
        if isinstance(exc, o.APIStatusError):
            return ModelError(f"{where} failed with HTTP {exc.status_code}, still after retries")
        if isinstance(exc, o.APIConnectionError):
            return ModelError(f"cannot reach {where}")
        return ModelError(f"{where} sent a reply we could not read ({type(exc).__name__})")

    @contextmanager
    def slot(self) -> Iterator[None]:
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

    def call(self, model: str, request: Callable[[Any], T]) -> T:
        """`request(client)` with retries and backoff, all inside one `model_deadline`: each attempt gets
        what is left (at most `model_timeout`), so a hung server costs the deadline, not attempts x timeout."""
        s = self.settings
        end = time.monotonic() + s.model_deadline
        attempt = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise ModelTimeout(f"the model server at {self.shown_url} did not answer within {s.model_deadline:g} s")
            try:
                return request(self.client.with_options(timeout=min(s.model_timeout, left)))
            except self.failures as exc:
                if attempt >= s.model_retries or not self._retryable(exc):
                    raise self.convert(exc, model) from exc
                wait = min(0.5 * 2 ** attempt, max(0.0, end - time.monotonic()))
                retry_after = getattr(getattr(exc, "response", None), "headers", {}).get("retry-after", "")
                if retry_after.replace(".", "", 1).isdigit():
                    wait = min(float(retry_after), max(0.0, end - time.monotonic()))
                time.sleep(wait)
                attempt += 1
                if time.monotonic() >= end:
                    raise self.convert(exc, model) from exc
