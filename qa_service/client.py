"""A small client for a running qa-service, for Python users and `qa-service ask --server`.

Every method returns the typed records the server is built from (Answer, Paper, the stream
events), never the JSON dicts."""

from __future__ import annotations

import json
import time
from typing import Any, Iterator
from urllib.parse import quote

import requests

from .config import redact_url
from .errors import QAError
from .records import Answer, Delta, Final, Paper, ServiceInfo, SourceRef, Sources, StreamEvent


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

    def _send(self, method: str, path: str, payload: dict | None = None, params: dict | None = None,
              stream: bool = False) -> requests.Response:
        """One request, waiting out a 429's or 503's Retry-After within max_wait; an HTTP error raises QAError."""
        waited = 0.0
        while True:
            try:
                response = self.session.request(method, f"{self.base_url}{path}", json=payload, params=params,
                                                timeout=self.timeout, stream=stream)
            except requests.RequestException as exc:
                raise QAError(f"cannot reach qa-service at {self.shown_url} ({type(exc).__name__})", status=503, code="unreachable") from exc
            wait = _retry_after(response)
            if wait is None or waited + wait > self.max_wait:
                break
            response.close()
            time.sleep(wait)  # the server said when: a rate budget or a busy model slot frees up
            waited += wait
        if response.status_code >= 400:
            error = _json(response)
            error = error.get("error", {}) if isinstance(error, dict) else {}
            raise QAError(
                error.get("message") or f"qa-service answered HTTP {response.status_code}",
                status=response.status_code, code=error.get("code", "http_error"),
            )
        return response

    def _json(self, method: str, path: str, payload: dict | None = None, params: dict | None = None) -> dict:
        body = _json(self._send(method, path, payload, params))
        if not isinstance(body, dict):
            raise QAError(f"qa-service at {self.shown_url} sent a reply that is not JSON", status=502, code="bad_reply")
        return body

    def _post(self, path: str, payload: dict) -> dict:
        return self._json("POST", path, payload)

    def _typed(self, make: Any, body: Any) -> Any:
        try:
            return make(body)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise QAError(f"qa-service at {self.shown_url} sent a reply we could not read ({exc!r})", status=502, code="bad_reply") from exc

    def ask(self, question: str, k: int | None = None, history: list[dict] | None = None, *,
            corpus: str | list[str] | None = None, filters: dict | None = None) -> Answer:
        """The cited answer (or the refusal, with its reason). `corpus`: one name or a list (default every
        corpus); `filters`: {year, venue, author, keyword}."""
        return self._typed(Answer.from_dict, self._post("/api/ask", _question(question, k, history, corpus, filters)))

    def stream(self, question: str, k: int | None = None, history: list[dict] | None = None, *,
               corpus: str | list[str] | None = None, filters: dict | None = None) -> Iterator[StreamEvent]:
        """The answer as it is written: Sources once retrieval is done, Delta pieces, then one Final
        with the checked Answer. A failure midway (the server's `error` event) raises QAError."""
        response = self._send("POST", "/api/ask/stream", _question(question, k, history, corpus, filters), stream=True)
        with response:
            try:
                for name, data in _server_events(response):
                    if name == "error":
                        error = data.get("error", {}) if isinstance(data, dict) else {}
                        raise QAError(error.get("message") or "the answer stream failed", status=502, code=error.get("code", "stream_error"))
                    event = self._typed(lambda d: _stream_event(name, d), data)
                    if event is not None:
                        yield event
            except (requests.RequestException, ValueError) as exc:  # cut off, or not JSON
                raise QAError(f"the answer stream from {self.shown_url} broke off ({type(exc).__name__})", status=502, code="bad_reply") from exc

    def search(self, question: str, k: int | None = None, *, corpus: str | list[str] | None = None,
               filters: dict | None = None) -> dict:
        return self._post("/api/search", _question(question, k, None, corpus, filters))

    def papers(self, q: str = "") -> list[Paper]:
        """Every paper (id, label, title, year; no text), or those whose id, label, title or abstract holds `q`."""
        body = self._json("GET", "/api/papers", params={"q": q} if q else None)
        return self._typed(lambda b: [Paper.from_dict(p) for p in b["papers"]], body)

    def paper(self, paper_id: str) -> Paper:
        """One paper whole: abstract, cleaned text, title, authors, year, venue, url, keywords."""
        return self._typed(Paper.from_dict, self._json("GET", f"/api/papers/{quote(paper_id, safe='/:+')}"))

    def info(self) -> ServiceInfo:
        """What answers (the model), over which corpus, and the limits a question must keep."""
        return self._typed(ServiceInfo.from_dict, self._json("GET", "/api/info"))


def _question(question: str, k: int | None, history: list[dict] | None,
              corpus: str | list[str] | None = None, filters: dict | None = None) -> dict:
    payload: dict = {"question": question, **_scope(corpus, filters)}
    if k is not None:
        payload["k"] = k
    if history:
        payload["history"] = history
    return payload


def _json(response: requests.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _server_events(response: requests.Response) -> Iterator[tuple[str, Any]]:
    """(event name, parsed data) for each server-sent event of the response."""
    name, data = "message", []
    for line in response.iter_lines(decode_unicode=True):
        if line:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
            continue
        if data:
            yield name, json.loads("\n".join(data))
        name, data = "message", []
    if data:
        yield name, json.loads("\n".join(data))


def _stream_event(name: str, data: dict) -> StreamEvent | None:
    """A server-sent event as the typed event the server wrote; an event this client does not know is skipped."""
    if name == "sources":
        return Sources(str(data["question"]), [SourceRef.from_dict(s) for s in data["sources"]])
    if name == "delta":
        return Delta(str(data["text"]))
    if name == "final":
        return Final(Answer.from_dict(data))
    return None


def _scope(corpus: str | list[str] | None, filters: dict | None) -> dict:
    """The body's corpus and filters, left out when not given (the server's defaults)."""
    return {**({"corpus": corpus} if corpus else {}), **({"filters": filters} if filters else {})}


def _retry_after(response: requests.Response) -> float | None:
    """Seconds to wait before asking again, when a 429 or 503 says so; None otherwise."""
    value = response.headers.get("Retry-After", "")
    if response.status_code not in (429, 503) or not value.strip().isdigit():
        return None
    return max(float(value), 0.1)
