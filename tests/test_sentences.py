"""Sentence vectors from the ingest's chunk pass, kept beside the corpus: answers embed only the question."""

import numpy as np
import pytest

from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora

from qa_service.answering.extractive import ExtractiveModel
from qa_service.corpus.reading import load_corpus
from qa_service.corpus.roles import Role, RoledSentence, sentence_roles
from qa_service.records import Passage, Source
from qa_service.corpus.textclean import sentence_spans
from qa_service.store.embeddings import MiniLMEmbedding
from qa_service.store.index import Index
from qa_service.store.sentences import SentenceVectors
from tests.conftest import ROOT, ingested, make_settings

OWN = ROOT / "tests" / "data" / "own_corpus.jsonl"


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    return ingested(tmp_path_factory.mktemp("own-sentences"), OWN)


def test_the_chunk_pass_gives_the_chunk_vectors_unchanged_and_each_sentence_one():
    embedder = MiniLMEmbedding()
    texts = ["We propose Zorblax. It drafts tokens with a small model. It is 2.7× faster.", "A second, shorter chunk here."]
    spans = [sentence_spans(t) for t in texts]
    chunks, per_span = embedder.with_sentences(texts, spans)
    assert np.allclose(np.asarray(chunks), np.asarray(embedder(texts)), atol=1e-4)
    assert [len(v) for v in per_span] == [3, 1]
    alone = embedder([texts[0][s:e] for s, e in spans[0]])
    for pooled, own_vector in zip(per_span[0], alone):
        assert float(np.dot(pooled, own_vector)) > 0.6  # the same sentence, read in its context


def test_every_sentence_of_the_corpus_is_kept_and_found_by_its_text(own):
    papers = load_corpus([OWN])
    sentences = [p.text[s:e] for p in papers for s, e in sentence_spans(p.text)]
    assert len(own.sentences) == len(set(sentences))
    assert all(v is not None and v.shape == (384,) for v in own.sentences.lookup(sentences))
    assert own.sentences.lookup(["A sentence no abstract has."]) == [None]


def test_a_second_ingest_keeps_what_the_first_embedded(own):
    """An unchanged re-ingest embeds nothing, and the file keeps every sentence."""
    before = len(own.sentences)
    own.ingest(load_corpus([OWN]))
    assert len(SentenceVectors(own.sentences.path)) == before


def test_an_answer_embeds_only_its_question(own):
    answerer = build_answerer(own.settings, ExtractiveModel(), Corpora(own.settings, own))
    result = answerer.ask("How does Zorblax do on MMLU?")
    assert result.citations and list(answerer.corpus._cache) == ["How does Zorblax do on MMLU?"]


def test_a_damaged_file_is_no_file(tmp_path):
    path = tmp_path / "x.sentences.npz"
    path.write_bytes(b"not a numpy file")
    assert SentenceVectors(path).lookup(["anything"]) == [None]


@pytest.mark.parametrize("mode,kept", [("pooled", True), ("off", False)])
def test_the_other_modes_pool_the_chunk_run_or_keep_nothing(tmp_path, mode, kept):
    settings = make_settings(tmp_path / "data", sentence_vectors=mode)
    index = Index(settings)
    index.ingest(load_corpus([OWN]))
    assert (len(index.sentences) > 0) is kept
    assert index.stats().chunks > 0  # the chunks are embedded and written either way


def _rewrite(path, **changes):
    """The sentence file with some of its arrays replaced (or, given None, left out)."""
    with np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    arrays.update(changes)
    with open(path, "wb") as out:
        np.savez(out, **{name: array for name, array in arrays.items() if array is not None})


def _candidate_roles(index, paper):
    """The role the offline model gives each sentence of the paper, answering through the service's corpus view."""
    answerer = build_answerer(index.settings, ExtractiveModel(), Corpora(index.settings, index))
    source = Source(1, paper.id, paper.label, paper.text, [Passage(0, len(paper.text), paper.text)])
    (found,) = ExtractiveModel()._candidates("What does it do?", [source], answerer.corpus, False)
    return {c.start: c.role for c in found}


def test_the_ingest_stores_each_abstracts_sentence_roles(own):
    papers = load_corpus([OWN])
    assert all(own.sentences.roles(p.text) == sentence_roles(p.text) for p in papers)
    assert own.sentences.roles("An abstract no ingest saw.") is None


def test_answers_read_the_stored_roles_not_derive_them(tmp_path):
    index = ingested(tmp_path / "data", OWN)
    paper = load_corpus([OWN])[0]
    with np.load(index.sentences.path) as data:
        table = data["role_table"].copy()
    table[:, 2] = RoledSentence(0, 0, Role.AVAILABILITY).code  # no rule would call every sentence so
    _rewrite(index.sentences.path, role_table=table)
    assert set(_candidate_roles(Index(index.settings), paper).values()) == {Role.AVAILABILITY}


@pytest.mark.parametrize("change", [{"role_keys": None, "role_offsets": None, "role_table": None, "role_rules": None},
                                    {"role_rules": np.asarray("rules of another version")}])
def test_a_file_without_roles_or_with_other_rules_still_serves_and_roles_are_derived(tmp_path, change):
    """A sentence file written before roles were kept (or under other rules): vectors found, roles derived, then stored."""
    index = ingested(tmp_path / "data", OWN)
    papers = load_corpus([OWN])
    _rewrite(index.sentences.path, **change)
    old = Index(index.settings)
    sentences = [papers[0].text[s:e] for s, e in sentence_spans(papers[0].text)]
    assert old.sentences.roles(papers[0].text) is None and all(v is not None for v in old.sentences.lookup(sentences))
    derived = {r.start: r.role for r in sentence_roles(papers[0].text)}
    assert _candidate_roles(old, papers[0]) == derived
    old.ingest(papers)  # unchanged: nothing re-embedded, the roles stored
    assert SentenceVectors(old.sentences.path).roles(papers[0].text) == sentence_roles(papers[0].text)


def test_a_role_code_round_trips():
    for role in Role:
        for figures in (False, True):
            for negative in (False, True):
                sentence = RoledSentence(3, 9, role, figures, negative)
                assert RoledSentence.from_code(3, 9, sentence.code) == sentence
    with pytest.raises(ValueError):
        RoledSentence.from_code(0, 1, 7)


def test_a_sentence_that_is_a_whole_chunk_takes_the_chunks_vector(tmp_path):
    """The same text is the same vector: a one-sentence chunk is not embedded a second time."""
    seen = []

    class Counting(MiniLMEmbedding):
        def __call__(self, input):
            seen.extend(input)
            return super().__call__(input)

    sentences = SentenceVectors(tmp_path / "s.npz")
    texts = ["One sentence alone here.", "First of two here. Second of two here."]
    vectors = sentences.embed_chunks(Counting(), texts)
    assert sorted(seen) == sorted([*texts, "First of two here.", "Second of two here."])
    sentences.save()
    (alone,) = MiniLMEmbedding()(["One sentence alone here."])
    assert np.allclose(sentences.lookup(["One sentence alone here."])[0], alone, atol=2e-3)
    assert np.allclose(vectors[0], alone, atol=1e-5)


def test_an_answer_embeds_its_question_once(tmp_path):
    """Retrieval embeds the question; the answer's sentence choice takes it from the query cache, not a second run."""
    seen = []

    class Counting(MiniLMEmbedding):
        def __call__(self, input):
            seen.extend(input)
            return super().__call__(input)

    index = ingested(tmp_path / "data", OWN)
    index.embedder = Counting()
    answerer = build_answerer(index.settings, ExtractiveModel(), Corpora(index.settings, index))
    result = answerer.ask("How does Zorblax do on MMLU?")
    assert result.citations and seen == ["How does Zorblax do on MMLU?"]
