"""Each metric on hand-made cases with known values, and the question file's errors."""

from pathlib import Path

import pytest

from qa_service.errors import CorpusError
from qa_service.answering.evaluation import (
    Question, answer_metrics, evaluate_answers, fact_found, format_asked_table, has_figure, rank_metrics, read_questions,
)
from qa_service.records import REFUSAL, Answer, AnswerSentence, Citation, CitationIssue, IssueKind, RefusalReason, SentenceKind, SentenceVerdict

SINGLE = Question("s", "How much faster is Tequila?", "single", ["p:1"], ["3.0×", "ARC"])
UNANSWERABLE = Question("u", "What learning rate does Tequila use?", "unanswerable")


def cite(pid: str, supported: bool = True, sentence: int = 0) -> dict:
    return {"n": 1, "paper_id": pid, "label": "L", "quote": "q", "start": 0, "end": 1, "score": 1.0, "supported": supported, "sentence": sentence}


def result(answer: str, citations: list, refused: bool = False, uncited: tuple[int, ...] = ()) -> Answer:
    issues = [CitationIssue(IssueKind.UNCITED, i, "") for i in uncited]
    return Answer(answer, [Citation.from_dict(c) for c in citations], insufficient_evidence=refused, issues=issues)


def test_rank_metrics():
    assert rank_metrics(["a", "b", "c"], ["b"]) == {"recall@1": 0.0, "recall@5": 1.0, "recall@10": 1.0, "rr": 0.5}
    assert rank_metrics(["x"] * 3, ["b"])["rr"] == 0.0
    assert rank_metrics(["a", "b"], ["a", "b", "c", "d"])["recall@5"] == 0.5


def test_perfect_answer():
    m = answer_metrics(SINGLE, result("It gives a 3.0x speedup on ARC [1].", [cite("p:1")]))
    assert m == {"refused": False, "refusal_reason": None, "cited": ["p:1"], "citation_precision": 1.0, "sentence_support": 1.0, "citation_recall": 1.0, "gold_precision": 1.0, "fact_recall": 1.0,
                 "figures_present": 1.0, "paper_precision": 1.0}


def test_answer_citing_a_wrong_paper_without_support():
    m = answer_metrics(SINGLE, result("It gives a 3.0× speedup [1].", [cite("p:9", supported=False)]))
    assert (m["citation_recall"], m["citation_precision"], m["gold_precision"], m["sentence_support"], m["fact_recall"]) == (0.0, 0.0, 0.0, 0.0, 0.5)


def test_missing_fact_and_an_uncited_sentence():
    m = answer_metrics(SINGLE, result("Tequila is fast [1]. It is great.", [cite("p:1")], uncited=(1,)))
    assert m["fact_recall"] == 0.0 and m["sentence_support"] == 0.5


def test_refusals():
    assert answer_metrics(UNANSWERABLE, result(REFUSAL, [], refused=True))["correct_refusal"] is True
    assert answer_metrics(UNANSWERABLE, result("It uses 1e-4 [1].", [cite("p:1")]))["correct_refusal"] is False
    wrong = answer_metrics(SINGLE, result(REFUSAL, [], refused=True))
    assert wrong["refused"] and wrong["citation_recall"] == 0.0


@pytest.mark.parametrize("fact,answer", [("9,422", "contains 9422 samples"), ("76.1%", "a 76.1 % success rate"), ("3.0×", "a 3.0x speedup"), ("Tequila", "we propose TEQUILA")])
def test_facts_match_after_normalising(fact, answer):
    assert fact_found(fact, answer)


def test_summary_accuracy_and_precision_as_paperqa2():
    questions = [SINGLE, UNANSWERABLE, Question("s2", "q", "single", ["p:2"], [])]
    replies = {
        SINGLE.question: result("3.0× on ARC [1].", [cite("p:1")]),
        UNANSWERABLE.question: result(REFUSAL, [], refused=True),
        "q": result("wrong paper [1].", [cite("p:7", supported=False)]),
    }
    report = evaluate_answers(lambda q: replies[q], lambda q: ["p:1"], questions)
    overall = report["summary"]["overall"]
    assert overall["accuracy"] == round(2 / 3, 3)  # one right answer, one right refusal, one wrong answer
    assert overall["precision"] == 0.5  # one right among the two answered
    assert report["summary"]["unanswerable"]["refused_unanswerable"] == 1.0
    assert len(report["records"]) == 3 and all("latency_ms" in r for r in report["records"])


@pytest.mark.parametrize(
    "line,message",
    [
        ("{oops", ":2: invalid JSON"),
        ('{"kind": "single", "gold": ["a"]}', ":2: needs a non-empty 'question'"),
        ('{"question": "q", "kind": "easy"}', ":2: 'kind' must be one of"),
        ('{"question": "q", "kind": "single"}', ":2: an answerable question needs 'gold'"),
        ('{"question": "q", "kind": "multi", "gold": "a"}', ":2: 'gold' and 'answer_facts' must be lists"),
    ],
)
def test_question_file_errors_name_the_line(tmp_path: Path, line, message):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "ok", "kind": "unanswerable"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=message):
        read_questions(path)


def test_question_sets_are_large_and_well_formed():
    """The tuning and held-out splits of the development set, and the fresh file, disjoint and well formed."""
    data = Path(__file__).parent / "data"
    tune, held, fresh = (read_questions(data / f"{n}_questions.jsonl") for n in ("tune", "heldout", "fresh"))
    assert not {q.question for q in tune} & {q.question for q in held}
    questions = tune + held
    kinds = [q.kind for q in questions]
    assert len(questions) >= 80 and kinds.count("multi") >= 10 and kinds.count("unanswerable") >= 15
    assert len(fresh) >= 80 and sum(q.named for q in fresh) >= 30
    assert len({q.id for q in questions}) == len(questions)
    assert all(q.answer_facts for q in questions if q.kind != "unanswerable")


@pytest.mark.parametrize("fact,figure", [("26.95%", True), ("3.0×", True), ("2-5x", True), ("1,000 tasks", True), ("10K", True),
                                         ("+3.5% on MATH", True), ("−0.4%", True),
                                         ("reaching just 7\\%", True), ("$+39.3$ EM@1", True),
                                         ("Qwen2.5-7B", False), ("Pass@1", False), ("L0", False), ("GPT-4o", False)])
def test_a_figure_is_a_number_on_its_own_not_a_digit_in_a_name(fact, figure):
    assert has_figure(fact) is figure


def test_asked_figures_near_misses_off_topic_and_multi_precision():
    """Each new measure on hand-made rows: figures asked, a near miss stated two ways, an off-topic refusal, a list's papers."""
    figure = Question("f", "How much faster?", "single", ["p:1"], ["3.0×", "ARC"])
    keyword = Question("k", "Tequila speed", "single", ["p:1"], ["Tequila"], asks_figure=True)
    near = Question("n", "Tequila on MMLU?", "unanswerable", reason="detail_missing")
    near2 = Question("n2", "Tequila on GSM8K?", "unanswerable", reason="detail_missing")
    off = Question("o", "Sourdough?", "unanswerable", reason="off_topic")
    multi = Question("m", "Which papers quantize?", "multi", ["p:1", "p:2"])
    absence = AnswerSentence(0, 40, "The abstract of Tequila does not report results on GSM8K.", SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED)
    replies = {
        figure.question: result("It is 3.0x faster [1].", [cite("p:1")]),
        keyword.question: result("Tequila is fast [1].", [cite("p:1")]),
        near.question: Answer(REFUSAL, insufficient_evidence=True, refusal_reason=RefusalReason.DETAIL_MISSING),
        near2.question: Answer("The abstract of Tequila does not report results on GSM8K. It reports 3.0× [1].",
                               [Citation.from_dict(cite("p:1"))], sentences=[absence]),
        off.question: result(REFUSAL, [], refused=True),
        multi.question: result("A [1]. B [2]. C [3].", [cite("p:1"), cite("p:9"), cite("p:8")]),
    }
    asked = evaluate_answers(lambda q: replies[q], lambda q: ["p:1"], [figure, keyword, near, near2, off, multi])["asked"]
    assert asked["figures_present"] == {"n": 2, "value": 0.5}  # the keyword query asked a figure and got none
    assert asked["near_misses_stated"] == {"n": 2, "value": 1.0}
    assert asked["off_topic_refused"] == {"n": 1, "value": 1.0}
    assert asked["multi_gold_cited"] == {"n": 1, "value": 0.5} and asked["multi_precision"] == {"n": 1, "value": round(1 / 3, 3)}
    assert "0.500 (2)" in format_asked_table(asked)


def test_a_fact_copied_from_the_raw_abstract_is_found_as_the_service_prints_it():
    """Abstracts write "7\\%" and "$+39.3$"; the service prints the cleaned text ("7%", "+39.3"), so must the check."""
    from qa_service.answering.evaluation import fact_found

    assert fact_found(r"the best performer reaching just 7\%", "Most reach 0%, the best performer reaching just 7% [1].")
    assert fact_found("$+39.3$ EM@1 with 18.6% lower latency", "CLAUSE achieves +39.3 EM@1 with 18.6% lower latency [1].")
    assert not fact_found(r"reaching just 9\%", "the best performer reaching just 7% [1].")
