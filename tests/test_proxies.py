"""Behind reverse proxies (`proxy_hops`): whose address a rate-limit budget belongs to."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import requests

from tests.serverkit import free_port
from qa_service.config import Settings
from qa_service.corpus.reading import load_corpus
from qa_service.errors import ConfigError
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, gunicorn, make_settings

PAPER = "/api/papers/000_e3b5a0511f204a83:11"
PROXY = "10.0.0.2"  # the reverse proxy every request arrives from


def limited_client(settings: Settings, index: Index, proxy_hops: int):
    return create_app(settings.replace(rate_limit="2 per minute", proxy_hops=proxy_hops), index=index).test_client()


def refused(response) -> bool:
    return response.status_code == 429 and int(response.headers["Retry-After"]) > 0


def test_without_trusted_proxies_x_forwarded_for_cannot_pick_a_budget(seed_settings, seed_index):
    """proxy_hops = 0, the default: a client writing a new X-Forwarded-For each time still has one budget."""
    assert Settings().proxy_hops == 0
    client = limited_client(seed_settings, seed_index, proxy_hops=0)
    spoofed = [client.get(PAPER, headers={"X-Forwarded-For": f"198.51.100.{n}"}) for n in range(3)]
    assert [r.status_code for r in spoofed[:2]] == [200, 200] and refused(spoofed[2])


def test_behind_one_proxy_each_client_has_its_own_budget_and_cannot_forge_another(seed_settings, seed_index):
    """proxy_hops = 1: the client is the address the proxy appended (the right-most), not one it wrote itself.
    Before, every client behind the proxy shared the proxy's one budget."""
    client = limited_client(seed_settings, seed_index, proxy_hops=1)

    def via_proxy(forwarded: str):
        return client.get(PAPER, headers={"X-Forwarded-For": forwarded}, environ_base={"REMOTE_ADDR": PROXY})

    assert [via_proxy("203.0.113.1").status_code for _ in range(2)] == [200, 200]
    assert refused(via_proxy("203.0.113.1"))
    assert via_proxy("203.0.113.2").status_code == 200  # another user behind the same proxy
    assert refused(via_proxy("198.51.100.9, 203.0.113.1"))  # it sent 'X-Forwarded-For: 198.51.100.9'; the proxy appended its address


@pytest.mark.slow
def test_behind_a_proxy_the_production_server_counts_each_client(tmp_path):
    """gunicorn as `serve` runs it, QA_PROXY_HOPS=1, with this test as the proxy on 127.0.0.1."""
    Index(make_settings(tmp_path)).ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    with gunicorn(tmp_path, {"QA_PROXY_HOPS": "1", "QA_RATE_LIMIT": "2 per minute"}) as url:

        def via_proxy(forwarded: str):
            return requests.get(url + PAPER, headers={"X-Forwarded-For": forwarded}, timeout=30)

        assert [via_proxy("203.0.113.1").status_code for _ in range(2)] == [200, 200]
        assert refused(via_proxy("203.0.113.1"))
        assert via_proxy("203.0.113.2").status_code == 200
        assert refused(via_proxy("198.51.100.9, 203.0.113.1"))


@pytest.mark.slow
def test_a_negative_proxy_hops_is_refused_at_start(seed_settings, seed_index):
    """In the app factory, and by `serve` before its workers start: one line saying what the setting means."""
    with pytest.raises(ConfigError, match=r"proxy_hops must be 0 \(no reverse proxy.* got -1"):
        create_app(seed_settings.replace(proxy_hops=-1), index=seed_index)
    env = {**os.environ, "QA_PROXY_HOPS": "-1", "QA_CONFIG": str(ROOT / "config" / "default.toml"),
           "QA_DATA_DIR": str(seed_settings.data_path)}
    served = subprocess.run([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(free_port())], env=env, cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert served.returncode == 1 and "proxy_hops must be 0" in served.stderr and "Traceback" not in served.stderr
