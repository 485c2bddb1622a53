"""A list question's papers: each that retrieval marked relevant and whose text holds the question's whole core is listed,
however its best sentence scores against the best paper's. Papers written for the test."""

import pytest

from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Fine-tuned models forget what they knew. We present MergeKit-X, a model merging method that averages the task "
    "vectors of fine-tuned checkpoints with learned weights. Model merging with MergeKit-X keeps 97% of each task's accuracy and merges eight models at once.",
    "Backdoors hide in downloaded checkpoints. We propose SwitchGuard, which removes backdoor shortcuts from a network. "
    "Among its steps, a model merging pass over two homologous checkpoints dilutes the trigger; attack success falls to 2%.",
    "Speculative decoding drafts tokens cheaply. We introduce TreeDraft, which verifies a tree of drafts in one pass and "
    "doubles decoding speed on long prompts. Its draft model is loaded from public checkpoints.",
    "Protein structures are slow to predict. We present FoldFast, which predicts protein folds from sequence alone and runs "
    "ten times faster than previous predictors.",
]


QUESTION = "Which papers use model merging on checkpoints?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lists")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def test_each_relevant_paper_holding_the_whole_core_is_listed(index):
    answerer = answerer_over(index)
    prepared = answerer.prepare(QUESTION)
    labels = {h.paper_id: h.label for h in prepared.found.hits}
    relevant = {h.paper_id for h in prepared.found.hits if h.relevant}
    about = {labels[pid] for pid in prepared.verdict.about}
    assert about == {"MergeKit-X", "SwitchGuard"}  # each merges checkpoints
    assert {pid for pid, label in labels.items() if label in about} <= relevant
    result = answerer.ask(QUESTION)
    assert {"MergeKit-X", "SwitchGuard"} <= {c.label for c in result.citations}, result.answer


def test_a_paper_holding_the_core_that_retrieval_found_weak_is_left_to_the_model(index):
    """TreeDraft says "checkpoints" in passing and is not relevant by retrieval's bar: the model weighs it with the
    others, it is not listed by its words alone."""
    prepared = answerer_over(index).prepare(QUESTION)
    weak = {h.label: h.paper_id for h in prepared.found.hits if not h.relevant}
    assert "TreeDraft" in weak and weak["TreeDraft"] not in prepared.verdict.about
