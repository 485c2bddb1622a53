"""A model's version is part of its name: GPT-4.5 is not GPT-4.1, Qwen2.5-7B-Instruct is one model, not "Qwen2" and "5-7B".

Five papers written for these tests, each naming models with versions as abstracts do (GPT-4.1, Qwen3-1.7B-Base).
"""

import re

import pytest

from qa_service.answering.claims import variant
from qa_service.answering.evidence import mentions
from qa_service.answering.extractive import ExtractiveModel
from qa_service.corpus.labels import named_things
from qa_service.corpus.names import occurs
from qa_service.corpus.reading import load_corpus
from qa_service.records import SentenceKind, SentenceVerdict, Source
from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora
from tests.conftest import ROOT, ingested

VERSIONS = ROOT / "tests" / "data" / "versions_corpus.jsonl"


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    index = ingested(tmp_path_factory.mktemp("versions-data"), VERSIONS)
    return build_answerer(index.settings, ExtractiveModel(), Corpora(index.settings, index))


def test_a_versioned_name_is_one_name_and_a_full_stop_ends_it():
    text = "We fine-tune Qwen2.5-7B-Instruct and compare with GPT-4.1. LLaVA-1.5 scores 3.5 points lower."
    assert named_things(text) >= {"Qwen2.5-7B-Instruct", "GPT-4.1", "LLaVA-1.5"}
    assert not {"Qwen2", "5-7B-Instruct", "GPT-4", "LLaVA-1"} & named_things(text)


@pytest.mark.parametrize("text,name,found", [
    ("frontier models such as GPT-4.1", "GPT-4", False),  # another version
    ("frontier models such as GPT-4.1", "GPT-4.1", True),
    ("frontier models such as GPT-4.1.", "GPT-4.1", True),  # the full stop ends the sentence, not the name
    ("we pretrain Qwen3-1.7B-Base", "7B", False),  # 7B is not 1.7B
    ("we pretrain Qwen3-1.7B-Base", "1.7B", True),
    ("we fine-tune Qwen2.5-7B", "7B", True),  # after the hyphen: the size of that model
    ("we fine-tune Qwen2.5-7B", "Qwen2", False),
    ("we fine-tune Qwen2-VL", "Qwen2", True),  # a variant's suffix after a hyphen keeps the version
    ("results on the H100 and H20", "H10", False),
])
def test_a_name_occurs_only_as_the_version_it_names(text, name, found):
    assert occurs(text.lower(), name.lower()) is found
    assert mentions(text, name) is found  # in any spelling: case, hyphens, spaces


def test_a_versioned_model_the_abstract_does_not_mention_is_named_whole(answerer):
    result = answerer.ask("Was Polisher tested on Qwen2.5-7B-Instruct?")
    first = result.sentences[0]
    assert first.kind is SentenceKind.SERVICE, result.answer
    assert "does not mention Qwen2.5-7B-Instruct" in first.text and "5-7B" not in first.text.replace("Qwen2.5-7B", "")


@pytest.mark.parametrize("question,absent", [
    ("How does GPT-4.5 do on Polisher?", "GPT-4.5"),  # the abstract gives GPT-4.1's score: not GPT-4.5's
    ("How does GPT-4 do on Polisher?", "GPT-4"),
    ("Does Ember work for Llama-3.1 70B?", "Llama-3.1"),  # Ember reports Llama-3 8B
    ("Does Tilde help Qwen3-1.5B-Base?", "Qwen3-1.5B-Base"),  # Tilde pretrains Qwen3-1.7B-Base
])
def test_another_version_of_a_model_is_said_to_be_absent(answerer, question, absent):
    result = answerer.ask(question)
    first = result.sentences[0]
    assert first.kind is SentenceKind.SERVICE and absent in first.text, result.answer
    assert result.refusal_reason is None or result.refusal_reason.value == "detail_missing"


@pytest.mark.parametrize("question,figure", [
    ("How does GPT-4.1 do on Polisher?", "23.4"),
    ("Does Ember work for Llama-3 8B?", "0.4%"),
    ("What does Tilde do for Qwen3-1.7B-Base?", "17%"),
    ("How much does Sparrow raise Qwen3-8B's task success?", "35.8%"),
    ("What does Compass do to Llama 3.1's success rate?", "79.1%"),  # a version typed with a space, then a possessive
])
def test_the_version_the_abstract_gives_is_answered_without_an_absence(answerer, question, figure):
    result = answerer.ask(question)
    assert result.refusal_reason is None and figure in result.answer, result.answer
    assert all(s.kind is not SentenceKind.SERVICE for s in result.sentences), result.answer


@pytest.mark.parametrize("claim,ticked", [
    ("GPT-4.1 reaches a baseline score of 23.4 on Polisher [1].", True),
    ("GPT-4.5 reaches a baseline score of 23.4 on Polisher [1].", False),  # a model the abstract never names
    ("GPT-4 reaches a baseline score of 23.4 on Polisher [1].", False),  # GPT-4.1's score, given to GPT-4
])
def test_a_check_mark_needs_the_version_the_claim_names(answerer, claim, ticked):
    paper = next(p for p in load_corpus([VERSIONS]) if p.id == "ver:2")
    result = answerer.checker.check(claim, [Source(1, paper.id, paper.label, paper.text)])
    verdict = result.sentences[0].verdict
    assert (verdict is SentenceVerdict.SUPPORTED) is ticked, (verdict, result.sentences[0].reason)


def test_a_verb_after_a_versioned_name_is_no_variant_of_it():
    """"Qwen3-1.7B-Base gains" in the quote is the model doing what the claim says it does; "GPT-4o mini" is another model."""
    stems = lambda text: set(re.findall(r"[a-z]{3,}", text))  # noqa: E731
    assert variant("qwen3-1.7b-base", "on qwen3-1.7b-base, tilde gains 17%.", "qwen3-1.7b-base gains 17%.", stems) == ""
    assert variant("gpt-4o", "gpt-4o reaches 21.7%.", "gpt-4o mini reaches 21.7%.", stems) == "gpt-4o mini"


@pytest.mark.parametrize("name,claim,quote", [
    ("lyra-2", "lyra-2 generalises to unseen tasks.", "lyra-2 shows strong generalisation to unseen tasks."),  # a verb's -s
    ("rope", "queries with rope explain 74% of activity.", "queries with rope best explain 74% of activity."),  # a superlative
    ("marl", "a marl method for routing.", "marl multi-agent routing."),  # the front of a compound
])
def test_what_a_name_does_is_no_variant_of_it(name, claim, quote):
    stems = lambda text: {w[:-1] if w.endswith("s") else w for w in re.findall(r"[a-z]{3,}", text)}  # noqa: E731
    assert variant(name, claim, quote, stems) == ""
    assert variant("gpt-4o", "gpt-4o reaches 21.7%.", "gpt-4o nano reaches 21.7%.", stems) == "gpt-4o nano"


def test_a_claim_whose_model_is_followed_by_its_verb_in_the_quote_is_ticked(answerer):
    paper = next(p for p in load_corpus([VERSIONS]) if p.id == "ver:4")
    claim = "On Qwen3-1.7B-Base, Tilde gains 17% on average over eight math benchmarks [1]."
    result = answerer.checker.check(claim, [Source(1, paper.id, paper.label, paper.text)])
    assert result.sentences[0].verdict is SentenceVerdict.SUPPORTED, result.sentences[0].reason
