"""The core-pull test: a word of the question's core that no retrieved paper holds, and that pulls the question away from
them, makes the question a neighbouring topic; a paraphrase's word pulls it towards them. Papers written for the test."""


import pytest

from qa_service.answering.evidence import without_words, words_meeting
from qa_service.records import RefusalReason
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Large language models are expensive to serve because their weights occupy tens of gigabytes. We propose Bitshrink, a "
    "post-training quantization method that stores the weights of language models in 3 bits with a learned rounding per "
    "group. On models from 7B to 70B parameters, Bitshrink keeps perplexity within 0.3 of the 16-bit model and cuts memory "
    "by 4.8x.",
    "Quantization-aware training of transformers is unstable at 2 bits. We introduce Ternlock, which trains language models "
    "with ternary weights and a straight-through estimator that keeps a full-precision shadow copy. Ternlock matches 8-bit "
    "accuracy on five reasoning benchmarks while using 10x less memory.",
    "Small language models learn poorly from hard labels alone. We present Tutorly, which distils a 70B teacher into a 1B "
    "student by matching the teacher's token distributions on generated instructions. The student recovers 92% of the "
    "teacher's score on instruction following.",
    "Image classifiers fail under common corruptions such as blur and fog. We propose Fogguard, a data augmentation that "
    "mixes corrupted views during training. Fogguard lowers the mean corruption error on ImageNet-C from 48.2 to 39.5.",
    "Retrieval-augmented generation spends most of its budget reading passages. We introduce Skimmer, which compresses "
    "retrieved passages into short summaries before the language model reads them. Skimmer halves the latency of question "
    "answering with no loss in exact match.",
]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pull")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def answerer(index, **overrides):
    return answerer_over(index, **overrides)


@pytest.mark.parametrize("question", [
    "Is there work on distilling protein language models?",  # distillation is here, of chat models; proteins nowhere
    "Is there work on compressing passages for retrieval over legal contracts?",  # compressing passages is here; contracts not
])
def test_a_word_that_pulls_the_question_away_from_the_papers_makes_it_a_neighbouring_topic(index, question):
    result = answerer(index).ask(question)
    assert result.refusal_reason is RefusalReason.OFF_TOPIC and not result.citations
    off = answerer(index, core_pull=2.0).ask(question)  # the test off: the nearest paper's sentences were the answer
    assert off.refusal_reason is None and off.citations


def test_a_paraphrase_word_pulls_the_question_towards_the_paper(index):
    """No abstract says "foggy weather", and the words carry most of the question; without them it is further from Fogguard."""
    result = answerer(index).ask("How do I keep an image classifier accurate in foggy weather?")
    assert result.refusal_reason is None and "Fogguard" in result.answer and result.grounded


def test_a_turn_of_phrase_is_not_weighed(index):
    """Words that carry little of the question ("big", "ones") are how it is put, whatever their pull."""
    judge = answerer(index).judge
    assert judge.settings.core_pull_moves > 0
    moved = 1 - judge.similarity("Which papers distil big chatbots into tiny ones?", "Which papers distil chatbots into tiny?")
    assert moved < judge.settings.core_pull_moves


def test_the_question_less_the_words_of_some_terms():
    question = "Are there papers on quantizing speech recognition models, like Whisper?"
    assert without_words(question, {"speech", "recognit"}) == "Are there papers on quantizing models, like Whisper?"
    assert without_words(question, set()) == question


def test_the_refusal_says_which_words_the_papers_do_not_speak_of(index):
    result = answerer(index).ask("Is there work on compressing passages for retrieval over legal contracts?")
    assert result.refusal_explanation == ("No paper in the corpus is about this. None of the abstracts closest to the question "
                                          "speaks of legal contracts.")


def test_the_words_of_some_terms_as_the_question_writes_them():
    question = "Are there papers on quantizing speech recognition models, like Whisper?"
    assert words_meeting(question, {"speech", "recognit", "whisper"}) == ["speech recognition", "Whisper"]
    assert words_meeting("speech-to-text or speech?", {"speech", "text"}) == ["speech-to-text", "speech"]
