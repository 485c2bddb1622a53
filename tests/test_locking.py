"""One writer at a time on an embedded data dir, and readers that never see it half-written.

Real processes on real data dirs: the defects were between processes (a server and an
ingest, two ingests), so threads in one process would not show them.
"""

from __future__ import annotations

import collections
import os
import shutil
import subprocess
import sys
import threading

import pytest

from qa_service.store.checking import check_store
from qa_service.corpus.reading import load_corpus
from qa_service.errors import StoreBusy
from qa_service.store.index import Index
from qa_service.store.locking import StoreLocks
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings

ONE_FILE = SEEDS / "004_b7de3c5bc70ac347.txt"  # 19 of the 57 papers


def cli(data, *args, wait="60", env_extra=None):
    """`qa-service ARGS` in its own process on DATA, with pipes for its output."""
    env = {**os.environ, "QA_DATA_DIR": str(data), "QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_WRITER_WAIT": wait,
           **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "qa_service.cli", *args], env=env, cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.fixture
def seeded(seed_settings, tmp_path):
    """A private copy of the 57-paper data dir (the session one is shared by read-only tests)."""
    data = tmp_path / "data"
    shutil.copytree(seed_settings.data_path, data)
    return make_settings(data)


@pytest.mark.slow
def test_ingest_while_a_server_reads_never_answers_500(seeded):
    """Before: every ask/search answered 500 ('NoneType' object is not a mapping) long after the
    ingest ended, while /readyz said 200. Now: 503 while it writes, then the new corpus, no restart."""
    client = create_app(seeded.replace(rate_limit="")).test_client()
    question = {"question": "What is RouterArena?"}
    assert client.post("/api/search", json=question).status_code == 200
    writer = cli(seeded.data_path, "ingest", "--sync", str(ONE_FILE))
    during: collections.Counter = collections.Counter()
    while writer.poll() is None:
        response = client.post("/api/search", json=question)
        during[response.status_code] += 1
        if response.status_code == 503:
            assert response.get_json()["error"]["code"] == "store_busy" and response.headers["Retry-After"] == "1"
            assert "an ingest is writing" in response.get_json()["error"]["message"]
    out, err = writer.communicate()
    assert writer.returncode == 0, err
    assert "19 papers" in out and "38 removed" in out
    assert set(during) <= {200, 503}, during
    after = [client.post(path, json=question) for path in ("/api/search", "/api/ask") * 3]
    assert [r.status_code for r in after] == [200] * 6, [r.get_json() for r in after]
    assert client.get("/readyz").get_json() == {"status": "ready", "papers": 19, "corpora": {"iclr2026": 19}}
    results = after[0].get_json()["results"]
    assert results and all(r["paper_id"].startswith("004_") for r in results)  # the new corpus, at once


@pytest.mark.slow
def test_a_second_writer_waits_then_gives_up_with_exit_75(seeded):
    """Before: a second ingest ran alongside the first. Now it waits (bounded) and says why."""
    holder = Index(seeded)
    with holder.writer():
        second = cli(seeded.data_path, "ingest", str(ONE_FILE), wait="1")
        out, err = second.communicate(timeout=120)
    assert second.returncode == 75, (out, err)
    assert f"waiting up to 1 s for another writer (pid {os.getpid()}" in err
    assert "another writer" in err and "QA_WRITER_WAIT" in err and "Traceback" not in err
    assert Index(seeded).papers.count() == 57


@pytest.mark.slow
def test_a_second_writer_that_may_wait_runs_after_the_first(seeded):
    holder = Index(seeded)
    second = None
    with holder.writer():
        second = cli(seeded.data_path, "ingest", "--sync", str(ONE_FILE))
        line = second.stderr.readline()  # it says it waits, and does
        assert line.startswith("waiting up to 60 s for another writer")
        assert second.poll() is None
    out, err = second.communicate(timeout=300)
    assert second.returncode == 0, err
    assert Index(seeded).papers.count() == 19


@pytest.mark.slow
def test_two_ingests_at_once_leave_one_whole_corpus(settings):
    """Before: 456 papers instead of 57 or 457, wrong chunk counts, both exit 0. Now the second waits
    for the first, and the store is exactly the corpus of the one that ran last, every paper whole."""
    first = cli(settings.data_path, "ingest", "--sync", str(SEEDS), env_extra={"QA_INGEST_BATCH_PAPERS": "8"})
    assert first.stderr.readline().startswith("ingested 8/57")  # the first is writing...
    second = cli(settings.data_path, "ingest", "--sync", str(ONE_FILE))  # ...when the second starts
    results = [p.communicate(timeout=600) for p in (first, second)]
    assert [first.returncode, second.returncode] == [0, 0], results
    index = Index(settings)
    expected = load_corpus([ONE_FILE])
    assert sorted(index.papers.get(include=[])["ids"]) == sorted(p.id for p in expected)
    assert set(index.chunks.get(include=[])["ids"]) == {c.id for p in expected for c in index.chunk(p)}
    assert check_store(index).ok, check_store(index).findings


def test_reader_is_turned_away_only_while_the_store_changes(tmp_path):
    locks = StoreLocks(tmp_path)
    with locks.reading() as nothing_yet:
        assert nothing_yet is None  # no data dir written yet: nothing to guard
    with locks.writer(0.0):
        with locks.reading():  # holding the writer lock alone (an ingest's scan) keeps readers reading
            pass
        before = locks.generation()
        done = threading.Event()

        def read() -> None:
            try:
                with locks.reading():
                    pass
            except StoreBusy:
                done.set()

        with locks.writing():
            reader = threading.Thread(target=read)
            reader.start()
            reader.join()
        assert done.is_set()
        assert locks.generation() != before  # readers reopen the store after a write


def test_a_stream_keeps_the_store_until_it_ends(seeded):
    """A stream reads the store after its view has returned: a writer waits for it to end."""
    client = create_app(seeded.replace(rate_limit="")).test_client()
    response = client.post("/api/ask/stream", json={"question": "What is RouterArena?"}, buffered=False)
    events = iter(response.response)
    assert next(events).startswith(b"event: sources")  # the stream has begun: it holds the store
    writing = threading.Event()

    def write() -> None:
        index = Index(seeded)
        with index.writer(), index.writing():
            writing.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not writing.wait(1.0)  # held off while the stream is open
    rest = b"".join(events)
    response.close()
    writer.join(timeout=60)
    assert writing.is_set() and b"event: final" in rest
