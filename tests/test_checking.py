"""`qa-service check [--repair]`: what is wrong is printed (exit 1); --repair re-embeds exactly the damaged papers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from qa_service.cli import main
from qa_service.corpus.textclean import clean_text
from qa_service.records import Paper
from qa_service.store.checking import check_store
from qa_service.store.chroma import close_client
from qa_service.store.index import Index
from qa_service.web.app import create_app
from tests.conftest import ROOT, SEEDS, make_settings

LOST = "000_e3b5a0511f204a83:5"  # record and chunks deleted: only the corpus files can bring it back
SHORT = "000_e3b5a0511f204a83:2"  # one chunk deleted
EDITED = "003_94e388001bdf9878:6"  # one chunk's text overwritten


@pytest.fixture
def data(seed_settings, tmp_path):
    target = tmp_path / "data"
    shutil.copytree(seed_settings.data_path, target)
    return target


@pytest.fixture
def run(monkeypatch, data):
    monkeypatch.setenv("QA_DATA_DIR", str(data))
    monkeypatch.setenv("QA_CONFIG", str(ROOT / "config" / "default.toml"))
    return lambda *args: CliRunner().invoke(main, list(args))


def vectors(index: Index) -> dict:
    got = index.chunks.get(include=["embeddings", "documents"])
    return {cid: (doc, tuple(round(float(x), 6) for x in emb[:8])) for cid, doc, emb in zip(got["ids"], got["documents"], got["embeddings"])}


def damage(index: Index) -> None:
    index.chunks.delete(ids=[f"{SHORT}#1"])
    index.chunks.update(ids=[f"{EDITED}#0"], documents=["Nothing to see here."])
    index.chunks.delete(ids=[cid for cid in index.chunks.get(include=[])["ids"] if cid.startswith(LOST + "#")])
    index.papers.delete(ids=[LOST])
    index.chunks.upsert(ids=["ghost:1#0"], documents=["A chunk of no paper."], metadatas=[{"paper_id": "ghost:1", "position": 0, "start": 0, "end": 20}])
    with (index.bm25_path / "vocab.index.json").open("r+b") as handle:
        handle.truncate(100)


def test_a_sound_store_checks_clean(run):
    result = run("check")
    assert result.exit_code == 0, result.output
    assert "checked 57 papers" in result.output and "ok: " in result.output


def test_check_names_each_damage_and_repair_re_embeds_exactly_those_papers(run, data):
    index = Index(make_settings(data))
    before = vectors(index)
    damage(index)

    found = run("check")
    assert found.exit_code == 1
    for needle in (f"chunks: {SHORT}: 2 of 3 chunks", f"chunks: {EDITED}: chunk {EDITED}#0 differs",
                   f"paper: {LOST}: in the manifest's ledger but missing", "chunks: ghost:1: 1 chunk of no paper",
                   "bm25: ", "qa-service check --repair PATHS"):
        assert needle in found.output, (needle, found.output)

    partly = run("check", "--repair")  # from the store alone: the lost paper needs the corpus
    assert partly.exit_code == 1
    assert f"re-embedded 2 papers: {SHORT}, {EDITED}" in partly.output
    assert f"cannot repair {LOST} from the store" in partly.output
    repaired = run("check", "--repair", str(SEEDS))
    assert repaired.exit_code == 0, repaired.output
    assert f"re-embedded 1 paper: {LOST}" in repaired.output and "repaired: the store matches the manifest" in repaired.output

    after = vectors(Index(make_settings(data)))
    assert after == before  # the same chunks and vectors as before the damage, and nothing else
    assert run("check").exit_code == 0


def test_check_reports_a_lost_manifest_and_repair_writes_it(run, data):
    (data / "iclr2026.manifest.json").unlink()
    (data / "iclr2026.ledger.json").unlink()
    found = run("check")
    assert found.exit_code == 1 and "manifest: " in found.output and "is missing" in found.output and "ledger: " in found.output
    assert run("check", "--repair").exit_code == 0
    assert run("check").exit_code == 0


def test_check_waits_for_a_writer(run, data):
    with Index(make_settings(data)).writer():
        result = CliRunner(env={"QA_WRITER_WAIT": "0"}).invoke(main, ["check"])
    assert result.exit_code == 75 and "another writer" in result.output


def test_check_store_sees_a_paper_whose_record_was_edited_behind_its_back(data):
    index = Index(make_settings(data))
    index.papers.update(ids=[SHORT], metadatas=[{"label": "Something Else"}])
    report = check_store(index)
    assert [(f.part, f.subject) for f in report.findings] == [("paper", SHORT)]
    assert "does not match its content hash" in report.findings[0].problem


def test_a_wrong_paper_count_in_the_manifest_is_found_and_repaired(run, data):
    """Before: a manifest claiming 5 papers passed `check --repair` while /readyz said 57."""
    path = data / "iclr2026.manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "papers": 5}))
    client = create_app(make_settings(data)).test_client()
    assert client.get("/readyz").get_json()["papers"] == 57
    assert client.get("/healthz").get_json()["papers"] == 57  # the store's count once known, not the manifest's
    found = run("check")
    assert found.exit_code == 1 and "says 5 papers" in found.output and "the store holds 57" in found.output
    assert run("check", "--repair").exit_code == 0
    assert json.loads(path.read_text())["papers"] == 57 and run("check").exit_code == 0


def tiny_papers(n: int) -> list[Paper]:
    """Enough one-chunk papers that Chroma flushes its HNSW index to disk (it keeps the first 1,000 vectors in memory)."""
    words = ["graph", "speech", "protein", "tidal", "code", "image", "robot", "query", "music", "map", "cell", "market"]
    papers = []
    for i in range(n):
        a, b, c = words[i % 12], words[(i // 12) % 12], words[(i // 144) % 12]
        text = clean_text(f"Method{i} studies {a} {b} with {c} data. Method{i} gains {i % 97}% on its benchmark.")
        papers.append(Paper(id=f"t:{i}", abstract=text, text=text, title=f"Method{i}", label=f"Method{i}"))
    return papers


def lose_hnsw_files(data) -> int:
    """Delete every HNSW segment folder of the embedded store (each holds data_level0.bin)."""
    folders = {path.parent for path in (data / "chroma").glob("*/data_level0.bin")}
    for folder in folders:
        shutil.rmtree(folder)
    return len(folders)


def test_lost_hnsw_files_are_found_by_querying_and_repaired_from_the_records(tmp_path):
    """Before: search top-1 fell to 0 while /readyz said ready, `check` passed, `ingest` said unchanged."""
    data = tmp_path / "big"
    settings = make_settings(data)
    papers = tiny_papers(1200)
    index = Index(settings)
    index.ingest(papers)
    close_client(index.client)
    env = {**os.environ, "QA_DATA_DIR": str(data), "QA_CONFIG": str(ROOT / "config" / "default.toml")}

    def command(*args: str) -> subprocess.CompletedProcess:  # a process of its own: nothing of the store cached in memory
        return subprocess.run([sys.executable, "-m", "qa_service.cli", *args], env=env, capture_output=True, text=True, timeout=600)

    assert lose_hnsw_files(data) >= 1
    found = command("check")
    assert found.returncode == 1 and "not found by its own vector" in found.stdout, found.stdout + found.stderr
    repaired = command("check", "--repair")  # no corpus files: from the records
    assert repaired.returncode == 0 and "rebuilt the vector index" in repaired.stdout, repaired.stdout + repaired.stderr
    assert command("check").returncode == 0

    assert lose_hnsw_files(data) >= 1
    index = Index(settings)
    again = index.ingest(papers)  # not "unchanged" over a broken vector index
    assert again.unchanged == 0 and again.chunks == len(papers)
    assert [cid for cid, _ in index.dense_ids(papers[7].text, 1)] == ["t:7#0"]
    assert index.stats().papers == len(papers)
