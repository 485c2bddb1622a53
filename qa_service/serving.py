"""Run the app under gunicorn (the production server), configured from our settings."""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

from .config import Settings
from .web import create_app


class _Gunicorn(BaseApplication):
    def __init__(self, settings: Settings, options: dict[str, Any]):
        self.settings = settings
        self.options = options
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        return create_app(self.settings)


def run_gunicorn(settings: Settings, host: str, port: int, threads: int = 4) -> None:
    """One worker process: an embedded Chroma store must not be opened by several processes."""
    options = {
        "bind": f"{host}:{port}",
        "workers": 1,
        "threads": threads,
        "worker_class": "gthread",
        "timeout": int(settings.model_timeout) + 30,
        "accesslog": "-",
    }
    _Gunicorn(settings, options).run()
