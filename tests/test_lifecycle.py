"""The ingest lifecycle of several corpora as a hypothesis state machine, as Chroma tests its own collections.

Rules: ingest new papers into a corpus (ids another corpus holds are refused), edit some (the text, or
metadata only), `--sync` away some, drop a corpus, re-ingest unchanged, and an ingest SIGKILLed part-way
in a child process then run again. The model is a plain dict: corpus -> paper id -> the version it
should hold. After every step: the papers, chunk counts and content hashes equal the model; search
finds every paper by its label; a year filter selects exactly the model's papers of that year;
/healthz, /readyz, the corpora listing and the store count the same papers; `check` (the function the
command runs) finds nothing. The killed rule also runs the `qa-service check` command itself once the
ingest has been resumed. The same machine runs on an embedded store and against a real `chroma run`
server (where each example gets corpus names of its own, the server outliving examples).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings as hsettings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule, run_state_machine_as_test

from qa_service.store.checking import check_store
from qa_service.errors import CorpusError
from qa_service.store.filters import MetadataFilter
from qa_service.store.collections import expected_chunk_ids
from qa_service.records import Paper
from qa_service.store.chroma import close_client
from qa_service.corpus.textclean import clean_text
from qa_service.web.app import create_app
from tests.conftest import ROOT, make_settings
from tests.test_chroma_server import chroma_url  # noqa: F401 - the module's `chroma run` server

pytestmark = pytest.mark.slow  # ingest and check as subprocesses

CORPORA = ["iclr2026", "alpha", "beta"]  # the default corpus and two named ones (embedded)
NAMES = ["Zorbaxa", "Quellion", "Vantrix", "Drumlet", "Pexorra", "Lumvane", "Skerrit", "Obvanta", "Trindle", "Maxelor"]
TOPICS = ["graph coloring", "speech denoising", "protein folding", "tidal forecasting", "code repair",
          "image captioning", "robot grasping", "query routing", "music tagging", "map matching"]
TEXT_EDIT, META_EDIT = 1, 2  # the bits of a paper's version: its text edited (re-embedded), its keywords (nothing re-embedded)


def pool_paper(i: int, version: int) -> Paper:
    """Paper i of the pool at a version: a unique name, a topic, a year; an edit changes text or keywords."""
    name, topic = NAMES[i], TOPICS[i]
    sentences = [f"We introduce {name}, a method for {topic}.", f"{name} improves accuracy by {10 + i}% on a standard benchmark.",
                 f"The code of {name} is public."]
    if version & TEXT_EDIT:
        sentences += [f"{name} also runs on small devices.", f"Training {name} takes {i + 2} hours."]
    text = " ".join(sentences)
    return Paper(id=f"lc-{i}", abstract=text, text=clean_text(text), title=f"{name}: {topic}", label=f"{name}: {topic}",
                 authors=[f"Author {i % 3}"], year=2024 + i % 3, venue="Lifecycle Conf",
                 keywords=[topic] + (["edited"] if version & META_EDIT else []))


def as_jsonl(papers: list[Paper], path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": p.id, "title": p.title, "abstract": p.abstract, "authors": p.authors,
                                        "year": p.year, "venue": p.venue, "keywords": p.keywords}) + "\n" for p in papers),
                    encoding="utf-8")
    return path


class CorpusLifecycle(RuleBasedStateMachine):
    chroma_url = ""  # a Chroma server (the subclass below), else an embedded store

    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="lifecycle-"))
        tag = uuid.uuid4().hex[:8] if self.chroma_url else ""
        self.corpora = [f"{name}{tag}" for name in CORPORA]  # on a server, names of this example's own
        self.settings = make_settings(self.folder / "data", rate_limit="", answer_rate_limit="", ingest_batch_papers=1,
                                      chroma_url=self.chroma_url, collection=self.corpora[0], writer_lease=2.0)
        self.app = create_app(self.settings)
        self.client = self.app.test_client()
        self.services = self.app.extensions["qa"]
        self.registry = self.services.corpora  # the one registry of this process: the app's
        self.model: dict[str, dict[str, int]] = {self.corpora[0]: {}}  # corpus -> paper id -> version
        self.killed = False

    def teardown(self) -> None:
        if not self.chroma_url:
            close_client(self.registry.default.client)
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------
    def holder(self, pid: str) -> str | None:
        return next((name for name, held in self.model.items() if pid in held), None)

    def unheld(self) -> list[int]:
        return [i for i in range(len(NAMES)) if self.holder(f"lc-{i}") is None]

    def ingest(self, corpus: str, versions: dict[int, int], sync: bool = False):
        """What `qa-service ingest --corpus` does, through the app's registry (so the app sees it at once)."""
        papers = [pool_paper(i, v) for i, v in sorted(versions.items())]
        with self.registry.writer():
            self.registry.check_unique(papers, corpus)
            return self.registry.open(corpus).ingest(papers, sync=sync)

    def record(self, corpus: str, versions: dict[int, int], sync: bool = False) -> None:
        held = {} if sync else dict(self.model.get(corpus, {}))
        held.update({f"lc-{i}": v for i, v in versions.items()})
        self.model[corpus] = held

    # -- rules -----------------------------------------------------------------------------
    @initialize(picks=st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=3, unique=True))
    def seed_the_default_corpus(self, picks: list[int]) -> None:
        """Start with papers, so that every rule can run from the first step."""
        versions = {i: 0 for i in picks}
        self.ingest(self.corpora[0], versions)
        self.record(self.corpora[0], versions)

    @rule(which=st.integers(0, len(CORPORA) - 1), picks=st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=3, unique=True))
    def ingest_new(self, which: int, picks: list[int]) -> None:
        """New papers into a corpus; ids another corpus holds are refused and nothing is written."""
        corpus = self.corpora[which]
        elsewhere = [i for i in picks if self.holder(f"lc-{i}") not in (None, corpus)]
        versions = {i: self.model.get(corpus, {}).get(f"lc-{i}", 0) for i in picks}
        if elsewhere:
            try:
                self.ingest(corpus, versions)
            except CorpusError as exc:
                assert "unique across corpora" in exc.message
                return
            raise AssertionError(f"ids held by another corpus were accepted: {elsewhere}")
        self.ingest(corpus, versions)
        self.record(corpus, versions)

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def edit(self, data: st.DataObject) -> None:
        """Some papers of a corpus change: their text (re-embedded) or their metadata only (nothing re-embedded)."""
        corpus = data.draw(st.sampled_from(sorted(name for name, held in self.model.items() if held)))
        ids = data.draw(st.lists(st.sampled_from(sorted(self.model[corpus])), min_size=1, max_size=2, unique=True))
        kind = data.draw(st.sampled_from([TEXT_EDIT, META_EDIT]))
        versions = {int(pid[3:]): self.model[corpus][pid] ^ kind for pid in ids}
        summary = self.ingest(corpus, versions)
        assert summary.updated == len(ids) and summary.added == 0 and (summary.chunks == 0) == (kind == META_EDIT)
        self.record(corpus, versions)

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def sync_removals(self, data: st.DataObject) -> None:
        """`ingest --sync` with some of a corpus's papers: the others are removed."""
        corpus = data.draw(st.sampled_from(sorted(name for name, held in self.model.items() if held)))
        keep = data.draw(st.lists(st.sampled_from(sorted(self.model[corpus])), max_size=len(self.model[corpus]), unique=True))
        if not keep:
            return  # an ingest needs papers; dropping empties a corpus
        versions = {int(pid[3:]): self.model[corpus][pid] for pid in keep}
        summary = self.ingest(corpus, versions, sync=True)
        assert summary.removed == len(self.model[corpus]) - len(keep) and summary.chunks == 0
        self.record(corpus, versions, sync=True)

    @precondition(lambda self: len(self.model) > 1 or any(self.model.values()))
    @rule(data=st.data())
    def drop(self, data: st.DataObject) -> None:
        corpus = data.draw(st.sampled_from(sorted(self.model)))
        dropped = self.registry.drop(corpus)
        assert dropped["papers"] == len(self.model[corpus])
        del self.model[corpus]
        self.model.setdefault(self.corpora[0], {})  # the default corpus is always there, empty after a drop

    @precondition(lambda self: any(self.model.values()))
    @rule(data=st.data())
    def reingest_unchanged(self, data: st.DataObject) -> None:
        corpus = data.draw(st.sampled_from(sorted(name for name, held in self.model.items() if held)))
        versions = {int(pid[3:]): v for pid, v in self.model[corpus].items()}
        summary = self.ingest(corpus, versions)
        assert (summary.added, summary.updated, summary.removed, summary.chunks) == (0, 0, 0, 0)
        assert summary.unchanged == len(versions)

    @precondition(lambda self: not self.killed and len(self.unheld()) >= 3)
    @rule(which=st.integers(0, len(CORPORA) - 1))
    def ingest_killed_part_way(self, which: int) -> None:
        """`qa-service ingest --corpus` in a child process, SIGKILLed after its first written paper; run again here,
        it resumes; then the `qa-service check` command itself passes."""
        corpus = self.corpora[which]
        self.killed = True
        versions = {i: 0 for i in self.unheld()[:3]}
        source = as_jsonl([pool_paper(i, 0) for i in versions], self.folder / f"{corpus}.jsonl")
        env = {**os.environ, "QA_DATA_DIR": self.settings.data_dir, "QA_INGEST_BATCH_PAPERS": "1",
               "QA_CONFIG": str(ROOT / "config" / "default.toml"), "QA_CHROMA_URL": self.chroma_url,
               "QA_COLLECTION": self.corpora[0], "QA_WRITER_LEASE": "2"}
        command = [sys.executable, "-m", "qa_service.cli"]
        child = subprocess.Popen([*command, "ingest", str(source), "--corpus", corpus], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        with child.stderr:
            for line in child.stderr:
                if line.startswith("ingested "):
                    child.send_signal(signal.SIGKILL)
                    break
            child.wait(timeout=60)
        assert child.returncode == -signal.SIGKILL
        summary = self.ingest(corpus, versions)  # the writer lock makes this process reopen the store first
        assert summary.added + summary.unchanged == 3 and summary.unchanged >= 1  # it resumed: the first paper was kept
        assert summary.chunks < sum(len(self.registry.open(corpus).chunk(pool_paper(i, 0))) for i in versions)
        self.record(corpus, versions)
        checked = subprocess.run([*command, "check"], env=env, capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stdout + checked.stderr

    # -- invariants ----------------------------------------------------------------------------
    @invariant()
    def the_store_holds_what_the_model_says(self) -> None:
        assert self.registry.names() == [name for name in self.corpora if name in self.model]
        for corpus, held in self.model.items():
            index = self.registry.open(corpus)
            papers = {pid: pool_paper(int(pid[3:]), v) for pid, v in held.items()}
            stored = index.stored_hashes()
            assert {pid: h.content_hash for pid, h in stored.items()} == {pid: p.content_hash for pid, p in papers.items()}
            assert {pid: h.n_chunks for pid, h in stored.items()} == {pid: len(index.chunk(p)) for pid, p in papers.items()}
            assert index.chunk_ids_by_paper() == {pid: expected_chunk_ids(pid, stored[pid].n_chunks) for pid in papers}
            assert check_store(index).ok, check_store(index).findings

    @invariant()
    def search_finds_every_paper_by_its_label_and_filters_select_the_model(self) -> None:
        retriever = self.services.answerer.retriever
        for corpus, held in self.model.items():
            part = self.registry.scope([corpus]).parts[0]
            for pid, version in held.items():
                label = pool_paper(int(pid[3:]), version).label
                hits = retriever.search(label, 1, texts=False, scope=self.registry.scope([corpus]))
                assert [h.paper_id for h in hits] == [pid], (label, hits)
            for year in (2024, 2025, 2026):
                expected = {pid for pid, v in held.items() if pool_paper(int(pid[3:]), v).year == year}
                assert self.registry.allowed(part, MetadataFilter(year=(year,))) == expected

    @invariant()
    def every_count_of_papers_agrees(self) -> None:
        """/healthz, /readyz, the corpora listing and the store itself count what the model holds."""
        expected = {name: len(held) for name, held in self.model.items()}
        assert self.client.get("/healthz").get_json()["corpora"] == expected
        ready = self.client.get("/readyz")
        if any(expected.values()):
            assert ready.status_code == 200 and ready.get_json()["corpora"] == expected, ready.get_json()
        assert {name: self.registry.describe(name)["papers"] for name in self.registry.names()} == expected
        assert {name: self.registry.open(name).papers.count() for name in self.registry.names()} == expected


TestCorpusLifecycle = CorpusLifecycle.TestCase
TestCorpusLifecycle.settings = hsettings(max_examples=15, stateful_step_count=6, deadline=None, database=None,
                                         suppress_health_check=list(HealthCheck))


@pytest.mark.slow
def test_the_lifecycle_on_a_chroma_server(chroma_url):  # noqa: F811
    """The same machine against `chroma run` (where `--sync` once removed nothing): a few examples, a couple of minutes."""

    class OnServer(CorpusLifecycle):
        pass

    OnServer.chroma_url = chroma_url
    run_state_machine_as_test(OnServer, settings=hsettings(max_examples=3, stateful_step_count=5, deadline=None, database=None,
                                                           suppress_health_check=list(HealthCheck)))
