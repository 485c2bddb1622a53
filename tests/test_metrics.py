"""/metrics stays bounded whatever clients send: every label value comes from a fixed set."""

import os
import random
import re
import string
import subprocess
import sys

import pytest
import requests
from prometheus_client import generate_latest

from tests.serverkit import free_port, wait_until_up
from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings
from tests.test_chroma_server import chroma_url  # noqa: F401 - the module's `chroma run` server


def series(app) -> set[str]:
    """Every series of the scrape (a counter's _created, a histogram's buckets counted once), by name and labels."""
    text = generate_latest(app.extensions["qa_metrics"].registry).decode()
    samples = [line.rsplit(" ", 1)[0] for line in text.splitlines() if line and not line.startswith("#")]
    return {s for s in samples if not s.split("{")[0].endswith(("_created", "_bucket", "_sum"))}


def test_invented_methods_and_paths_add_only_a_handful_of_series(seed_settings, seed_index):
    app = create_app(seed_settings.replace(rate_limit=""), index=seed_index)
    client = app.test_client()
    for method, path in [("GET", "/healthz"), ("GET", "/api/papers/x"), ("GET", "/static/x"), ("GET", "/api/nothing"), ("PUT", "/api/search")]:
        client.open(path, method=method)
    before = series(app)
    rng = random.Random(16)
    word = lambda: "".join(rng.choices(string.ascii_letters + string.digits + "-_.~", k=rng.randint(1, 24)))  # noqa: E731
    for _ in range(500):
        method = "".join(rng.choices(string.ascii_uppercase, k=rng.randint(3, 12)))
        path = rng.choice(["/", "/api/", "/v1/", "/api/papers/", "/static/"]) + "/".join(word() for _ in range(rng.randint(1, 3)))
        client.open(path, method=rng.choice([method, method, "GET", "POST", "DELETE"]))
    added = series(app) - before
    assert len(added) <= 8, sorted(added)  # a few (method, status) pairs on the 'other' route
    methods = {label.split('method="', 1)[1].split('"', 1)[0] for label in series(app) if 'method="' in label}
    assert methods <= {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "other"}
    routes = {label.split('route="', 1)[1].split('"', 1)[0] for label in series(app) if 'route="' in label}
    assert all(route == "other" or route in {r.rule for r in app.url_map.iter_rules()} for route in routes)


def test_a_scrape_names_its_charset_once(seed_settings, seed_index):
    """Before: "text/plain; version=1.0.0; charset=utf-8; charset=utf-8" (Flask added its own)."""
    response = create_app(seed_settings, index=seed_index).test_client().get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].lower().count("charset") == 1
    assert response.headers["Content-Type"].startswith("text/plain; version=")


def test_process_and_python_series_are_exported(seed_settings, seed_index):
    body = create_app(seed_settings, index=seed_index).test_client().get("/metrics").get_data(as_text=True)
    for name in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_start_time_seconds",
                 "python_info", "python_gc_collections_total"):
        assert f"\n{name}" in body, name


def test_index_facts_are_exported_at_scrape_time(seed_settings, seed_index):
    """The corpus version, its generation, and whether an ingest holds the writer lock."""
    body = create_app(seed_settings, index=seed_index).test_client().get("/metrics").get_data(as_text=True)
    version = seed_index.stats().version
    assert f'qa_index_info{{corpus="iclr2026",embedding_model="all-MiniLM-L6-v2-onnx-int8",version="{version}"}} 1.0' in body
    assert 'qa_index_papers{corpus="iclr2026"} 57.0' in body and "qa_ingest_lock_held 0.0" in body
    assert 'qa_index_generation{corpus="iclr2026"} ' in body
    with seed_index.locks.writer(0):
        held = create_app(seed_settings, index=seed_index).test_client().get("/metrics").get_data(as_text=True)
    assert "qa_ingest_lock_held 1.0" in held


def test_the_time_to_ready_bm25_is_exported_by_source(seed_settings):
    app = create_app(seed_settings)
    app.extensions["qa"].warm()  # opens the index and loads BM25 (from the files in the data dir)
    body = app.test_client().get("/metrics").get_data(as_text=True)
    assert 'qa_lexical_load_seconds_count{source="cache"} 1.0' in body


def healthz_count(body: str) -> float:
    """qa_http_requests_total for GET /healthz 200, as a scrape says."""
    found = re.search(r'^qa_http_requests_total\{method="GET",route="/healthz",status="200"\} (\S+)$', body, re.M)
    return float(found.group(1)) if found else 0.0


def serve_and_scrape(settings, chroma_url, env: dict) -> list[requests.Response]:  # noqa: F811
    """`serve --workers 2`; 40 requests to /healthz, each on a new connection (both workers get some), then 12 scrapes."""
    port = free_port()
    env = {**env, "QA_DATA_DIR": settings.data_dir, "QA_CHROMA_URL": chroma_url, "QA_COLLECTION": settings.collection,
           "QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_RATE_LIMIT": ""}
    server = subprocess.Popen([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port), "--workers", "2", "--threads", "2"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, "/readyz", server)
        for _ in range(40):
            requests.get(url + "/healthz", timeout=30, headers={"Connection": "close"})
        return [requests.get(url + "/metrics", timeout=30, headers={"Connection": "close"}) for _ in range(12)]
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.slow
def test_gunicorn_workers_add_up_to_one_servers_counters(chroma_url, tmp_path):  # noqa: F811
    """Before: each worker answered a scrape with its own counters, so scrapes disagreed and none saw
    every request. Now every scrape sees the whole server: `serve` sets up multiprocess mode."""
    settings = make_settings(tmp_path / "data", chroma_url=chroma_url, collection="metrics")
    Index(settings).ingest(load_corpus([SEEDS / "004_b7de3c5bc70ac347.txt"]))
    env = {k: v for k, v in os.environ.items() if k != "PROMETHEUS_MULTIPROC_DIR"}
    scrapes = serve_and_scrape(settings, chroma_url, env)
    assert {healthz_count(s.text) for s in scrapes} == {40.0}
    assert all(s.headers["Content-Type"].count("charset") == 1 for s in scrapes)
    assert "process_resident_memory_bytes" in scrapes[0].text and 'qa_index_papers{corpus="metrics"} 19.0' in scrapes[0].text

    folder = tmp_path / "prometheus"  # the operator's folder, with a counter file an earlier run left: cleared at start
    folder.mkdir()
    stale = "from prometheus_client import Counter; Counter('qa_http_requests_total', 'x', ['route', 'method', 'status']).labels('/healthz', 'GET', '200').inc(1000)"
    subprocess.run([sys.executable, "-c", stale], env={**env, "PROMETHEUS_MULTIPROC_DIR": str(folder)}, check=True)
    assert list(folder.glob("counter_*.db"))
    scrapes = serve_and_scrape(settings, chroma_url, {**env, "PROMETHEUS_MULTIPROC_DIR": str(folder)})
    assert {healthz_count(s.text) for s in scrapes} == {40.0}
