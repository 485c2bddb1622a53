"""Where rate-limit counters live (`rate_limit_storage`): per process in memory, or one shared store."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time

import pytest

from tests.serverkit import free_port
from qa_service.errors import ConfigError
from qa_service.web.app import create_app
from tests.conftest import ROOT

PAPER = "/api/papers/000_e3b5a0511f204a83:11"


@pytest.mark.slow
def test_an_unusable_storage_is_refused_at_start_with_what_to_do(seed_settings, seed_index):
    """Before: flask-limiter's ConfigurationError escaped create_app, and `serve` printed a traceback from each worker."""
    with pytest.raises(ConfigError, match=r"rate_limit_storage 'bogus://\*\*\*@host' cannot be used .* use memory://") as caught:
        create_app(seed_settings.replace(rate_limit_storage="bogus://user:secret@host"), index=seed_index)
    assert "secret" not in str(caught.value)
    env = {**os.environ, "QA_RATE_LIMIT_STORAGE": "bogus://user:secret@host", "QA_CONFIG": str(ROOT / "config" / "default.toml"),
           "QA_DATA_DIR": str(seed_settings.data_path)}
    served = subprocess.run([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(free_port())], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert served.returncode == 1 and "rate_limit_storage" in served.stderr and "Traceback" not in served.stderr
    assert "secret" not in served.stderr


def test_memory_storage_counts_per_process(seed_settings, seed_index):
    """memory:// keeps each process's own counters: two app processes give a client two budgets (so
    several app machines need a shared store, below)."""
    settings = seed_settings.replace(rate_limit="3 per minute", rate_limit_storage="memory://")
    first, second = (create_app(settings, index=seed_index).test_client() for _ in range(2))
    assert [first.get(PAPER).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert second.get(PAPER).status_code == 200


@pytest.fixture
def redis_url(tmp_path):
    """A real redis-server on 127.0.0.1, when Debian's redis-server and the redis package are installed."""
    server = shutil.which("redis-server")
    if server is None or importlib.util.find_spec("redis") is None:
        pytest.skip("needs Debian's redis-server (apt-get install redis-server) and the redis package (pip install redis); "
                    f"found: redis-server {'yes' if server else 'no'}, redis package {'yes' if importlib.util.find_spec('redis') else 'no'}")
    port = free_port()
    process = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                "--dir", str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    yield f"redis://127.0.0.1:{port}", process
    process.terminate()
    process.wait(timeout=20)


@pytest.mark.slow
def test_a_redis_storage_gives_several_app_processes_one_budget(seed_settings, seed_index, redis_url):
    url, process = redis_url
    settings = seed_settings.replace(rate_limit="3 per minute", rate_limit_storage=url)
    first, second = (create_app(settings, index=seed_index).test_client() for _ in range(2))
    assert [first.get(PAPER).status_code, second.get(PAPER).status_code, first.get(PAPER).status_code] == [200, 200, 200]
    assert second.get(PAPER).status_code == 429 and first.get(PAPER).status_code == 429
    process.terminate()  # the shared store goes away: each process counts on its own meanwhile, never a 500
    process.wait(timeout=20)
    assert second.get(PAPER).status_code in (200, 429)
