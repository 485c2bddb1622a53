import pytest

from qa_service.web.app import create_app


def test_healthz_counts_papers(client):
    assert client.get("/healthz").get_json() == {"status": "ok", "papers": 57, "corpora": {"iclr2026": 57}}


def test_papers_list_filter_and_one(client):
    listing = client.get("/api/papers").get_json()
    assert listing["total"] == 57 and listing["papers"][1] == {"id": "000_e3b5a0511f204a83:2", "label": "RouterArena", "title": "", "year": None, "venue": "", "corpus": "iclr2026"}
    filtered = client.get("/api/papers?q=tequila").get_json()
    assert [p["id"] for p in filtered["papers"]] == ["000_e3b5a0511f204a83:11"]
    one = client.get("/api/papers/000_e3b5a0511f204a83:11").get_json()
    assert one["label"] == "Tequila" and "**Tequila**" in one["abstract"] and "**" not in one["text"]


def test_search_returns_results_with_evidence(client):
    response = client.post("/api/search", json={"question": "Which benchmark tests scientific law discovery?", "k": 3})
    assert response.status_code == 200
    results = response.get_json()["results"]
    assert results[0]["label"] == "NewtonBench" and len(results) == 3 and results[0]["relevant"]
    assert set(results[0]) == {"paper_id", "label", "corpus", "score", "relevant", "named", "evidence"}


def test_search_with_nothing_relevant_marks_none_relevant(client):
    """Recall first: the ranked papers come back with scores, none marked above the relevance bar."""
    results = client.post("/api/search", json={"question": "best sourdough bread recipe"}).get_json()["results"]
    assert results and not any(r["relevant"] for r in results)


@pytest.mark.parametrize(
    "kwargs,status,needle",
    [
        ({"json": {}}, 400, "'question' is required"),
        ({"json": {"question": "   "}}, 400, "must not be empty"),
        ({"json": {"question": 42}}, 400, "must be a string"),
        ({"json": {"question": "x", "k": 0}}, 400, "'k' must be"),
        ({"json": {"question": "x", "k": "3"}}, 400, "'k' must be"),
        ({"json": {"question": "x", "k": True}}, 400, "'k' must be"),
        ({"json": ["question"]}, 400, "JSON object"),
        ({"data": "{not json", "content_type": "application/json"}, 400, "not valid JSON"),
        ({"data": "question=x", "content_type": "application/x-www-form-urlencoded"}, 415, "application/json"),
        ({"json": {"question": "x" * 5000}}, 413, "longer than"),
        ({"data": "x" * 70000, "content_type": "application/json"}, 413, "larger than"),
    ],
)
def test_bad_requests_get_json_errors(client, kwargs, status, needle):
    response = client.post("/api/search", **kwargs)
    assert response.status_code == status
    body = response.get_json()
    assert needle in body["error"]["message"] and body["error"]["code"]


def test_unknown_routes_and_methods_are_json(client):
    missing = client.get("/api/nothing")
    assert missing.status_code == 404 and missing.get_json()["error"]["code"] == "not_found"
    wrong = client.get("/api/search")
    assert wrong.status_code == 405 and "error" in wrong.get_json()
    paper = client.get("/api/papers/nope:1")
    assert paper.status_code == 404 and "nope:1" in paper.get_json()["error"]["message"]


def test_empty_index_answers_503(settings):
    client = create_app(settings).test_client()
    assert client.get("/healthz").get_json() == {"status": "ok", "papers": 0, "corpora": {"iclr2026": 0}}
    response = client.post("/api/search", json={"question": "anything"})
    assert response.status_code == 503 and "qa-service ingest" in response.get_json()["error"]["message"]


def test_warm_up_loads_bm25_and_survives_an_empty_index(seed_settings, settings, caplog):
    app = create_app(seed_settings)
    app.extensions["qa"].warm()
    assert len(app.extensions["qa"].index.lexical.chunk_ids) > 57
    empty = create_app(settings.replace(data_dir=str(settings.data_path / "nothing-here.txt")))
    (settings.data_path).mkdir(parents=True, exist_ok=True)
    (settings.data_path / "nothing-here.txt").write_text("not a folder")
    empty.extensions["qa"].warm()
    assert "warm-up skipped" in caplog.text


def test_papers_filter_searches_the_abstract_text_and_says_where(client):
    """'diffusion' is in no label or title but in several abstracts: each comes with its sentence."""
    found = client.get("/api/papers?q=Diffusion").get_json()
    assert found["total"] >= 2 and found["total"] == len(found["papers"])
    assert all("diffusion" in p["snippet"].lower() for p in found["papers"] if "diffusion" not in (p["label"] + p["title"]).lower())
    named = client.get("/api/papers?q=tequila").get_json()["papers"]
    assert [(p["id"], p["snippet"]) for p in named] == [("000_e3b5a0511f204a83:11", "")]  # matched by its label
    assert client.get("/api/papers?q=zzqqxxnotaword").get_json() == {"papers": [], "total": 0, "corpora": {"iclr2026": 0}}


def test_info_gives_the_input_limits_the_page_counts_against(client, seed_settings):
    limits = client.get("/api/info").get_json()["limits"]
    assert limits == {"question_chars": seed_settings.max_question_chars, "history_turns": seed_settings.max_history_turns,
                      "history_chars": seed_settings.max_history_chars}


def test_papers_come_in_pages_with_a_cursor_and_all_without_a_limit(client):
    """Issue 25 (7): ?limit= and ?cursor= read the list in parts; no limit is the whole list, as the page reads it."""
    whole = client.get("/api/papers").get_json()
    assert len(whole["papers"]) == 57 and "next_cursor" not in whole
    seen, cursor, pages = [], None, 0
    while pages < 20:  # 57 papers in pages of 10: 6 pages
        listing = client.get("/api/papers", query_string={"limit": 10, **({"cursor": cursor} if cursor else {})}).get_json()
        assert listing["total"] == 57 and len(listing["papers"]) <= 10
        seen += [p["id"] for p in listing["papers"]]
        pages, cursor = pages + 1, listing["next_cursor"]
        if cursor is None:
            break
    assert pages == 6 and seen == [p["id"] for p in whole["papers"]]
    filtered = client.get("/api/papers?q=the&limit=2").get_json()
    assert len(filtered["papers"]) == 2 and filtered["total"] > 2 and filtered["next_cursor"]
    for bad in ({"limit": "0"}, {"limit": "1001"}, {"limit": "x"}, {"limit": "10", "cursor": "not-a-cursor"}):
        refused = client.get("/api/papers", query_string=bad)
        assert refused.status_code == 400 and refused.get_json()["error"]["message"], bad


def test_a_chunked_body_over_the_limit_is_413_not_400(client, seed_settings):
    """Issue 25 (7): with no Content-Length, the body over max_body_bytes was read as 'not valid JSON' (400)."""
    import io

    body = b'{"question": "' + b"a" * (seed_settings.max_body_bytes + 10) + b'"}'
    chunked = {"wsgi.input_terminated": True}  # as gunicorn says of its chunked bodies
    sent = client.post("/api/search", input_stream=io.BytesIO(body), environ_overrides=chunked,
                       headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    assert sent.status_code == 413 and "larger than" in sent.get_json()["error"]["message"]
    small = client.post("/api/search", input_stream=io.BytesIO(b'{"question": "What is RouterArena?"}'), environ_overrides=chunked,
                        headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    assert small.status_code == 200
