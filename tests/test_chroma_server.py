"""Server mode: Chroma's own server on 127.0.0.1, several app workers, ingest while serving."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import requests

from tests.serverkit import free_port, until, wait_until_up
from qa_service.corpus.reading import load_corpus
from qa_service.errors import ConfigError
from qa_service.store.checking import check_store
from qa_service.store.index import Index
from qa_service.web.serving import check_workers
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings

CHROMA = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")


@pytest.fixture(scope="module")
def chroma_url(tmp_path_factory):
    port = free_port()
    process = subprocess.Popen([CHROMA, "run", "--path", str(tmp_path_factory.mktemp("chroma-server")), "--host", "127.0.0.1", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    wait_until_up(url, "/api/v2/heartbeat", process)
    yield url
    process.terminate()
    process.wait(timeout=20)


@pytest.mark.slow
def test_workers_share_the_server_and_see_a_re_ingest_without_restart(chroma_url, tmp_path):
    settings = make_settings(tmp_path / "data", chroma_url=chroma_url, collection="workers")
    Index(settings).ingest(load_corpus([SEEDS / "000_e3b5a0511f204a83.txt"]))
    worker_a = create_app(settings).test_client()  # each opens its own HttpClient, as gunicorn workers do
    worker_b = create_app(settings).test_client()
    question = {"question": "Which benchmark tests scientific law discovery?", "k": 3}
    before_a = worker_a.post("/api/search", json={"question": "What is RouterArena?", "k": 3}).get_json()
    assert before_a == worker_b.post("/api/search", json={"question": "What is RouterArena?", "k": 3}).get_json()
    assert before_a["results"][0]["label"] == "RouterArena"
    assert "NewtonBench" not in str(worker_a.post("/api/search", json=question).get_json())

    Index(settings).ingest(load_corpus([SEEDS]))  # another process adds 38 papers
    for worker in (worker_a, worker_b):  # each re-reads the manifest every 2 s, then readies the new version
        assert until(lambda: worker.get("/healthz").get_json()["papers"] == 57)
        assert worker.post("/api/search", json=question).get_json()["results"][0]["label"] == "NewtonBench"
    answer_a, answer_b = (w.post("/api/ask", json=question).get_json() for w in (worker_a, worker_b))
    assert (answer_a["answer"], answer_a["citations"]) == (answer_b["answer"], answer_b["citations"])


@pytest.mark.slow
def test_ingest_while_serving_keeps_answering(chroma_url, tmp_path):
    settings = make_settings(tmp_path / "data", chroma_url=chroma_url, collection="live", rate_limit="", answer_rate_limit="")  # asks as fast as it can
    Index(settings).ingest(load_corpus([SEEDS / "004_b7de3c5bc70ac347.txt"]))
    client = create_app(settings).test_client()
    done = threading.Event()
    statuses: list[int] = []

    def ingest() -> None:
        Index(settings.replace(ingest_batch_papers=4)).ingest(load_corpus([SEEDS]))
        done.set()

    writer = threading.Thread(target=ingest)
    writer.start()
    while not done.is_set():
        statuses.append(client.post("/api/ask", json={"question": "What average speedup does CUDA-L1 achieve?"}).status_code)
    writer.join()
    assert len(statuses) > 3 and set(statuses) == {200}


def test_several_workers_need_a_chroma_server(settings):
    with pytest.raises(ConfigError, match="QA_CHROMA_URL"):
        check_workers(settings, 2)
    check_workers(settings, 1)
    check_workers(settings.replace(chroma_url="http://127.0.0.1:8001"), 4)


@pytest.mark.slow
def test_gunicorn_with_two_workers_on_the_server(chroma_url, tmp_path):
    settings = make_settings(tmp_path / "data", chroma_url=chroma_url, collection="gunicorn")
    Index(settings).ingest(load_corpus([SEEDS / "003_94e388001bdf9878.txt"]))
    port = free_port()
    env = {**os.environ, "QA_DATA_DIR": settings.data_dir, "QA_CHROMA_URL": chroma_url, "QA_COLLECTION": "gunicorn",
           "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    server = subprocess.Popen([sys.executable, "-m", "qa_service.cli", "serve", "--port", str(port), "--workers", "2"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_until_up(url, "/readyz", server)
        answers = {requests.post(url + "/api/ask", json={"question": "How many tasks are in NewtonBench?"}, timeout=30).json()["answer"] for _ in range(6)}
        assert len(answers) == 1 and "324" in answers.pop()
    finally:
        server.terminate()
        server.wait(timeout=30)

    refused = subprocess.run([sys.executable, "-m", "qa_service.cli", "serve", "--workers", "2"], capture_output=True, text=True,
                             env={**env, "QA_CHROMA_URL": ""}, timeout=60)
    assert refused.returncode == 1 and "QA_CHROMA_URL" in refused.stderr


def test_sync_on_the_server_removes_what_the_input_no_longer_has(chroma_url, tmp_path):
    settings = make_settings(tmp_path / "data", chroma_url=chroma_url, collection="syncing")
    papers = load_corpus([SEEDS])[:6]
    Index(settings).ingest(papers)
    summary = Index(settings).ingest(papers[:2], sync=True)  # the input only drops papers: no other change
    assert (summary.removed, summary.unchanged, summary.added) == (4, 2, 0)
    index = Index(settings)
    assert index.papers.count() == 2 and index.stats().papers == 2
    assert set(index.chunk_ids_by_paper()) == {p.id for p in papers[:2]}
    assert check_store(index).ok, check_store(index).findings
    assert Index(settings).ingest(papers[:2], sync=True).removed == 0
