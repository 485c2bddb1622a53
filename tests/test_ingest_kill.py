"""An ingest killed with SIGKILL midway, then run again, leaves exactly the corpus: no duplicates, none missing."""

import json
import os
import signal
import subprocess
import sys

import pytest

from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings

pytestmark = pytest.mark.slow  # kills a real ingest process


def test_sigkill_midway_then_resume(tmp_path):
    data = tmp_path / "data"
    env = {**os.environ, "QA_DATA_DIR": str(data), "QA_INGEST_BATCH_PAPERS": "4", "QA_CONFIG": str(ROOT / "config" / "default.toml")}
    command = [sys.executable, "-m", "qa_service.cli", "ingest", str(SEEDS)]
    manifest = data / "iclr2026.manifest.json"
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    with process.stderr:
        for line in process.stderr:  # "ingested 8/57 papers": kill once a few batches are written
            if line.startswith("ingested ") and int(line.split()[1].split("/")[0]) >= 12:
                process.send_signal(signal.SIGKILL)  # before the pipe closes: nothing else may end it
                break
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert json.loads(manifest.read_text())["state"] == "ingesting"

    settings = make_settings(data)
    interrupted = Index(settings).papers.count()
    assert 0 < interrupted < 57, interrupted  # it really stopped midway
    ready = create_app(settings).test_client().get("/readyz").get_json()  # served, but not silently: it says so
    assert ready["status"] == "ready" and ready["corpora"] == {"iclr2026": interrupted}
    assert ready["warnings"] == ["corpus iclr2026: an ingest stopped midway and was not run again; the papers it finished are "
                                 "served: run `qa-service ingest` with the same files to finish it"]

    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{57 - interrupted} added" in resumed.stdout and f"{interrupted} unchanged" in resumed.stdout

    index = Index(settings)
    papers = load_corpus([SEEDS])
    expected = {chunk.id for paper in papers for chunk in index.chunk(paper)}
    stored = index.chunks.get(include=[])["ids"]
    assert len(stored) == len(set(stored)) == len(expected) and set(stored) == expected
    assert sorted(index.papers.get(include=[])["ids"]) == sorted(p.id for p in papers)
    assert index.manifest().state == "ready"
    assert len(index.load_lexical().chunk_ids) == len(expected)
    assert "warnings" not in create_app(settings).test_client().get("/readyz").get_json()
