"""Arbitrary Unicode, NUL, bidi controls and huge paragraphs never crash the text pipeline, and no route's body gives a 5xx."""

import json
from urllib.parse import quote_from_bytes

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from qa_service.corpus.chunking import chunk_text
from qa_service.corpus.reading import load_corpus
from qa_service.errors import CorpusError
from qa_service.corpus.textclean import clean_text, sentence_spans
from qa_service.corpus.tokens import count_tokens
from qa_service.web.app import create_app

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


# Every route's JSON body: arbitrary Unicode (lone surrogates too), deep nesting, and numbers,
# lists or null where strings belong. Whatever arrives, the answer is never a 5xx.

ROUTE_PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CHARACTERS = st.one_of(st.characters(), st.characters(categories=["Cs"]))  # Cs: lone surrogates, as JSON's \ud800 sends them
LONE = st.tuples(st.text(max_size=10), st.characters(categories=["Cs"])).map("".join)
STRING = st.one_of(st.text(CHARACTERS, max_size=30), NASTY, LONE)
QUESTIONS = st.sampled_from(["What is RouterArena?", "How many tasks are in NewtonBench?", "and how fast is it?", "Which papers study LLM routers?"])
QUESTION = st.one_of(QUESTIONS, st.tuples(QUESTIONS, STRING).map("".join), STRING)


class Raw(str):
    """JSON text put into a body as it is: nesting deeper than json.dumps would write."""


DEEP = st.integers(min_value=1, max_value=3000).map(lambda n: Raw("[" * n + "]" * n))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(), STRING, DEEP)
JSON = st.recursive(SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(STRING, inner, max_size=3), max_leaves=6)


def encode(value) -> str:
    """json.dumps, except that Raw is written as it is; lone surrogates come out as \\ud800 escapes."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(encode(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{encode(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


TURN = st.fixed_dictionaries({"role": st.one_of(st.sampled_from(["user", "assistant"]), JSON), "content": st.one_of(QUESTION, JSON)})
GOOD_TURN = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]), "content": st.one_of(QUESTIONS, st.text(max_size=40))})
ASK_BODY = st.one_of(
    st.fixed_dictionaries({"question": QUESTIONS}, optional={"k": st.integers(1, 8), "history": st.lists(GOOD_TURN, max_size=2)}),
    st.fixed_dictionaries({}, optional={"question": st.one_of(QUESTION, JSON), "k": st.one_of(st.integers(-2, 60), JSON),
                                        "history": st.one_of(st.lists(TURN, max_size=3), JSON)}),
    JSON,
)
PART = st.fixed_dictionaries({"type": st.one_of(st.just("text"), JSON)}, optional={"text": st.one_of(QUESTION, JSON)})
MESSAGE = st.fixed_dictionaries({"role": st.one_of(st.sampled_from(["system", "user", "assistant", "tool"]), JSON)},
                                optional={"content": st.one_of(QUESTION, st.lists(PART, max_size=3), JSON)})
GOOD_CONTENT = st.one_of(QUESTIONS, QUESTIONS.map(lambda q: [{"type": "text", "text": q}]))
V1_BODY = st.one_of(
    st.fixed_dictionaries({"messages": st.tuples(st.lists(GOOD_TURN, max_size=2), GOOD_CONTENT).map(lambda t: [*t[0], {"role": "user", "content": t[1]}])},
                          optional={"stream": st.booleans()}),
    st.fixed_dictionaries({"messages": st.one_of(st.lists(MESSAGE, min_size=1, max_size=3), JSON)},
                          optional={"model": JSON, "stream": st.one_of(st.booleans(), JSON)}),
    JSON,
)


@pytest.fixture(scope="module")
def web(seed_settings, seed_index):
    return create_app(seed_settings.replace(rate_limit=""), index=seed_index).test_client()


def check_no_server_error(response) -> None:
    """A 4xx with a JSON error that says what was wrong, or an answer; a stream ends with an event, never an internal error."""
    text = response.get_data().decode("utf-8")
    event(f"HTTP {response.status_code}")  # --hypothesis-show-statistics: how many examples reached an answer
    assert response.status_code < 500, text[:300]
    if response.status_code >= 400:
        assert isinstance(response.get_json()["error"]["message"], str)
    assert "internal_error" not in text and "internal error" not in text


DEEP_K = Raw("[" * 3000 + "]" * 3000)


@pytest.mark.parametrize("path", ["/api/ask", "/api/ask/stream", "/api/search"])
@ROUTE_PROPERTY
@given(body=ASK_BODY)
@example(body={"question": "What is \ud800 RouterArena?"})
@example(body={"question": "What is RouterArena?", "k": DEEP_K})
def test_api_bodies_never_give_a_server_error(web, path, body):
    check_no_server_error(web.post(path, data=encode(body).encode("ascii"), content_type="application/json"))


@ROUTE_PROPERTY
@given(body=V1_BODY)
@example(body={"messages": [{"role": "user", "content": "What is \ud800 RouterArena?"}], "stream": True})
@example(body={"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]})
@example(body={"messages": DEEP_K})
def test_v1_bodies_never_give_a_server_error(web, body):
    response = web.post("/v1/chat/completions", data=encode(body).encode("ascii"), content_type="application/json")
    check_no_server_error(response)
    if response.status_code == 200 and response.mimetype == "text/event-stream":
        assert response.get_data(as_text=True).rstrip().endswith("data: [DONE]")


@ROUTE_PROPERTY
@given(query=st.binary(max_size=40))
def test_papers_filter_never_gives_a_server_error(web, query):
    check_no_server_error(web.get("/api/papers?q=" + quote_from_bytes(query)))
