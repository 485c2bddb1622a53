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
