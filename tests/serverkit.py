"""A production server (`qa-service serve`, gunicorn) on loopback: a free port, a start, and the wait for it.

Shared by the tests and the benchmarks (bench/common.py imports it), so both start the server one way.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def until(condition, seconds: float = 30.0) -> bool:
    """Poll until `condition()` holds (True), or give up after `seconds` (False)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(data_dir: str, extra_env: dict | None = None, threads: int = 8) -> tuple[subprocess.Popen, str, float]:
    """`qa-service serve` (gunicorn) on 127.0.0.1; returns the process, its URL and seconds until /healthz answered."""
    port = free_port()
    env = {**os.environ, "QA_DATA_DIR": data_dir, "QA_RATE_LIMIT": "", "QA_ANSWER_RATE_LIMIT": "", **(extra_env or {})}
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port), "--threads", str(threads)],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, "/healthz", process)
    return process, url, time.perf_counter() - started


def wait_until_up(url: str, path: str, process: subprocess.Popen, seconds: float = 60.0) -> None:
    """Poll url+path until it answers 2xx; fail early if the process died, kill it on time-out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url + path, timeout=5).ok:
                return
        except requests.RequestException:  # not listening yet, or still opening the index
            pass
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited before {url}{path} answered")
        time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"{url}{path} did not answer within {seconds:.0f} s")
