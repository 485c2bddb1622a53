"""What a one-paper question asks that its abstract leaves out: a count of things."""

from qa_service.answering.specifics import unreported

BENCH = ("We introduce Benchbar, a benchmark of hard collection tasks. The benchmark features 200 manually curated questions "
         "from real user queries. Each task requires agents to gather many facts.")


def test_a_count_the_abstract_never_gives_is_reported_missing():
    assert unreported("How many tasks does Benchbar have?", [BENCH], ["Benchbar"], 4) == ["the number of tasks"]


def test_a_count_of_another_name_the_question_gives_the_thing_answers_it():
    for question in ("How many tasks or questions does Benchbar have?", "How many tasks/questions are in Benchbar?"):
        assert unreported(question, [BENCH], ["Benchbar"], 4) == [], question


def test_a_thing_the_abstract_never_speaks_of_is_not_judged():
    assert unreported("How many GPUs did Benchbar use?", [BENCH], ["Benchbar"], 4) == []
