"""Who may call, how often, from which origins; request ids and the access log.

The API key (QA_API_KEY) guards /api/* and /v1/*, /api/info included (it names the model and the
index); the page itself and /healthz, /readyz stay open so that the page loads and asks for the key
when /api/info answers 401, and a load balancer can probe.
"""

from __future__ import annotations

import hmac
import logging
import re
import time
import uuid

from flask import Flask, Response, g, request
from flask_limiter import ApplicationLimit, Limiter
from flask_limiter.util import get_remote_address
from limits import parse_many
from limits.errors import ConfigurationError
from limits.storage import storage_from_string
from werkzeug.middleware.proxy_fix import ProxyFix

from ..config import Settings, redact_url, redact_urls
from ..errors import ConfigError, QAError

log = logging.getLogger("qa_service.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
PROTECTED = ("/api/", "/v1/")
OPEN: tuple[str, ...] = ()  # every /api/ and /v1/ route needs the key; the page learns it needs one from a 401
ANSWER_ROUTES = frozenset({"/api/ask", "/api/ask/stream", "/v1/chat/completions"})  # each answer is a model call


def printable(text: str) -> str:
    """Control, format and line-separator characters escaped (\\n, \\x1b, \\u2028), so that one record
    stays one log line: a path with %0a, %0d, U+2028 or an ANSI escape cannot forge or hide a line.
    Backslashes stay as they are, so that escaping twice (access log, then formatter) changes nothing."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class Unauthorized(QAError):
    """401 with the RFC 6750 challenge that says how to authenticate, and why this attempt failed."""

    status = 401
    code = "unauthorized"

    def __init__(self, message: str, *, error: str = "", code: str | None = None):
        super().__init__(message, code=code)
        self.challenge = 'Bearer realm="qa-service"' + (f', error="{error}"' if error else "")

    def headers(self) -> dict[str, str]:
        return {"WWW-Authenticate": self.challenge}


def _check_key(settings: Settings) -> None:
    """No key, a header that is not 'Bearer <key>', and a wrong key each get their own message."""
    if not settings.api_key or request.method == "OPTIONS":
        return
    if not request.path.startswith(PROTECTED) or request.path in OPEN:
        return
    header = request.headers.get("Authorization")
    if header is None:
        raise Unauthorized("this service needs an API key: send it as 'Authorization: Bearer <key>'")
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise Unauthorized("the Authorization header must be 'Bearer <key>'", error="invalid_request")
    if not hmac.compare_digest(given.strip().encode(), settings.api_key.encode()):
        raise Unauthorized("the API key is not valid: send the key the server was started with (QA_API_KEY)",
                           error="invalid_token", code="invalid_api_key")


def _cors(response: Response, settings: Settings) -> Response:
    origin = request.headers.get("Origin")
    allowed = [o.strip() for o in settings.cors_origins.split(",") if o.strip()]
    if origin and origin in allowed:
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
        response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
        response.headers["Vary"] = "Origin"
    return response


def check_proxy_hops(settings: Settings) -> None:
    """A negative count of proxies means nothing: refuse it at start rather than guess which address to trust."""
    if settings.proxy_hops < 0:
        raise ConfigError(f"proxy_hops must be 0 (no reverse proxy: X-Forwarded-For is ignored) or how many reverse proxies "
                          f"of yours sit in front of the service (1 for one nginx), got {settings.proxy_hops}")


def trust_proxies(app: Flask, settings: Settings) -> None:
    """Behind proxy_hops proxies of ours, the client is the address the outermost one put in X-Forwarded-For.

    Only X-Forwarded-For: no response links to the app by its host or scheme, so X-Forwarded-Proto, -Host,
    -Port and -Prefix would gain nothing and let whatever passes them through reach werkzeug's one absolute
    URL (a 308 for a doubled slash). Wrapping wsgi_app serves gunicorn and the test client alike.
    """
    check_proxy_hops(settings)
    if settings.proxy_hops:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.proxy_hops, x_proto=0, x_host=0, x_port=0, x_prefix=0)  # type: ignore[method-assign]


def init_app(app: Flask, settings: Settings) -> Limiter | None:
    """Wire the client's address behind proxies, request ids, the key check, CORS and (when configured) rate limits."""
    trust_proxies(app, settings)

    @app.before_request
    def start() -> None:
        given = request.headers.get("X-Request-ID", "")
        g.request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex[:16]
        g.started = time.perf_counter()
        _check_key(settings)

    @app.after_request
    def finish(response: Response) -> Response:
        response.headers["X-Request-ID"] = g.get("request_id", "-")
        elapsed = (time.perf_counter() - g.get("started", time.perf_counter())) * 1000
        method, path = printable(request.method), printable(request.path)  # both come from the client
        log.info(
            "%s %s %s %.1fms", method, path, response.status_code, elapsed,
            extra={"request_id": g.get("request_id", "-"), "path": path, "status": response.status_code, "ms": round(elapsed, 1)},
        )
        return _cors(response, settings)

    check_rate_limits(settings)
    limits = _budgets(settings)
    if not limits:
        return None

    @app.after_request  # registered before the limiter's own, so it runs after it
    def retry_after_only_on_429(response: Response) -> Response:
        """flask-limiter sends Retry-After with every response (and stretches ours to its window); it means
        'you were refused', so a 429 keeps the limiter's, an error of ours (503 store_busy, model_busy) its own."""
        if response.status_code != 429:
            response.headers.pop("Retry-After", None)
            if g.get("retry_after"):
                response.headers["Retry-After"] = str(g.retry_after)
        return response

    try:
        return Limiter(get_remote_address, app=app, application_limits=[*limits], storage_uri=settings.rate_limit_storage,
                       headers_enabled=True, in_memory_fallback_enabled=True)  # a shared store down: count per process meanwhile
    except ConfigurationError as exc:
        raise storage_error(settings, exc) from exc


def storage_error(settings: Settings, exc: Exception) -> ConfigError:
    return ConfigError(
        f"rate_limit_storage {redact_url(settings.rate_limit_storage)!r} cannot be used ({redact_urls(str(exc))}); use memory:// (counters per "
        f"process) or redis://host:port (one budget shared by every process and machine; needs `pip install redis`)"
    )


RATE_SYNTAX = "N per second|minute|hour|day|month|year (several separated by ';', as '5 per second; 300 per minute')"


def check_rate_limits(settings: Settings) -> None:
    """An unparseable budget is refused at start in one line; before, every route answered 500 with a traceback."""
    for name, value in (("rate_limit", settings.rate_limit), ("answer_rate_limit", settings.answer_rate_limit)):
        if not value.strip():
            continue
        try:
            items = parse_many(value)
        except ValueError:
            items = []
        if not items or any(item.amount < 1 or item.multiples < 1 for item in items):
            raise ConfigError(f"{name} (QA_{name.upper()}) {value!r} is not a rate limit: write {RATE_SYNTAX}, "
                              f"or leave it empty to turn the budget off")


def check_storage(settings: Settings) -> None:
    """Refuse an unusable rate-limit storage at start, with what to do, not as a traceback in each worker."""
    if not (settings.rate_limit or settings.answer_rate_limit) or settings.rate_limit_storage.startswith("memory://"):
        return
    try:
        storage_from_string(settings.rate_limit_storage)
    except ConfigurationError as exc:
        raise storage_error(settings, exc) from exc


def _is_limited() -> bool:
    return request.path.startswith(PROTECTED)


def _is_answer() -> bool:
    return request.url_rule is not None and request.url_rule.rule in ANSWER_ROUTES


def _budgets(settings: Settings) -> list[ApplicationLimit]:
    """Two budgets per client (its address), each shared by its routes rather than counted per route.

    The answer budget comes first: its headers are the ones an answer route reports, and a
    refused answer then does not spend the general budget too.
    """
    budgets = []
    if settings.answer_rate_limit:
        budgets.append(ApplicationLimit(
            settings.answer_rate_limit, scope="answers", exempt_when=lambda: not _is_answer(),
            error_message=f"this client has used its answer budget ({settings.answer_rate_limit}, shared by /api/ask, "
                          "/api/ask/stream and /v1/chat/completions): retry after Retry-After seconds, or raise the setting "
                          "answer_rate_limit (QA_ANSWER_RATE_LIMIT; empty turns it off) for scripts and evaluations"))
    if settings.rate_limit:
        budgets.append(ApplicationLimit(
            settings.rate_limit, scope="client", exempt_when=lambda: not _is_limited(),
            error_message=f"this client has used its request budget ({settings.rate_limit}, shared by all /api and /v1 routes): "
                          "retry after Retry-After seconds, or raise the setting rate_limit (QA_RATE_LIMIT; empty turns it off)"))
    return budgets
