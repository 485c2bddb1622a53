"""qa-service: cited question answering over paper abstracts.

In-process, without a server::

    from qa_service import open_service
    service = open_service("data")              # the data dir `qa-service ingest` wrote
    answer = service.ask("What is RouterArena?")  # a typed Answer: answer, citations, sources, ...

Over HTTP, from another process: ``QAClient("http://127.0.0.1:8000")`` with ask, stream,
search, papers, paper and info.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

# What `from qa_service import ...` offers, and the module each lives in. They are imported on first
# use, so that importing one small module (qa_service.config, the CLI's --version) does not load
# chromadb and onnxruntime.
_EXPORTS = {
    "open_service": "service", "Services": "service", "QAClient": "client",
    "Answer": "records", "Citation": "records", "SourceRef": "records", "Paper": "records",
    "Sources": "records", "Delta": "records", "Final": "records", "ServiceInfo": "records",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
