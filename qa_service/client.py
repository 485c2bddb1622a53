"""A small client for a running qa-service, for Python users and `qa-service ask --server`."""

from __future__ import annotations

import time
from typing import Any

import requests

from .config import redact_url
from .errors import QAError
from .records import Answer


class QAClient:
    """`QAClient("http://127.0.0.1:8000").ask("What is RouterArena?")` -> the typed Answer."""

    def __init__(self, base_url: str = "http://127.0.0.1:8000", api_key: str | None = None, timeout: float = 120.0,
                 max_wait: float = 60.0):
        """`max_wait`: seconds in all this client will wait out a server's Retry-After (429, 503) per request."""
        self.base_url = base_url.rstrip("/")
        self.max_wait = max_wait
        self.shown_url = redact_url(self.base_url)  # messages never carry the URL's credentials
        self.timeout = timeout
        self.session = requests.Session()
        if api_key:
            self.session.headers["Authorization"] = f"Bearer {api_key}"

    def _post(self, path: str, payload: dict) -> dict:
        waited = 0.0
        while True:
            try:
                response = self.session.post(f"{self.base_url}{path}", json=payload, timeout=self.timeout)
            except requests.RequestException as exc:
                raise QAError(f"cannot reach qa-service at {self.shown_url} ({type(exc).__name__})", status=503, code="unreachable") from exc
            wait = _retry_after(response)
            if wait is None or waited + wait > self.max_wait:
                break
            time.sleep(wait)  # the server said when: a rate budget or a busy model slot frees up
            waited += wait
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            error = body.get("error", {}) if isinstance(body, dict) else {}
            raise QAError(
                error.get("message") or f"qa-service answered HTTP {response.status_code}",
                status=response.status_code, code=error.get("code", "http_error"),
            )
        if not isinstance(body, dict):
            raise QAError(f"qa-service at {self.shown_url} sent a reply that is not JSON", status=502, code="bad_reply")
        return body

    def ask(self, question: str, k: int | None = None, history: list[dict] | None = None, *,
            corpus: str | list[str] | None = None, filters: dict | None = None) -> Answer:
        """`corpus`: one name or a list (default every corpus); `filters`: {year, venue, author, keyword}."""
        payload: dict = {"question": question, **_scope(corpus, filters)}
        if k is not None:
            payload["k"] = k
        if history:
            payload["history"] = history
        body = self._post("/api/ask", payload)
        try:
            return Answer.from_dict(body)
        except (KeyError, TypeError, ValueError) as exc:
            raise QAError(f"qa-service at {self.shown_url} sent an answer we could not read ({exc!r})", status=502, code="bad_reply") from exc

    def search(self, question: str, k: int | None = None, *, corpus: str | list[str] | None = None,
               filters: dict | None = None) -> dict:
        payload: dict = {"question": question, **_scope(corpus, filters)}
        if k is not None:
            payload["k"] = k
        return self._post("/api/search", payload)


def _scope(corpus: str | list[str] | None, filters: dict | None) -> dict:
    """The body's corpus and filters, left out when not given (the server's defaults)."""
    return {**({"corpus": corpus} if corpus else {}), **({"filters": filters} if filters else {})}


def _retry_after(response: requests.Response) -> float | None:
    """Seconds to wait before asking again, when a 429 or 503 says so; None otherwise."""
    value = response.headers.get("Retry-After", "")
    if response.status_code not in (429, 503) or not value.strip().isdigit():
        return None
    return max(float(value), 0.1)
