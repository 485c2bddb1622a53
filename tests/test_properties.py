"""Arbitrary Unicode, NUL, bidi controls and huge paragraphs never crash the text pipeline."""

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qa_service.chunking import chunk_text
from qa_service.corpus import load_corpus
from qa_service.errors import CorpusError
from qa_service.textclean import clean_text, sentence_spans
from qa_service.tokens import count_tokens

NASTY = st.sampled_from(["\x00", "\u202e", "\u2066", "\u200b", "\ufeff", "$", "\\textbf{", "}", "**", "_", "~", "\\%", ". ", "\n", "\r\n", "e.g. ", "×", "😀", "\ud7ff"])
TEXT = st.lists(st.one_of(st.text(max_size=40), NASTY), max_size=60).map("".join)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(TEXT)
def test_clean_text_never_crashes_and_is_single_line(raw):
    text = clean_text(raw)
    assert "\n" not in text and "\x00" not in text and "\u202e" not in text
    assert text == text.strip()


@PROPERTY
@given(TEXT)
def test_sentence_spans_map_back_in_order(raw):
    text = clean_text(raw)
    spans = sentence_spans(text)
    last = 0
    for start, end in spans:
        assert last <= start < end <= len(text)
        assert text[start:end] == text[start:end].strip()
        last = end


@PROPERTY
@given(TEXT, st.integers(min_value=1, max_value=5), st.integers(min_value=8, max_value=200))
def test_chunks_cover_the_text_within_the_window(raw, sentences, max_tokens):
    text = clean_text(raw)
    chunks = chunk_text("p:1", text, count_tokens, sentences, max_tokens)
    for chunk in chunks:
        assert text[chunk.start : chunk.end] == chunk.text and chunk.text.strip()
        assert chunk.tokens <= max_tokens
    covered = "".join(c.text for c in chunks).replace(" ", "")
    assert covered == text.replace(" ", "")  # nothing lost, nothing invented


@settings(max_examples=3, deadline=None)
@given(st.integers(min_value=20_000, max_value=60_000))
def test_huge_paragraph_is_chunked(size):
    text = clean_text(("word " * size) + "end.")
    chunks = chunk_text("p:1", text, count_tokens, 3, 180)
    assert chunks and all(c.tokens <= 180 for c in chunks)


@PROPERTY
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_seed_parser_accepts_or_rejects_cleanly(tmp_path_factory, paragraphs):
    path = tmp_path_factory.mktemp("prop") / "s.txt"
    path.write_text("ICLR 2026 Papers\n\n" + "\n\n".join(paragraphs), encoding="utf-8", errors="surrogatepass")
    try:
        papers = load_corpus([path])
    except CorpusError as exc:
        assert "s.txt" in exc.message
        return
    assert [p.id for p in papers] == [f"s:{i}" for i in range(1, len(papers) + 1)]
    assert all(p.text and p.label for p in papers)


@PROPERTY
@given(st.dictionaries(st.sampled_from(["id", "title", "abstract", "authors", "year", "keywords"]),
                       st.one_of(st.none(), st.integers(), TEXT, st.lists(TEXT, max_size=3))))
def test_jsonl_reader_accepts_or_rejects_cleanly(tmp_path_factory, record):
    path = tmp_path_factory.mktemp("prop") / "p.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    try:
        (paper,) = load_corpus([path])
    except CorpusError as exc:
        assert "p.jsonl:1" in exc.message
        return
    assert paper.id == str(record["id"]).strip() and paper.text
