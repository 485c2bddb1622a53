"""Errors that carry an HTTP status and a message meant for the user."""

from __future__ import annotations


class QAError(Exception):
    """Base error: `status` for HTTP, `code` for machines, `message` for people."""

    status = 500
    code = "internal_error"
    retry_after: int | None = None  # seconds, sent as Retry-After when set

    param: str | None = None  # the request field at fault, when there is one (OpenAI's error shape names it)

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None, param: str | None = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if code is not None:
            self.code = code
        if param is not None:
            self.param = param

    def to_dict(self) -> dict:
        return {"error": {"code": self.code, "message": self.message}}

    def headers(self) -> dict[str, str]:
        """Response headers the error needs (Retry-After when there is a time to retry at)."""
        return {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}


class BadRequest(QAError):
    status = 400
    code = "bad_request"


class PayloadTooLarge(QAError):
    status = 413
    code = "payload_too_large"


class NotFound(QAError):
    status = 404
    code = "not_found"


class NotIndexed(QAError):
    """No index yet, or it cannot be opened: the service is not ready."""

    status = 503
    code = "not_indexed"


class CorpusError(QAError):
    """Input files that cannot be read; names the file and line."""

    status = 400
    code = "bad_corpus"


class ConfigError(QAError):
    status = 500
    code = "bad_config"


class EmbeddingMismatch(QAError):
    """The index was built with another embedding model than the one configured."""

    status = 503
    code = "embedding_mismatch"


class ModelError(QAError):
    """The language model failed; never carries the API key."""

    status = 502
    code = "model_error"


class ModelBusy(QAError):
    """Every model slot of this process is taken: try again shortly (the health routes stay up)."""

    status = 503
    code = "model_busy"
    retry_after = 2


class ModelTimeout(ModelError):
    status = 504
    code = "model_timeout"
