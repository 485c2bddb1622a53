"""qa-service: cited question answering over ICLR 2026 paper abstracts."""

__version__ = "0.1.0"
