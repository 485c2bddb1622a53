"""MiniLM reads a question in another language as its English words alone: the glossed terms, its names and the words English
uses as often, in its order. Fed the question with the terms beside its words, it reads mostly words it was never trained
on, and a list question in Spanish met its papers far less often. Papers written for the test."""

from dataclasses import replace

import pytest

from qa_service.answering.extractive import ExtractiveModel
from qa_service.records import ModelRequest, Reading, RefusalReason
from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Transformer language models remain opaque. We present CircuitLens, an interpretability method that traces the circuits "
    "behind each prediction by patching attention heads. CircuitLens recovers known circuits on six tasks.",
    "Large language models are costly to serve. We introduce TinyBits, a post-training quantization method that stores "
    "weights in 3 bits with learned rounding. TinyBits keeps perplexity within 0.3 of the full-precision model.",
    "Protein structures are slow to predict. We present FoldFast, which predicts protein folds from sequence alone and runs "
    "ten times faster than previous predictors.",
]

SPANISH = "¿Qué trabajos estudian la interpretabilidad de los circuitos en GPT-2?"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reading")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def test_the_meaning_is_the_english_terms_and_names_in_the_question_order(index):
    reading = answerer_over(index).read(SPANISH)
    assert reading.text == ("¿Qué trabajos estudian la interpretabilidad (interpretability) de los circuitos (circuit) en GPT-2?")
    # "la", "de", "en": how Spanish asks, gone; "trabajos estudian", no term of the corpus's, stay as written
    assert reading.meaning == "trabajos estudian interpretability circuit GPT-2"
    assert reading.embedded == reading.meaning


def test_an_english_question_and_the_setting_off_have_no_meaning_of_their_own(index):
    english = answerer_over(index).read("Which papers study interpretability?")
    assert english == Reading("Which papers study interpretability?") and english.embedded == english.text
    off = answerer_over(index, english_reading=False).read(SPANISH)
    assert off.meaning == "" and "(interpretability)" in off.text  # the gloss stays: only what MiniLM reads changes


class Recording(ExtractiveModel):
    """The offline model, keeping each request it is given."""

    def __init__(self):
        super().__init__()
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest):
        self.requests.append(request)
        return super().complete(request)


def test_retrieval_and_the_offline_model_embed_the_english_words(index, monkeypatch):
    """The dense side embeds the meaning, and the offline model is given it to choose sentences by; the judge's closeness
    reads the question as BM25 does."""
    seen: list[str] = []
    original = index.embedder.embed_query
    monkeypatch.setattr(index.embedder, "embed_query", lambda texts: seen.extend(texts) or original(texts))
    model = Recording()
    settings = index.settings
    result = build_answerer(settings, model, Corpora(settings, index)).ask(SPANISH)
    assert result.refusal_reason is None and {c.label for c in result.citations} == {"CircuitLens"}
    assert seen[0] == "trabajos estudian interpretability circuit GPT-2"  # the dense query, first embedded
    assert model.requests[-1].meaning == seen[0]
    assert "(interpretability)" in model.requests[-1].question  # its word tests read the text
    seen.clear()
    off = Recording()
    build_answerer(replace(settings, english_reading=False), off, Corpora(settings, index)).ask(SPANISH)
    assert "interpretabilidad" in seen[0] and off.requests[-1].meaning == ""


def test_the_offline_model_chooses_sentences_by_the_meaning(index):
    """Given a meaning, the sentences closest to it are the answer's, whatever the text's own words."""
    answerer = answerer_over(index)
    prepared = answerer.prepare("What does CircuitLens do?")
    assert prepared.prompt is not None
    sources, about, model = prepared.prompt.sources, prepared.verdict.about, ExtractiveModel()
    by_text = model.answer("What does CircuitLens do?", sources, answerer.corpus, about)
    by_meaning = model.answer("What does CircuitLens do?", sources, answerer.corpus, about,
                              meaning="opaque transformer language models")
    assert "remain opaque" in by_meaning and "remain opaque" not in by_text


def test_the_dense_side_ranks_by_the_meaning_and_bm25_by_the_text(index):
    retriever = answerer_over(index).retriever
    dense = retriever.search(Reading("qwxz vbnm", "protein folds from sequence"), 3, mode="dense", texts=False)
    assert dense[0].label == "FoldFast"
    sparse = retriever.search(Reading("protein folds", "quantization of weights"), 3, mode="bm25", texts=False)
    assert sparse[0].label == "FoldFast"
    found = retriever.retrieve(Reading("protein folds", "protein folds from sequence"), 3)
    assert found.meaning == "protein folds from sequence"


def test_the_search_route_reads_the_meaning(index):
    from qa_service.web.app import create_app
    app = create_app(index.settings, index=index)
    app.config["TESTING"] = True
    response = app.test_client().post("/api/search", json={"question": SPANISH, "k": 1})
    assert response.status_code == 200 and response.get_json()["results"][0]["label"] == "CircuitLens"


def test_a_foreign_question_of_no_english_word_is_read_as_asked(index):
    """Nothing glossed, nothing kept: MiniLM reads the question itself rather than nothing."""
    reading = answerer_over(index).read("¿Qué dicen los trabajos sobre los gatos y los perros?")
    assert reading.meaning == ""
    refused = answerer_over(index).ask("¿Qué dicen los trabajos sobre los gatos y los perros?")
    assert refused.refusal_reason in (RefusalReason.OFF_TOPIC, RefusalReason.NOT_IN_CORPUS, RefusalReason.NOT_STATED)
