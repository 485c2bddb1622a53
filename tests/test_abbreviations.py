"""Abbreviations the abstracts define, found as Schwartz and Hearst find them, and searched in either form."""

import pytest

from qa_service.corpus.abbreviations import by_long_form, definitions, expansions, long_form


@pytest.mark.parametrize("words,short,expected", [
    ("we study the effect of Mixture-of-Experts", "MoE", "Mixture-of-Experts"),
    ("using single-cell RNA sequencing", "scRNA-seq", "single-cell RNA sequencing"),
    ("is measured by the Glasgow Coma Scale", "GCS", "Glasgow Coma Scale"),
    ("prompted large language models", "LLMs", "large language models"),  # the plural s is no word
    ("the results", "XYZ", ""),
])
def test_the_long_form_is_the_shortest_tail_that_spells_the_short_one(words, short, expected):
    assert long_form(words, short) == expected


def test_definitions_are_read_from_abstracts_of_any_field_and_ambiguous_ones_dropped():
    texts = ["Patients were scored on the Glasgow Coma Scale (GCS) at admission.",
             "We introduce a Mixture-of-Experts (MoE) router.",
             "Policy optimization (PO) helps.", "Preference optimization (PO) too.", "Proximal operators (PO) as well.",
             "Pareto optimality (PO) and more."]
    found = definitions(texts)
    assert found["GCS"] == ["glasgow coma scale"] and found["MoE"] == ["mixture of experts"]
    assert "PO" not in found  # four long forms: too ambiguous to expand


def test_a_question_in_either_form_gets_the_other():
    defined = {"MoE": ["mixture of experts"], "RAG": ["retrieval augmented generation"]}
    by_long = by_long_form(defined)
    assert expansions("Which papers use mixture-of-experts?", defined, by_long) == [("mixture of experts", "MoE")]
    assert expansions("papers on RAG?", defined, by_long) == [("RAG", "retrieval augmented generation")]
    assert expansions("storage and ragged arrays", defined, by_long) == []  # "rag" inside a word is no abbreviation


def test_bm25_finds_the_abbreviated_paper_by_the_long_form_only_when_asked_to():
    from qa_service.store.lexical import LexicalIndex
    texts = ["We route tokens in a sparse Mixture-of-Experts (MoE) layer.", "Our MoE methods keep old skills.",
             "A benchmark of web agents.", "Graph search over knowledge bases.", "Caching keys and values.",
             "Ternary weights for small devices.", "Speech synthesis from few samples.", "Drones count birds.",
             "Flood forecasting with radar.", "Grasping with touch sensors.", "Legged robots on rough terrain."]
    ids = [f"p:{i}#0" for i in range(len(texts))]
    index = LexicalIndex.build(ids, texts, [f"p:{i}" for i in range(len(texts))], "v1")
    plain = [cid for cid, _ in index.search("Which papers use mixture of experts?", 5)]
    expanded = [cid for cid, _ in index.search("Which papers use mixture of experts?", 5, expand_share=0.2)]
    assert "p:1#0" not in plain and "p:1#0" in expanded
    assert index.search("mixture of experts", 5, expand_share=0.05) == index.search("mixture of experts", 5)  # 2 of 11 use MoE


def test_a_sentence_that_writes_only_the_abbreviation_holds_the_long_form_the_question_asks(tmp_path):
    """Choosing sentences, "MoE adapters" holds what "mixture of experts" asks; with the expansion off it holds nothing."""
    from qa_service.answering.extractive import _overlap
    from qa_service.answering.pipeline import IndexCorpus
    from qa_service.store.corpora import Corpora
    from tests.conftest import ingested, write_seed_file
    abstracts = ["We propose a Mixture-of-Experts (MoE) router that balances experts.", "We find that MoE adapters keep old skills.",
                 "We adapt a vocoder from five minutes of speech.", "We forecast river levels with radar.",
                 "We adjust finger forces from tactile readings.", "Drone surveys count seabird nests."]
    index = ingested(tmp_path, write_seed_file(tmp_path / "own.txt", abstracts))
    question, sentence = "Which papers use mixture of experts?", ["We find that MoE adapters keep old skills."]
    on, off = IndexCorpus(Corpora(index.settings, index), 16, 0.5), IndexCorpus(Corpora(index.settings, index), 16, 0.0)
    assert _overlap(question, sentence, off) == [0.0] and _overlap(question, sentence, on)[0] > 0.3


def test_a_question_spelling_out_a_paper_s_own_short_name_calls_that_paper():
    """"the Tool-call Reward Model" is TRM, the paper's label: a call by name; "mixture of experts" spells out MoE, which is
    no paper's own name, so it stays a topic."""
    from qa_service.config import Settings
    from qa_service.corpus.names import NameResolver, build_name_book, spelt_out_names
    defined = {"TRM": ["tool call reward model"], "MoE": ["mixture of experts"]}
    book = build_name_book({"p:1": {"TRM"}, "p:2": {"MoE"}, "p:3": {"Quux"}}, 3)
    spelt = spelt_out_names(defined, ["TRM", "Quux", "Sparse routing of experts"], book)
    assert spelt == {"tool call reward model": "trm"}
    resolver = NameResolver(book, lambda w: True, Settings(), spelt)
    matches, unknown = resolver.resolve("How do Quux and the Tool-call Reward Model differ?")
    assert {(m.name, m.paper_ids) for m in matches} == {("Quux", ("p:3",)), ("TRM", ("p:1",))} and unknown == []
    assert [m.name for m in resolver.resolve("Which papers use a mixture of experts?")[0]] == []
    assert [m.name for m in NameResolver(book, lambda w: True, Settings()).resolve("the tool-call reward model paper")[0]] == []


def test_a_name_typed_as_two_words_is_one_but_two_short_words_of_the_sentence_are_not():
    """"Router Arena" and "VI 2N" call their papers; "o de" in "problemas de código o de software" joins to ode, a paper's
    short name, but two short lower-case words are the sentence's own (shorter than `name_typo_min_length`)."""
    from qa_service.config import Settings
    from qa_service.corpus.names import NameResolver, build_name_book
    book = build_name_book({"p:1": {"ODE"}, "p:2": {"RouterArena"}, "p:3": {"VI2N"}}, 3)
    resolver = NameResolver(book, lambda w: True, Settings())
    assert resolver.resolve("¿Qué artículos aplican LLMs a problemas de código o de software?")[0] == []
    assert [m.name for m in resolver.resolve("What does the ODE paper forecast?")[0]] == ["ODE"]
    assert [m.name for m in resolver.resolve("how does router arena rank routers")[0]] == ["RouterArena"]
    assert [m.name for m in resolver.resolve("What is VI 2N?")[0]] == ["VI2N"]


def test_two_papers_one_called_by_its_spelt_out_name_are_each_answered(tmp_path):
    """Asked of Quillon and "the echo tuning loss paper" (ETL spelt out), the answer cites both, each with its own method;
    without the long form read as a name only Quillon was answered."""
    from tests.conftest import offline_answerer
    abstracts = [
        "Reward shaping for tool-using agents is brittle. We propose Quillon, an agent trainer that adapts group relative policy "
        "optimization with a curriculum of tool calls. Quillon raises task success on web benchmarks from 41% to 58%.",
        "Fine-tuning agents on their own trajectories drifts. We introduce the Echo Tuning Loss (ETL), which adapts group "
        "relative policy optimization by replaying each rollout's best turn. ETL lifts success on household tasks by 9 points.",
        "Graphene ribbons conduct heat anisotropically. We measure their thermal conductivity with Raman thermometry.",
        "Flood forecasting from radar images uses convolutional networks trained on ten years of rainfall.",
        "Legged robots cross rough terrain with a learned gait controller tested on four outdoor courses.",
    ]
    answerer = offline_answerer(tmp_path, abstracts)
    result = answerer.ask("How do Quillon and the echo tuning loss paper adapt group relative policy optimization?")
    cited = {c.label for c in result.citations}
    assert result.refusal_reason is None and {"Quillon", "ETL"} <= cited, (cited, result.answer)
    assert "curriculum of tool calls" in result.answer and "replaying each rollout's best turn" in result.answer, result.answer
