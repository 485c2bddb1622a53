"""A stateless app tier: with a Chroma server, app processes keep nothing of their own.

Real processes on 127.0.0.1 against one `chroma run`: app servers with different, empty data
dirs; ingests as `qa-service ingest` processes, killed with SIGKILL or run two at once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.serverkit import free_port, until, wait_until_up
from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from tests.conftest import ROOT, SEEDS, make_settings
from tests.test_chroma_server import chroma_url  # noqa: F401 - the module's `chroma run` server

pytestmark = pytest.mark.slow  # app servers and `chroma run` as processes

ONE_FILE = SEEDS / "004_b7de3c5bc70ac347.txt"  # 19 of the 57 papers
METADATA_PAPERS = ROOT / "tests" / "data" / "metadata_papers.jsonl"  # 8 papers with authors, years, venues, keywords
QUESTIONS = ["What is RouterArena?", "What average speedup does CUDA-L1 achieve?", "How many tasks are in NewtonBench?",
             "Which benchmark tests scientific law discovery?"]


def environment(data: Path, url: str, collection: str, **extra: str) -> dict:
    return {**os.environ, "QA_DATA_DIR": str(data), "QA_CHROMA_URL": url, "QA_COLLECTION": collection,
            "QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_RATE_LIMIT": "", "QA_ANSWER_RATE_LIMIT": "", **extra}


def cli(data: Path, url: str, collection: str, *args: str, **extra: str) -> subprocess.Popen:
    """`qa-service ARGS` in its own process, with pipes for its output."""
    return subprocess.Popen([sys.executable, "-m", "qa_service.cli", *args], env=environment(data, url, collection, **extra),
                            cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def ingest(data: Path, url: str, collection: str, *paths: Path, **extra: str) -> str:
    done = cli(data, url, collection, "ingest", *map(str, paths), **extra)
    out, err = done.communicate(timeout=300)
    assert done.returncode == 0, err
    return out


class App:
    """`qa-service serve` on a port of its own, its log in a file; stopped (its whole group) at the end."""

    def __init__(self, data: Path, url: str, collection: str, log: Path):
        self.port = free_port()
        self.log = log
        with log.open("w") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "qa_service.cli", "serve", "--port", str(self.port), "--threads", "4"],
                env=environment(data, url, collection), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=sink, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def up(self) -> "App":
        wait_until_up(self.url, "/readyz", self.process, 120)
        return self

    def search(self, question: str) -> list[dict]:
        response = requests.post(self.url + "/api/search", json={"question": question, "k": 5}, timeout=60)
        assert response.status_code == 200, response.text
        return response.json()["results"]

    def answer(self, question: str) -> tuple:
        data = requests.post(self.url + "/api/ask", json={"question": question}, timeout=60).json()
        return data["answer"], data["citations"], [s["paper_id"] for s in data["sources"]]

    def papers(self) -> int:
        return requests.get(self.url + "/api/info", timeout=60).json()["index"]["papers"]

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)


@pytest.fixture
def apps():
    started: list[App] = []
    yield started
    for app in started:
        app.stop()


def served_by(apps: list[App]) -> list[tuple]:
    """Every app's searches and answers for QUESTIONS: what must be the same everywhere."""
    return [tuple((json.dumps(app.search(q), sort_keys=True), app.answer(q)) for q in QUESTIONS) for app in apps]


def test_two_app_processes_with_empty_data_dirs_serve_alike_and_both_follow_a_re_ingest(chroma_url, tmp_path, apps):  # noqa: F811
    """Before: an app process took the corpus version from its own data dir (the manifest and BM25 that
    `ingest` wrote there), so one on another machine never saw a re-ingest. Now both switch, no restart."""
    ingest(tmp_path / "ingest", chroma_url, "twoapps", ONE_FILE)
    fresh = [tmp_path / "app-a", tmp_path / "app-b"]
    assert not any(path.exists() for path in fresh)
    apps += [App(path, chroma_url, "twoapps", tmp_path / f"{path.name}.log") for path in fresh]
    for app in apps:
        app.up()
    first = served_by(apps)
    assert first[0] == first[1]
    assert "3.12" in first[0][1][1][0]  # CUDA-L1's average speedup, from one of the 19 papers
    assert all(app.papers() == 19 for app in apps)
    for path in fresh:  # all a fresh process keeps: a disposable copy of the BM25 index, by version
        assert all(p.relative_to(path).parts[0] == "cache" for p in path.rglob("*") if p.is_file())

    ingest(tmp_path / "elsewhere", chroma_url, "twoapps", SEEDS)  # from another machine's (empty) data dir
    for app in apps:
        assert until(lambda: app.papers() == 57, 60)
    second = served_by(apps)
    assert second[0] == second[1] and second != first
    assert "324" in second[0][2][1][0]  # NewtonBench's 324 tasks: a paper only the re-ingest brought
    assert all(app.process.poll() is None for app in apps)


def test_killing_a_reader_mid_rebuild_loses_nothing(chroma_url, tmp_path, apps):  # noqa: F811
    """An app process killed while it builds BM25 from Chroma's chunks changes nothing in Chroma, and a
    new process on the same data dir serves exactly what an undisturbed one serves."""
    ingest(tmp_path / "ingest", chroma_url, "killreader", SEEDS)
    settings = make_settings(tmp_path / "ingest", chroma_url=chroma_url, collection="killreader")
    index = Index(settings)
    version = index.manifest().version
    index.versions.blobs.meta.delete(where={"blob": f"bm25:{version}"})  # no stored BM25: readers rebuild it from the chunks
    before = (index.manifest(), index.files.read_ledger(), index.chunks.count(), index.papers.count())

    victim_dir = tmp_path / "victim"
    for _ in range(2):
        victim = App(victim_dir, chroma_url, "killreader", tmp_path / "victim.log")
        deadline = time.monotonic() + 120
        while "rebuilding it from the" not in victim.log.read_text():  # it has begun
            assert time.monotonic() < deadline and victim.process.poll() is None
            time.sleep(0.002)
        os.killpg(victim.process.pid, signal.SIGKILL)
        victim.process.wait(timeout=30)
        assert "BM25 of version" not in victim.log.read_text().split("rebuilding it from the", 1)[1]  # killed before it was ready
    after = Index(settings)
    assert (after.manifest(), after.files.read_ledger(), after.chunks.count(), after.papers.count()) == before

    apps += [App(victim_dir, chroma_url, "killreader", tmp_path / "again.log"), App(tmp_path / "calm", chroma_url, "killreader", tmp_path / "calm.log")]
    for app in apps:
        app.up()
    results = served_by(apps)
    assert results[0] == results[1]
    assert all(app.papers() == 57 for app in apps)


def test_two_concurrent_ingests_one_waits_or_refuses_and_the_result_is_one_ingest(chroma_url, tmp_path):  # noqa: F811
    """Before: the writer lock was a file in each machine's data dir, so ingests from two data dirs both
    ran at once against one Chroma server. Now the lock is in Chroma: the second waits, or refuses (75)."""
    both = [cli(tmp_path / name, chroma_url, "twoingests", "ingest", str(SEEDS), QA_WRITER_WAIT="300") for name in ("a", "b")]
    outputs = [p.communicate(timeout=600) for p in both]
    assert [p.returncode for p in both] == [0, 0], outputs
    waited = [err for _, err in outputs if "waiting up to 300 s for another writer" in err]
    assert len(waited) == 1 and "pid" in waited[0]
    assert sorted(out.split(",")[0] for out, _ in outputs) == ["57 papers (0 added", "57 papers (57 added"]

    settings = make_settings(tmp_path / "c", chroma_url=chroma_url, collection="twoingests")
    index = Index(settings)
    papers = load_corpus([SEEDS])
    expected = {chunk.id for paper in papers for chunk in index.chunk(paper)}
    stored = index.chunks.get(include=[])["ids"]
    assert len(stored) == len(expected) and set(stored) == expected
    assert sorted(index.papers.get(include=[])["ids"]) == sorted(p.id for p in papers)
    assert index.manifest().generation == 1  # one version written: the second ingest found nothing to change

    checked = cli(tmp_path / "c", chroma_url, "twoingests", "check")
    out, err = checked.communicate(timeout=300)
    assert checked.returncode == 0 and "checked 57 papers, 169 chunks" in out, out + err

    holder = cli(tmp_path / "a", chroma_url, "refuse", "ingest", str(SEEDS))  # embeds 169 chunks: holds the lock for seconds
    assert until(lambda: Index(settings.replace(collection="refuse")).writer_status().held, 60)
    refused = cli(tmp_path / "b", chroma_url, "refuse", "ingest", str(ONE_FILE), QA_WRITER_WAIT="0")
    out, err = refused.communicate(timeout=120)
    assert refused.returncode == 75 and "another writer (" in err and "is changing the Chroma server at" in err, err
    out, err = holder.communicate(timeout=300)
    assert holder.returncode == 0 and "57 papers (57 added" in out, err


def test_sigkill_of_an_ingest_keeps_readers_on_the_old_version_and_the_next_resumes(chroma_url, tmp_path, apps):  # noqa: F811
    ingest(tmp_path / "ingest", chroma_url, "killwriter", ONE_FILE)
    apps.append(App(tmp_path / "reader", chroma_url, "killwriter", tmp_path / "reader.log").up())
    reader = apps[0]
    before = served_by([reader])

    writer = cli(tmp_path / "ingest", chroma_url, "killwriter", "ingest", str(SEEDS), QA_INGEST_BATCH_PAPERS="4")
    with writer.stdout, writer.stderr:
        for line in writer.stderr:  # "ingested 27/57 papers": the 19 copied, then new papers 4 at a time
            if line.startswith("ingested ") and int(line.split()[1].split("/")[0]) >= 27:
                writer.send_signal(signal.SIGKILL)
                break
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    time.sleep(2.5)  # past the reader's manifest poll
    assert reader.papers() == 19 and served_by([reader]) == before  # the old version, whole

    resumed = cli(tmp_path / "again", chroma_url, "killwriter", "ingest", str(SEEDS), QA_WRITER_LEASE="2")
    out, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert "waiting up to" in err  # the killed writer's lock, until its lease ran out
    done = int(out.split(" already written by an interrupted ingest")[0].rsplit(", ", 1)[1])
    assert 27 <= done < 57, out  # what the killed ingest had written (19 copied, 8 or more embedded) is not written again
    assert int(out.split(" chunks embedded")[0].rsplit(" ", 1)[1]) < 114, out  # 114: the 38 new papers' chunks
    papers = load_corpus([SEEDS])
    index = Index(make_settings(tmp_path / "check", chroma_url=chroma_url, collection="killwriter"))
    expected = {chunk.id for paper in papers for chunk in index.chunk(paper)}
    stored = index.chunks.get(include=[])["ids"]
    assert len(stored) == len(expected) and set(stored) == expected
    assert until(lambda: reader.papers() == 57, 60)
    versions = {c.name.split("_")[1] for c in index.client.list_collections() if c.name.startswith("killwriter_v")}
    assert len(versions) == 2  # the one served and the one before; the killed ingest's half version is gone


def test_named_corpora_on_a_chroma_server_switch_filter_and_drop_on_their_own(chroma_url, tmp_path, apps):  # noqa: F811
    """Each named corpus on a Chroma server is its own versions, manifest and lease (NAME_meta marks it).
    Before, a server's named corpus was looked for as NAME_chunks/NAME_papers, which a server never holds."""
    ingest(tmp_path / "ingest", chroma_url, "srvcorpora", ONE_FILE)
    ingest(tmp_path / "ingest", chroma_url, "srvcorpora", METADATA_PAPERS, "--corpus", "conf")
    app = App(tmp_path / "app", chroma_url, "srvcorpora", tmp_path / "app.log").up()
    apps.append(app)

    def corpora() -> dict:
        return {c["name"]: c["papers"] for c in requests.get(app.url + "/api/corpora", timeout=30).json()["corpora"]}

    def search(**body) -> set:
        response = requests.post(app.url + "/api/search", json={"question": "speech recognition", "k": 5, **body}, timeout=60)
        assert response.status_code == 200, response.text
        return {r["paper_id"] for r in response.json()["results"]}

    assert corpora() == {"srvcorpora": 19, "conf": 8}
    assert search(corpus="conf", filters={"year": [2026], "keyword": ["speech"]}) == {"iclr26-101", "iclr26-103"}
    assert search(corpus="conf", filters={"year": [2024]}) == set()

    edited = tmp_path / "edited.jsonl"  # one paper's year changes: its vectors are copied, its filter fields are new
    rows = [json.loads(line) for line in METADATA_PAPERS.read_text().splitlines()]
    rows[0]["year"] = 2024
    edited.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    out = ingest(tmp_path / "ingest", chroma_url, "srvcorpora", edited, "--corpus", "conf")
    assert "1 updated" in out and "0 chunks embedded" in out, out
    assert until(lambda: search(corpus="conf", filters={"year": [2024]}) == {rows[0]["id"]}, 60)  # the dense and the lexical side
    assert corpora() == {"srvcorpora": 19, "conf": 8}

    dropped = cli(tmp_path / "ingest", chroma_url, "srvcorpora", "drop", "conf", "--yes")
    out, err = dropped.communicate(timeout=120)
    assert dropped.returncode == 0, err
    assert until(lambda: corpora() == {"srvcorpora": 19}, 30)
    gone = requests.post(app.url + "/api/search", json={"question": "speech", "corpus": "conf"}, timeout=30)
    assert gone.status_code == 404 and "there is no corpus 'conf'" in gone.json()["error"]["message"]
    index = Index(make_settings(tmp_path / "check", chroma_url=chroma_url, collection="srvcorpora"))
    assert not [c.name for c in index.client.list_collections() if c.name.startswith("conf_")]  # every version and the meta
    assert app.process.poll() is None and "Traceback" not in app.log.read_text()
