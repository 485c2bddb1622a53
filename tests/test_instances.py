"""A topic given with an instance no abstract names ("speech recognition models like Whisper", "Medusa-style heads") is a
neighbour of the corpus's topics when no paper holds the rest of the question's core; an instance of a topic the corpus
has is only an example. Papers written for the test."""

import pytest

from qa_service.records import RefusalReason
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Large language models are expensive to serve because their weights occupy tens of gigabytes. We propose Bitshrink, a "
    "post-training quantization method that stores the weights of language models in 3 bits with a learned rounding per "
    "group. On models from 7B to 70B parameters, Bitshrink keeps perplexity within 0.3 of the 16-bit model and cuts memory "
    "by 4.8x.",
    "Autoregressive decoding emits one token per forward pass. We introduce Leapdraft, a speculative decoding method in "
    "which a small draft model proposes several tokens that the language model verifies at once. Leapdraft speeds up "
    "generation by 2.9x on chat and code benchmarks with identical outputs.",
    "Image classifiers fail under common corruptions such as blur and fog. We propose Fogguard, a data augmentation that "
    "mixes corrupted views during training. Fogguard lowers the mean corruption error on ImageNet-C from 48.2 to 39.5.",
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("instances")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


@pytest.fixture(scope="module")
def answerer(index):
    return answerer_over(index)


@pytest.mark.parametrize("question, instance", [
    ("Are there papers on quantizing speech recognition models such as Whisper?", "Whisper"),
    ("speculative decoding for speech recognizers like Whisper", "Whisper"),
    ("Medusa-style heads for speculative decoding: how do they draft tokens?", "Medusa"),
])
def test_a_topic_and_its_instance_both_absent_is_a_neighbouring_topic(answerer, question, instance):
    result = answerer.ask(question)
    assert result.refusal_reason is RefusalReason.OFF_TOPIC and not result.citations
    assert instance in result.refusal_explanation  # this test refused it, by the instance it names


@pytest.mark.parametrize("question, paper", [
    ("Which papers quantize the weights of language models such as Llama?", "Bitshrink"),  # the topic is here, Llama is not
    ("speculative decoding with draft models such as Medusa", "Leapdraft"),
])
def test_an_instance_of_a_topic_the_corpus_has_is_only_an_example(answerer, question, paper):
    result = answerer.ask(question)
    assert result.refusal_reason is None and paper in result.answer


def test_an_acronym_before_style_borrows_an_idea_and_names_no_instance(answerer):
    """ "GAN-style" says how (adversarially), not which model: it is never read as an absent instance."""
    judge = answerer.judge
    assert judge._example_unknown("Has anyone trained a classifier against corruptions GAN-style?") == []
    assert judge._example_unknown("Any Medusa-style heads, like Hydra?") == ["Medusa", "Hydra"]


def test_two_papers_called_by_name_split_the_core_as_a_comparison_does(index):
    """Each paper holds its own name and not the other's: with the split-term test at its most eager (`core_term_gap` 0),
    a question calling both by name is still about them, never a neighbouring topic."""
    result = answerer_over(index, core_term_gap=0.0).ask(
        "Bitshrink and Leapdraft both make language models cheaper to run: how do their approaches differ?")
    assert result.refusal_reason is None and {"Bitshrink", "Leapdraft"} <= set(result.answer.replace("*", " ").split())
