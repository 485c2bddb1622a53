"""What a one-paper question asks that its abstract leaves out: a count of things."""

from qa_service.answering.specifics import asked_best, asked_kinds, asked_measure, unnamed_kinds, unreported

BENCH = ("We introduce Benchbar, a benchmark of hard collection tasks. The benchmark features 200 manually curated questions "
         "from real user queries. Each task requires agents to gather many facts.")


def test_a_count_the_abstract_never_gives_is_reported_missing():
    assert unreported("How many tasks does Benchbar have?", [BENCH], ["Benchbar"], 4) == ["the number of tasks"]


def test_a_number_a_method_changes_is_not_a_count_asked():
    """"How does it cut down the number of tasks?" asks how, not how many: no absence is said of it."""
    for question in ("How does Benchbar cut down the number of tasks?", "Does Benchbar reduce the number of tasks agents need?"):
        assert unreported(question, [BENCH], ["Benchbar"], 4) == [], question
    assert unreported("What is the number of tasks in Benchbar?", [BENCH], ["Benchbar"], 4) == ["the number of tasks"]


def test_a_count_of_another_name_the_question_gives_the_thing_answers_it():
    for question in ("How many tasks or questions does Benchbar have?", "How many tasks/questions are in Benchbar?"):
        assert unreported(question, [BENCH], ["Benchbar"], 4) == [], question


def test_a_thing_the_abstract_never_speaks_of_is_judged_only_when_asked_to():
    """`count_unspoken` (on by default): "how many GPUs" of an abstract that never speaks of GPUs is not reported."""
    assert unreported("How many GPUs did Benchbar use?", [BENCH], ["Benchbar"], 4) == []
    assert unreported("How many GPUs did Benchbar use?", [BENCH], ["Benchbar"], 4, unspoken=True) == ["the number of GPUs"]


def test_a_counted_thing_typed_a_letter_off_is_the_thing_the_abstract_counts():
    """"questons" is the abstract's questions, counted: nothing is missing, whether unspoken things are judged or not."""
    assert unreported("how many questons does Benchbar have?", [BENCH], ["Benchbar"], 4, unspoken=True) == []
    assert unreported("how many questons does Benchbar have?", [BENCH], ["Benchbar"], 4) == []


# Names the question asks for, by a "which" question without its verb or by an imperative
SIX = ("We test Foldwise, a pruning rule for long prompts. Large Language Models (LLMs) are costly on long inputs. "
       "Utilizing six distinct LLMs, Foldwise cuts latency by 30%.")
NAMED = SIX.replace("Utilizing six distinct LLMs", "Utilizing six LLMs such as Mistral and Qwen")


def test_an_imperative_asking_names_the_abstract_never_gives_is_said_absent():
    question = "Name the six LLMs that Foldwise was evaluated with"
    assert unnamed_kinds(question, [SIX], ["Foldwise"]) == ["the names of the LLMs"]
    assert unnamed_kinds(question, [NAMED], ["Foldwise"]) == []


def test_a_which_query_with_a_participle_asks_names():
    assert asked_kinds("which base LLMs evaluated in Foldwise") == [("LLMs", ["base"])]
    assert unnamed_kinds("which base LLMs evaluated in Foldwise", [SIX], ["Foldwise"]) == ["the names of the LLMs"]


def test_a_short_form_of_ordinary_words_is_a_concept_and_of_a_name_is_a_name():
    concept = ("Meterline scores answers on three datasets. It adds uncertainty quantification (UQ) to each answer, "
               "and the datasets show UQ helps.")
    named = concept.replace("uncertainty quantification (UQ)", "the Natural Questions (NQ) set").replace("UQ helps", "NQ helps")
    question = "Which datasets does Meterline use?"
    assert unnamed_kinds(question, [concept], ["Meterline"]) == ["the names of the datasets"]
    assert unnamed_kinds(question, [named], ["Meterline"]) == []


def test_a_superlative_with_an_adverb_and_a_long_noun_phrase_asks_the_winner():
    question = "Which of the 11 models evaluated on Tattle was the most socially sycophantic?"
    assert asked_best(question) == "most socially sycophantic"
    ranks_unnamed = "We evaluate 11 models on Tattle. The most sycophantic model agrees with users 58% of the time."
    assert unreported(question, [ranks_unnamed], ["Tattle"], 4) == ["which one was most socially sycophantic"]



def test_a_keyword_query_for_the_best_scoring_one_asks_the_winner_too():
    """"best scoring model on Tattle?" asks the winner without "which"; a ranking sentence naming one answers it."""
    assert asked_best("best scoring model on Tattle?") == "the top performer"
    assert asked_best("the top-ranked system on Tattle") == "the top performer"
    assert asked_best("a high-scoring model on Tattle") == ""
    ranks_unnamed = "We evaluate 11 models on Tattle. The best model agrees with users 58% of the time."
    assert unreported("best scoring model on Tattle?", [ranks_unnamed], ["Tattle"], 4) == ["which one was the top performer"]
    named = "We evaluate 11 models on Tattle. Of the 11 models, Claude-3 ranks best, agreeing with users 58% of the time."
    assert unreported("best scoring model on Tattle?", [named], ["Tattle"], 4) == []

SQUEEZE = ("Long prompts are costly. We introduce Squeeze, which compresses retrieved passages online at a higher compression "
           "ration than prior methods. Squeeze runs 2-5x faster at inference with no accuracy loss.")


def test_a_measure_the_abstract_speaks_of_and_never_gives_a_figure_for_is_reported_missing():
    """"What exact compression ratio?" of an abstract that speaks of its compression ratio (typo and all) but whose
    figures are of speed: the ratio is not reported; the speed-up is no answer to it."""
    question = "What exact compression ratio does Squeeze achieve?"
    assert asked_measure(question) == ["compression", "ratio"]
    assert unreported(question, [SQUEEZE], ["Squeeze"], 4) == ["the compression ratio"]
    given = SQUEEZE.replace("at a higher compression ration than prior methods", "at a compression ratio of 16x")
    assert unreported(question, [given], ["Squeeze"], 4) == []


def test_a_measure_the_abstract_never_speaks_of_or_results_at_large_are_not_judged():
    assert unreported("What perplexity does Squeeze reach?", [SQUEEZE], ["Squeeze"], 4) == []  # it may say so otherwise
    assert asked_measure("What performance does Squeeze achieve?") == []  # any figure answers


def test_a_count_of_a_thing_the_abstract_never_speaks_of_is_said_absent_in_the_answer(tmp_path):
    """End to end: the abstract holds figures, none of annotators; refused as the detail missing, the count named."""
    from qa_service.records import RefusalReason, SentenceKind
    from tests.conftest import answerer_over, ingested, write_seed_file

    other = ("Protein structures are slow to predict. We present FoldFast, which predicts protein folds from sequence "
             "alone and runs ten times faster than previous predictors.")
    index = ingested(tmp_path / "data", write_seed_file(tmp_path / "papers.txt", [BENCH, other]))
    question = "How many annotators wrote the Benchbar questions?"
    answer = answerer_over(index).ask(question)
    assert answer.refusal_reason is RefusalReason.DETAIL_MISSING, answer.answer
    assert "number of annotators" in answer.refusal_explanation
    unjudged = answerer_over(index, count_unspoken=False).ask(question)
    assert unjudged.refusal_reason is None and not [s for s in unjudged.sentences if s.kind is SentenceKind.SERVICE]
