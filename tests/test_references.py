"""The references that end a /v1 text answer (web/references.py): per cited source its label, title, venue,
year and URL when known and the quoted sentences, in the stream too; `references` (request option and
setting) chooses full, labels or none, and the structured fields stay as they were."""

from __future__ import annotations

import openai
import pytest

from qa_service.records import Answer, Citation, Paper
from qa_service.web.references import references_block
from tests.clientkit import app_over, openreview_settings, running

GRIP = "What success rate does GripNet reach?"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running(app_over(openreview_settings(tmp_path_factory.mktemp("refs-data")))) as url:
        yield url


@pytest.fixture
def client(server):
    return openai.OpenAI(base_url=server + "/v1", api_key="unused", max_retries=0)


def ask(client: openai.OpenAI, question: str = GRIP, **options) -> str:
    reply = client.chat.completions.create(model="qa-service", messages=[{"role": "user", "content": question}], **options)
    return reply.choices[0].message.content


def test_full_references_name_the_source_its_venue_url_and_quote(client):
    content = ask(client)
    text, references = content.split("\n\nSources:\n", 1)
    assert "87%" in text and "[1]" in text
    lines = references.splitlines()
    assert lines[0] == "[1] GripNet: Learning Dexterous Grasps from Play (or-gripnet)"
    assert lines[1] == "    ICLR 2025 Oral"  # the year is in the venue: said once
    assert lines[2] == "    https://openreview.net/forum?id=gripnet"
    assert any(line.startswith('    "On 40 household objects it succeeds in 87% of grasps') for line in lines[3:])


def test_the_stream_ends_with_the_same_references(client):
    whole = ask(client)
    chunks = list(client.chat.completions.create(model="qa-service", stream=True, messages=[{"role": "user", "content": GRIP}]))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole
    assert chunks[-1].model_extra["citations"][0]["quote"] in whole


def test_labels_and_none_choose_less_and_leave_the_structured_fields(client):
    full = client.chat.completions.create(model="qa-service", messages=[{"role": "user", "content": GRIP}])
    labels = client.chat.completions.create(model="qa-service", messages=[{"role": "user", "content": GRIP}],
                                            extra_body={"references": "labels"})
    none = client.chat.completions.create(model="qa-service", messages=[{"role": "user", "content": GRIP}],
                                          extra_body={"references": "none"})
    answer = full.choices[0].message.content.split("\n\nSources:\n")[0]
    assert labels.choices[0].message.content == answer + "\n\nSources:\n[1] GripNet: Learning Dexterous Grasps from Play (or-gripnet)"
    assert none.choices[0].message.content == answer
    assert full.model_extra["citations"] == labels.model_extra["citations"] == none.model_extra["citations"]


def test_a_bad_references_option_is_a_400_naming_it(client):
    with pytest.raises(openai.BadRequestError, match="'references' must be") as refused:
        ask(client, extra_body={"references": "some"})
    assert refused.value.param == "references"


def test_the_setting_chooses_the_default(tmp_path):
    settings = openreview_settings(tmp_path / "data").replace(references="labels")
    reply = app_over(settings).test_client().post("/v1/chat/completions", json={"messages": [{"role": "user", "content": GRIP}]})
    assert reply.get_json()["choices"][0]["message"]["content"].endswith("\n\nSources:\n[1] GripNet: Learning Dexterous Grasps from Play (or-gripnet)")
    wrong = app_over(settings.replace(references="all")).test_client().post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": GRIP}]})
    assert wrong.status_code == 500 and "QA_REFERENCES" in wrong.get_json()["error"]["message"]


def citation(n: int, quote: str, supported: bool = True, paper: str = "p1", label: str = "Voxa") -> Citation:
    return Citation(n, paper, label, quote, 0, len(quote), 1.0, supported, 0)


def test_each_quote_once_and_an_unconfirmed_one_flagged():
    answer = Answer("Voxa streams [1]. It is fast [1]. It is small [2].", citations=[
        citation(1, "Voxa streams."), citation(1, "Voxa streams."), citation(2, "It is small.", supported=False, paper="p2", label="Tiny")])
    papers = {"p1": Paper("p1", "", "", title="Voxa", year=2025, venue="NeurIPS", url="https://x/1"),
              "p2": Paper("p2", "", "", year=2024)}
    assert references_block(answer, "full", papers) == (
        '\n\nSources:\n[1] Voxa (p1)\n    NeurIPS, 2025\n    https://x/1\n    "Voxa streams."\n\n'
        '[2] Tiny (p2)\n    2024\n    "It is small." (the check could not confirm that this backs the answer)')
    assert references_block(Answer("The abstracts in the corpus do not answer this question."), "full", papers) == ""
