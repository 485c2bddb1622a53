"""Damaged data is detected, not served: each part of a data dir damaged on disk, then the app asked.

BM25 files and the manifest are caches of the store: rebuilt from it, and the answers are
as before. A damaged store cannot be rebuilt from itself: a stable 503 that names the file
and the command that repairs it, never a 500 and never a message that changes per request.
"""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from qa_service.store.checking import check_store, repair_store
from qa_service.store.index import Index
from qa_service.retrieval.retriever import Retriever
from qa_service.store.corpora import Corpora
from qa_service.web.app import create_app
from tests.conftest import make_settings

QUESTION = {"question": "What is RouterArena?"}


@pytest.fixture
def data(seed_settings, tmp_path):
    """A private copy of the 57-paper data dir, to damage."""
    target = tmp_path / "data"
    shutil.copytree(seed_settings.data_path, target)
    return target


def served(data):
    return create_app(make_settings(data, rate_limit="")).test_client()


def bm25_files(data):
    return sorted((data / "iclr2026.bm25").iterdir())


def truncate(path, keep=0.5):
    with path.open("r+b") as handle:
        handle.truncate(int(path.stat().st_size * keep))


def overwrite_with_noise(path):
    path.write_bytes(random.Random(path.name).randbytes(path.stat().st_size))


@pytest.mark.parametrize("damage", [truncate, overwrite_with_noise], ids=["truncated", "random"])
def test_damaged_bm25_files_are_rebuilt_from_the_store(data, damage):
    """Before: 500 on every ask and search, /readyz 200."""
    for path in bm25_files(data):
        damage(path)
    client = served(data)
    assert client.get("/readyz").get_json() == {"status": "ready", "papers": 57, "corpora": {"iclr2026": 57}}
    for path in ("/api/search", "/api/ask"):
        assert client.post(path, json=QUESTION).status_code == 200
    assert client.post("/api/search", json=QUESTION).get_json()["results"][0]["label"] == "RouterArena"
    index = Index(make_settings(data))  # and the rebuilt files were saved: the next start loads them
    assert index.load_lexical().search("RouterArena", 1)


def test_one_truncated_array_is_found_by_its_checksum(data):
    truncate(data / "iclr2026.bm25" / "data.csc.index.npy", keep=0.9)
    client = served(data)
    assert client.post("/api/search", json=QUESTION).status_code == 200


@pytest.mark.parametrize("damage", ["missing", "not json", "no version"])
def test_a_lost_manifest_is_rebuilt_and_bm25_still_answers(data, damage):
    """Before: BM25 silently empty (its recall@1 fell to 0) and /readyz 200. The read path serves the store
    as it is and writes nothing; `check --repair` (or the next ingest) writes the manifest anew."""
    manifest = data / "iclr2026.manifest.json"
    if damage == "missing":
        manifest.unlink()
    else:
        manifest.write_text("{not json" if damage == "not json" else json.dumps({"state": "ready"}))
    settings = make_settings(data)
    index = Index(settings)
    hits = Retriever(settings, Corpora(settings, index)).search("RouterArena open platform for comparing LLM routers", 1, mode="bm25")
    assert [h.label for h in hits] == ["RouterArena"]
    client = served(data)
    assert client.get("/readyz").get_json() == {"status": "ready", "papers": 57, "corpora": {"iclr2026": 57}}
    assert index.manifest().state == ""  # not written by a reader
    with index.writer():
        report = check_store(index)
        assert any(f.part == "manifest" for f in report.findings)
        repair_store(index, report, say=lambda line: None)
    assert index.manifest().state == "ready" and index.manifest().papers == 57  # written anew
    assert check_store(index).ok


def corrupt_pages(path):
    """Garbage over a few pages in the middle of the file, as a bad disk or a torn copy leaves it."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        for offset in range(4096 * 2, size, 4096 * 7):
            handle.seek(offset)
            handle.write(random.Random(offset).randbytes(512))


@pytest.mark.parametrize("damage", [truncate, corrupt_pages], ids=["truncated", "corrupt-pages"])
def test_a_damaged_sqlite_file_is_a_stable_503_naming_it(data, damage):
    """Before: corrupt pages gave 500; a truncated file alternated between two messages, one of them
    "'RustBindingsAPI' object has no attribute 'bindings'"."""
    damage(data / "chroma" / "chroma.sqlite3")
    client = served(data)
    messages = set()
    for _ in range(3):
        for response in (client.get("/readyz"), client.post("/api/search", json=QUESTION), client.post("/api/ask", json=QUESTION)):
            assert response.status_code == 503, response.get_data(as_text=True)
            error = response.get_json()["error"]
            assert error["code"] == "store_damaged"
            messages.add(error["message"])
    assert len(messages) == 1, messages
    message = messages.pop()
    assert str(data / "chroma") in message and "is damaged" in message and "qa-service ingest" in message
    assert "RustBindingsAPI" not in message
    assert client.get("/healthz").status_code == 200


def test_readyz_names_a_busy_writer(data):
    index = Index(make_settings(data))
    client = served(data)
    with index.writer(), index.writing():
        response = client.get("/readyz")
    assert response.status_code == 503
    assert response.get_json()["error"]["code"] == "store_busy" and "ingest is writing" in response.get_json()["error"]["message"]
    assert client.get("/readyz").status_code == 200


def test_a_data_dir_without_lock_files_is_served_without_creating_them(data):
    """Reading needs no lock file (a data dir from before them, or one the server may only read)."""
    for name in (".gate.lock", ".readers.lock", ".writer.lock"):
        (data / name).unlink(missing_ok=True)
    assert served(data).post("/api/search", json=QUESTION).status_code == 200
    assert not os.path.exists(data / ".readers.lock")
