"""Errors that carry an HTTP status and a message meant for the user."""

from __future__ import annotations


class QAError(Exception):
    """Base error: `status` for HTTP, `code` for machines, `message` for people."""

    status = 500
    code = "internal_error"
    exit_code = 1  # what the command line exits with
    retry_after = 0  # seconds a client should wait before retrying (HTTP Retry-After); 0: no header

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
        return {"Retry-After": str(self.retry_after)} if self.retry_after else {}


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


class StoreBusy(QAError):
    """Another process is writing the data dir: a reader answers 503 at once, a second writer gives up."""

    status = 503
    code = "store_busy"
    exit_code = 75  # EX_TEMPFAIL: try again later
    retry_after = 1


class StoreDamaged(QAError):
    """A stored part is unreadable or disagrees with the rest; the message names it and the repairing command."""

    status = 503
    code = "store_damaged"


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
