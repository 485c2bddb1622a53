import pytest

from qa_service.corpus.chunking import chunk_text
from qa_service.store.embeddings import MAX_TOKENS, MiniLMEmbedding
from qa_service.corpus.tokens import count_tokens, get_encoding, tiktoken_cache_dir


def test_tiktoken_encodings_load_offline():
    enc = get_encoding("cl100k_base")
    assert enc.decode(enc.encode("ternary quantization")) == "ternary quantization"
    assert get_encoding("o200k_base").n_vocab > 199_000
    assert any(tiktoken_cache_dir().iterdir())


def test_unbundled_encoding_is_refused():
    with pytest.raises(ValueError, match="not bundled"):
        get_encoding("r50k_base")


def test_chunks_map_back_to_the_text(seed_papers):
    for paper in seed_papers:
        chunks = chunk_text(paper.id, paper.text, count_tokens, 3, 180)
        assert chunks, paper.id
        for position, chunk in enumerate(chunks):
            assert paper.text[chunk.start : chunk.end] == chunk.text
            assert chunk.position == position and chunk.id == f"{paper.id}#{position}"
            assert chunk.tokens <= 180
        assert chunks[0].start == 0 and chunks[-1].end == len(paper.text)


def test_three_sentences_per_chunk_unless_too_long():
    text = " ".join(f"Sentence number {i} is here." for i in range(1, 8))
    chunks = chunk_text("p", text, count_tokens, 3, 180)
    assert [c.text.count(".") for c in chunks] == [3, 3, 1]


def test_overlong_sentence_is_split_at_word_boundaries():
    text = "Start. " + " ".join(["word"] * 500) + " end."
    chunks = chunk_text("p", text, count_tokens, 3, 50)
    assert all(c.tokens <= 50 for c in chunks)
    assert all(not c.text.startswith(" ") and not c.text.endswith(" ") for c in chunks)
    assert " ".join(c.text for c in chunks).split() == text.split()


def test_seed_chunks_fit_the_embedding_window(seed_papers):
    """No chunk is silently truncated by MiniLM's 256 word-piece window."""
    embedder = MiniLMEmbedding()
    for paper in seed_papers:
        for chunk in chunk_text(paper.id, paper.text, count_tokens, 3, 180):
            assert embedder.count_tokens(chunk.text) <= MAX_TOKENS, chunk.id
