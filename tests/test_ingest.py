"""The one ingest algorithm (store/ingest.py): its plan, and the hook where per-paper derived data is written."""

from __future__ import annotations

from qa_service.corpus.reading import load_corpus
from qa_service.store.index import Index
from qa_service.store.ingest import IngestHooks, make_plan
from tests.conftest import write_seed_file
from tests.test_index import ABSTRACTS


class Recorder(IngestHooks):
    """A sidecar that keeps what it is told, as one computed at ingest would."""

    def __init__(self) -> None:
        self.vectors: dict[str, tuple[int, int]] = {}  # paper id -> (chunks, vector rows)
        self.carried: list[str] = []
        self.gone: list[str] = []

    def embedded(self, target, papers) -> None:
        self.vectors.update({item.paper.id: (len(item.chunks), item.vectors.shape[0]) for item in papers})

    def kept(self, source, target, paper_ids) -> None:
        self.carried += list(paper_ids)

    def removed(self, target, paper_ids) -> None:
        self.gone += list(paper_ids)


def test_the_hook_sees_each_embedded_paper_with_its_vectors_and_each_removal(settings, tmp_path):
    papers = load_corpus([write_seed_file(tmp_path / "s.txt", ABSTRACTS)])
    index = Index(settings)
    first = Recorder()
    index.ingest(papers, hooks=first)
    assert set(first.vectors) == {p.id for p in papers}
    assert all(chunks == rows and chunks >= 1 for chunks, rows in first.vectors.values())
    papers[0].title = "A new title"  # metadata only: kept (relabelled), nothing embedded
    second = Recorder()
    index.ingest(papers[:2], sync=True, hooks=second)
    assert second.vectors == {} and second.gone == [papers[2].id] and papers[0].id in second.carried


def test_the_plan_of_an_unchanged_input_changes_nothing_and_sync_lists_what_goes(settings, tmp_path):
    papers = load_corpus([write_seed_file(tmp_path / "s.txt", ABSTRACTS)])
    index = Index(settings)
    index.ingest(papers)
    same = make_plan(papers, index.pair, index.encoder, sync=False)
    assert not same.changed and set(same.keep) == {p.id for p in papers}
    fewer = make_plan(papers[:1], index.pair, index.encoder, sync=True)
    assert fewer.remove == sorted(p.id for p in papers[1:]) and not fewer.embed
    unsound = make_plan(papers[:1], index.pair, index.encoder, sync=False, sound=False)
    assert unsound.rebuild and {p.id for p in unsound.embed} == {p.id for p in papers}
