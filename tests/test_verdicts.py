"""Per-sentence verdicts on answers written the way an LLM writes them, through the real openai SDK
against a scripted OpenAI-compatible server on 127.0.0.1, over the seed index."""

from __future__ import annotations

import pytest

from qa_service.web.app import create_app
from tests.fake_openai import FakeOpenAI

GO_BROWSE, CLAUSE = "Go-Browse", "CLAUSE"
QUESTION = "How do Go-Browse and CLAUSE work and how well do they do?"


@pytest.fixture(scope="module")
def fake_server():
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def client(seed_settings, seed_index, fake_server):
    settings = seed_settings.replace(openai_base_url=fake_server.base_url, openai_api_key="sk-test", model="fake-model",
                                     model_retries=0, rate_limit="", answer_rate_limit="")
    return create_app(settings, index=seed_index).test_client()


@pytest.fixture(scope="module")
def numbers(client) -> dict[str, int]:
    """The source number each paper gets for QUESTION (the scripted model's default reply is asked once)."""
    body = client.post("/api/ask", json={"question": QUESTION}).get_json()
    found = {s["label"]: s["n"] for s in body["sources"]}
    assert GO_BROWSE in found and CLAUSE in found, found
    return found


def ask(client, fake_server, numbers: dict[str, int], reply: str) -> dict:
    """The scripted model writes `reply` ({g} and {c} are Go-Browse's and CLAUSE's numbers); the checked answer."""
    fake_server.enqueue("reply", reply.format(g=numbers[GO_BROWSE], c=numbers[CLAUSE]))
    return client.post("/api/ask", json={"question": QUESTION}).get_json()


def verdicts(body: dict) -> list[tuple[str, str]]:
    return [(s["kind"], s["verdict"]) for s in body["sentences"]]


@pytest.mark.parametrize("category,reply", [
    ("paraphrase", "Go-Browse frames web agent data collection as a graph search, so information is reused across exploration episodes [{g}]."),
    ("restated number", "On WebArena, Go-Browse collected 10,000 successful trajectories and 40,000 interaction steps across 100 URLs [{g}]."),
    ("hedged", "A 7B model fine-tuned on its data seems to reach a success rate of roughly 22% on WebArena [{g}]."),
    ("two-source", "Go-Browse collects 10K successful trajectories on WebArena [{g}], while CLAUSE achieves +39.3 EM@1 on MetaQA-2-hop [{c}]."),
])
def test_a_correct_sentence_gets_a_check_mark(client, fake_server, numbers, category, reply):
    body = ask(client, fake_server, numbers, reply)
    assert verdicts(body) == [("claim", "supported")], (category, body["sentences"])
    assert body["grounded"] and body["sentences"][0]["quotes"][0]["quote"]


def test_a_list_item_is_a_unit_and_the_lead_in_is_structure(client, fake_server, numbers):
    reply = ("Go-Browse's reported results include:\n\n"
             "- 10K successful trajectories and 40K interaction steps across 100 URLs [{g}]\n"
             "- A 21.7% success rate on WebArena for a fine-tuned 7B model [{g}]\n")
    body = ask(client, fake_server, numbers, reply)
    assert body["answer"] == reply.format(g=numbers[GO_BROWSE], c=numbers[CLAUSE]).strip()  # the text as written
    assert verdicts(body) == [("structure", "not_checked"), ("claim", "supported"), ("claim", "supported")]
    assert body["grounded"] and not any("no citation" in w for w in body["warnings"])
    for unit in body["sentences"]:
        assert body["answer"][unit["start"]:unit["end"]] == unit["text"]


def test_an_item_s_bold_label_is_the_model_s_heading_not_part_of_the_claim(client, fake_server, numbers):
    """"**Cheap supervision.** ..." names the item as the model sees it; the sentence after it is what the source must state.
    A label that carries a figure is checked with the rest."""
    reply = ("Key points:\n\n"
             "1. **Cheap supervision.** Go-Browse collects 10K successful trajectories across 100 URLs [{g}].\n"
             "2. **Learning from it.** A 7B model fine-tuned on this data reaches a 21.7% success rate on WebArena [{g}].\n")
    body = ask(client, fake_server, numbers, reply)
    assert verdicts(body) == [("structure", "not_checked"), ("structure", "not_checked"), ("claim", "supported"),
                              ("structure", "not_checked"), ("claim", "supported")], body["sentences"]
    assert body["sentences"][1]["text"] == "1. **Cheap supervision.**" and body["grounded"]
    labelled = ask(client, fake_server, numbers, "1. **31.7% on WebArena.** A 7B model fine-tuned on Go-Browse's data does best [{g}].")
    assert verdicts(labelled)[0][1] != "supported", labelled["sentences"]


@pytest.mark.parametrize("category,reply,verdict", [
    ("wrong number", "A 7B model fine-tuned on Go-Browse's data reaches a 31.7% success rate on WebArena [{g}].", "contradicted"),
    ("number from elsewhere", "A 7B model fine-tuned on Go-Browse's data beats GPT-4o mini by 2.9% [{g}].", "contradicted"),
    ("wrong paper", "Go-Browse frames web agent data collection as a graph search, so information is reused across exploration episodes [{c}].",
     "contradicted"),
    ("negation", "On MetaQA-2-hop, CLAUSE has higher latency than GraphRAG [{c}].", "contradicted"),
    ("overclaim", "Go-Browse's fine-tuned 7B model beats every model of every size on WebArena [{g}].", "unverified"),
    ("invented detail", "Go-Browse collects its trajectories on WebArena and Mind2Web [{g}].", "unverified"),
    ("a name from elsewhere in the abstract", "GraphRAG employs the proposed LC-MAPPO algorithm to coordinate the agents of "
     "CLAUSE [{c}].", "unverified"),
    ("a figure for another named thing", "Fine-tuned on this dataset, GPT-4o mini reaches a 21.7% success rate on WebArena [{g}].",
     "contradicted"),
])
def test_a_wrong_sentence_gets_no_check_mark(client, fake_server, numbers, category, reply, verdict):
    body = ask(client, fake_server, numbers, reply)
    assert verdicts(body) == [("claim", verdict)], (category, body["sentences"])
    assert not body["grounded"] and body["sentences"][0]["reason"]


def test_a_wrong_part_of_a_two_source_sentence_is_caught(client, fake_server, numbers):
    body = ask(client, fake_server, numbers,
               "Go-Browse collects 10K successful trajectories on WebArena, while CLAUSE requires retraining for each new budget [{g}][{c}].")
    assert verdicts(body) == [("claim", "contradicted")] and not body["grounded"]


def test_filler_is_not_a_claim(client, fake_server, numbers):
    body = ask(client, fake_server, numbers, "CLAUSE achieves +39.3 EM@1 on MetaQA-2-hop [{c}].\n\nLet me know if you would like more detail.")
    assert verdicts(body) == [("claim", "supported"), ("structure", "not_checked")]
    assert body["grounded"] and not body["warnings"]


def test_a_refusal_in_the_model_s_own_words_is_a_refusal(client, fake_server, numbers):
    body = ask(client, fake_server, numbers, "The provided abstracts do not mention the GPU hardware used to train Go-Browse.")
    assert body["insufficient_evidence"] and body["refusal_reason"] == "model_declined" and body["refusal_explanation"]
    assert body["answer"] == "The provided abstracts do not mention the GPU hardware used to train Go-Browse."
    assert verdicts(body) == [("structure", "not_checked")] and not body["warnings"]


def test_a_model_s_word_that_a_cited_source_is_silent_is_not_a_claim(client, fake_server, numbers):
    """"The CLAUSE abstract [c] does not report ..." and "None of the abstracts ..." say what is absent, as a refusal does:
    no check mark, no warning of an uncited claim. A claim that only mentions a paper and a negation is still checked."""
    reply = ("CLAUSE achieves +39.3 EM@1 on MetaQA-2-hop [{c}]. The CLAUSE abstract [{c}] does not report GPU hours. "
             "None of the retrieved abstracts compare against retrieval augmentation. "
             "Unlike earlier papers, CLAUSE does not need retraining for each new budget [{c}].")
    body = ask(client, fake_server, numbers, reply)
    assert verdicts(body) == [("claim", "supported"), ("structure", "not_checked"), ("structure", "not_checked"),
                              ("claim", "unverified")], body["sentences"]
    assert body["sentences"][1]["cites"] == [numbers[CLAUSE]] and not any("no citation" in w for w in body["warnings"])


def test_the_stream_s_final_event_carries_the_same_verdicts(client, fake_server, numbers):
    reply = "## Go-Browse\n\n1. It collects 10K successful trajectories on WebArena [{g}].\n2. It was trained on 5 GPUs [{g}]."
    fake_server.enqueue("stream", reply.format(g=numbers[GO_BROWSE], c=numbers[CLAUSE]))
    response = client.post("/api/ask/stream", json={"question": QUESTION})
    final = [line for line in response.get_data(as_text=True).split("\n\n") if line.startswith("event: final")]
    assert final, response.get_data(as_text=True)[-500:]
    import json

    body = json.loads(final[0].split("data: ", 1)[1])
    assert body["answer"] == reply.format(g=numbers[GO_BROWSE], c=numbers[CLAUSE])
    assert verdicts(body) == [("structure", "not_checked"), ("claim", "supported"), ("claim", "unverified")]


@pytest.mark.parametrize("reply", [
    "Neither abstract reports a head-to-head comparison between CLAUSE and Go-Browse.",
    "No retrieved abstract mentions the GPU hardware used to train Go-Browse.",
    "The other abstracts concern web agents, so they provide no evidence on knowledge-graph retrieval.",
    "The hardware used to train Go-Browse is not mentioned in the provided abstracts.",
    "The abstracts are silent on the training hardware.",
    "It is not possible to determine the training hardware from these abstracts.",
    "I don't have information about the GPUs used.",
])
def test_a_refusal_worded_other_ways_is_a_refusal(client, fake_server, numbers, reply):
    body = ask(client, fake_server, numbers, reply)
    assert body["insufficient_evidence"] and body["refusal_reason"] == "model_declined", reply
    assert verdicts(body) == [("structure", "not_checked")] and not body["warnings"]
