"""The benchmark corpus generator (tests/synth.py, which bench/ imports): deterministic, valid, and its questions
have known answers."""

import json

from qa_service.corpus.reading import load_corpus
from qa_service.answering.evaluation import read_questions
from tests import synth


def test_generator_is_deterministic_and_unique():
    first, questions = synth.generate(300)
    again, _ = synth.generate(300)
    assert first == again
    assert len({p["id"] for p in first}) == 300 and len({p["abstract"] for p in first}) == 300
    assert len({synth.method_name(i) for i in range(20_000)}) == 20_000
    assert synth.generate(300, seed=8)[0] != first


def test_generated_files_load_and_questions_point_at_their_answer(tmp_path):
    papers, questions = synth.generate(120)
    (tmp_path / "papers.jsonl").write_text("\n".join(json.dumps(p) for p in papers) + "\n")
    (tmp_path / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions) + "\n")
    loaded = {p.id: p for p in load_corpus([tmp_path / "papers.jsonl"])}
    assert len(loaded) == 120 and all(p.label == p.title for p in loaded.values())
    for question in read_questions(tmp_path / "questions.jsonl"):
        paper = loaded[question.gold[0]]
        assert question.answer_facts[0] in paper.text
        assert question.question.split()[3] in paper.text  # the method's name


def test_perturbations_turn_a_sentence_the_way_their_names_say():
    """bench/perturbations.py: each attack changes what it says it changes, once, and leaves other sentences alone."""
    from bench.perturbations import PERTURBATIONS

    assert PERTURBATIONS["verb -> does not verb"]("It reduces latency and improves recall.") == "It does not reduce latency and improves recall."
    assert PERTURBATIONS["verb -> does not verb"]("It uses RL.") == "It does not use RL."
    assert PERTURBATIONS["is -> is not"]("It is fast and is small.") == "It is not fast and is small."
    assert PERTURBATIONS["up to -> at least"]("Gains of up to 3x.") == "Gains of at least 3x."
    assert PERTURBATIONS["+ invented hardware"]("It trains fast.") == "It trains fast using 64 TPU v5 pods"
    assert PERTURBATIONS["higher -> lower"]("No comparison here.") == "No comparison here."
