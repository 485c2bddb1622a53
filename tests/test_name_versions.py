"""A name the corpus writes only with other version numbers is another thing ("EAGLE-4" where abstracts name EAGLE-2 and
EAGLE-3), and a word of the language is never a misspelt paper name ("How fast is..." does not call CAST). Papers written
for the test."""

import pytest

from qa_service.records import RefusalReason
from tests.conftest import offline_answerer

PAPERS = [
    "Speculative decoding drafts tokens with a small model. Recent trees such as SpecTree-2 and SpecTree-3 ignore batch size. "
    "We introduce CAST, a cost-aware tree that adapts to the GPU. CAST decodes up to 3.1 times faster than SpecTree-3 on "
    "six tasks with a 7B model.",
    "Routing queries between models saves cost. We present RouteKit, which learns a router from preference data. RouteKit "
    "cuts serving cost by 40% at equal quality on Qwen2.5-7B and Llama-3.1-8B.",
    "Protein design needs fast scoring. We propose FoldScore, a learned energy that ranks designs 50 times faster than "
    "physics-based scoring.",
]


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    return offline_answerer(tmp_path_factory.mktemp("versions"), PAPERS)


@pytest.mark.parametrize("question", [
    "How fast is SpecTree-4 compared to SpecTree-3?",
    "What speedup does SpecTree-4 report?",
])
def test_another_version_of_a_name_the_corpus_writes_is_not_in_the_corpus(answerer, question):
    result = answerer.ask(question)
    assert result.refusal_reason is RefusalReason.NOT_IN_CORPUS and not result.citations
    assert "SpecTree-4" in result.refusal_explanation


def test_the_versions_the_corpus_writes_are_its_own(answerer):
    result = answerer.ask("Which paper decodes faster than SpecTree-3?")
    assert result.refusal_reason is None and [c.label for c in result.citations][:1] == ["CAST"]


def test_a_version_that_begins_one_the_corpus_writes_is_of_its_family(answerer):
    """Qwen2 is written before Qwen2.5's ".5": a question on Qwen2 models is not about a name no abstract knows."""
    result = answerer.ask("Which paper routes queries between Qwen2 models?")
    assert result.refusal_reason is None and {c.label for c in result.citations} == {"RouteKit"}


def test_a_size_is_no_version_of_a_name(answerer):
    """"12B" where an abstract writes "7B": a size, not another version of a thing."""
    result = answerer.ask("Does CAST also work with a 12B model?")
    assert result.refusal_reason is not RefusalReason.NOT_IN_CORPUS


def test_a_word_of_the_language_is_no_misspelt_paper_name(answerer):
    """"fast" is one edit from CAST; read as CAST misspelt, the question below was answered from CAST's abstract."""
    judge, found = answerer.judge, answerer.retriever.retrieve("How fast is SpecTree-4 compared to SpecTree-3?", 5)
    named = [h for h in found.hits if h.named]
    assert named and not judge._by_label(named, "How fast is SpecTree-4 compared to SpecTree-3?", found)
    assert [h.label for h in judge._by_label(named, "How fsat is CASTT compared to SpecTree-3?", found)] == ["CAST"]
