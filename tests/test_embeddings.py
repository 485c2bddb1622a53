import numpy as np
import pytest
from chromadb.utils.embedding_functions import config_to_embedding_function, known_embedding_functions

from qa_service.store.embeddings import MiniLMEmbedding, embedding_function
from qa_service.errors import ConfigError
from tests.conftest import make_settings


def test_embeds_offline_normalised_and_meaningful():
    ef = MiniLMEmbedding()
    a, b, c = ef(["ternary weight quantization of LLMs", "compressing model weights to three values", "EEG brain dynamics"])
    assert a.shape == (384,)
    assert np.isclose(np.linalg.norm(a), 1.0, atol=1e-4)
    assert float(a @ b) > float(a @ c) + 0.2


def test_batches_give_the_same_vectors_as_single_calls():
    ef = MiniLMEmbedding(batch_size=2)
    texts = ["short", "a much longer sentence about speculative decoding trees", "medium length text"]
    batched = ef(texts)
    for text, vector in zip(texts, batched):
        assert np.allclose(vector, ef([text])[0], atol=1e-5)


def test_query_cache_is_bounded_and_returns_the_same_vector():
    ef = MiniLMEmbedding(cache_size=2)
    first = ef.embed_query(["q1"])[0]
    ef.embed_query(["q2"])
    ef.embed_query(["q3"])
    assert list(ef._cache) == ["q2", "q3"]
    assert np.allclose(ef.embed_query(["q1"])[0], first)


def test_registered_with_chromadb_so_a_reopened_collection_rebuilds_it():
    ef = MiniLMEmbedding(batch_size=8, threads=1)
    assert known_embedding_functions[MiniLMEmbedding.name()] is MiniLMEmbedding
    rebuilt = config_to_embedding_function({"name": ef.name(), "config": ef.get_config()})
    assert isinstance(rebuilt, MiniLMEmbedding) and rebuilt.get_config() == ef.get_config()


def test_openai_embedding_needs_a_key(tmp_path):
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        embedding_function(make_settings(tmp_path, embedding="openai"))
    with pytest.raises(ConfigError, match="unknown embedding"):
        embedding_function(make_settings(tmp_path, embedding="word2vec"))
