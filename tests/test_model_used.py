"""Which model a paper used: named with a version or size (Qwen2.5-7B-Instruct), not a baseline it is compared with
("beating GPT-4o mini"), and a size alone ("a 7B parameter language model") speaks of it without naming it. Papers
written for the test."""

import pytest

from qa_service.questions import DETAIL_KINDS
from qa_service.records import RefusalReason
from tests.conftest import offline_answerer

PAPERS = [
    "Web agents lack diverse training data. We propose Trailblazer, which explores shopping sites to collect trajectories. "
    "Fine-tuning a 7B parameter language model on these trajectories reaches 31.5% on WebShop, beating GPT-4o mini by 3.1%.",
    "Math reasoning rewards are sparse. We introduce Rewardly, which scores each step of a solution. Training "
    "Qwen2.5-7B-Instruct with Rewardly reaches 62.0% on MATH, outperforming Llama-3-8B trained on outcome rewards.",
    "Planning agents repeat failed actions. We present Pathfinder, which keeps a memory of dead ends. Pathfinder solves 48 "
    "of 60 maze tasks, outperforming GPT-4o by 5 points.",
]
MODEL_USED = next(kind for kind in DETAIL_KINDS if kind.name == "model used")


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return offline_answerer(tmp_path_factory.mktemp("model-used"), PAPERS)


def test_a_size_alone_names_no_model_and_is_given_with_the_absence_said(answerer):
    result = answerer.ask("Which base model did Trailblazer fine-tune?")
    assert result.refusal_reason is None
    assert result.answer.startswith("The abstract of Trailblazer does not report the model used. What it does report:")
    assert "7B parameter language model" in result.answer


def test_a_named_model_is_the_answer(answerer):
    result = answerer.ask("Which base model did Rewardly fine-tune?")
    assert result.refusal_reason is None and "Qwen2.5-7B-Instruct" in result.answer
    assert not result.answer.startswith("The abstract of")


def test_a_baseline_is_not_the_model_used(answerer):
    """Pathfinder's abstract names GPT-4o only as what it outperforms: which model it ran on, it does not say."""
    result = answerer.ask("Which base model did Pathfinder fine-tune?")
    assert result.refusal_reason is RefusalReason.DETAIL_MISSING and not result.citations


@pytest.mark.parametrize("text,states", [
    ("Training Qwen2.5-7B-Instruct with it reaches 62.0%.", True),
    ("It reaches 31.5%, beating GPT-4o mini by 3.1%.", False),
    ("It outperforms the Llama-3-8B baseline.", False),
    ("We fine-tune Llama-3-8B, which then performs better than GPT-4o.", True),
    ("Fine-tuning a 7B parameter language model reaches 31.5%.", False),
])
def test_what_states_the_model_used(text, states):
    assert MODEL_USED.states(text) is states
