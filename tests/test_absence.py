"""A corpus of one's own (ten papers, titles and keywords): list questions by topic, what is absent said plainly, venues never asked."""

import pytest

from qa_service.service import build_answerer
from qa_service.store.corpora import Corpora

from qa_service.answering.evidence import corpus_words, in_other_language, unseen_kinds
from qa_service.answering.extractive import ExtractiveModel
from qa_service.records import REFUSAL, RefusalReason, SentenceKind, SentenceVerdict
from tests.conftest import ROOT, ingested

OWN = ROOT / "tests" / "data" / "own_corpus.jsonl"


@pytest.fixture(scope="module")
def answerer(tmp_path_factory):
    index = ingested(tmp_path_factory.mktemp("own-data"), OWN)
    return build_answerer(index.settings, ExtractiveModel(), Corpora(index.settings, index))


@pytest.mark.parametrize("question,papers", [
    ("Which papers study speech?", {"own:1", "own:2"}),  # "speech" is in their titles and keywords, not in their abstracts
    ("Which papers are about robotics?", {"own:3", "own:4"}),  # keywords only
])
def test_titles_and_keywords_count_as_evidence_on_a_small_corpus(answerer, question, papers):
    result = answerer.ask(question)
    assert result.refusal_reason is None, result.answer
    assert papers <= {c.paper_id for c in result.citations}


def test_a_benchmark_the_abstract_does_not_mention_is_said_first_then_what_it_reports(answerer):
    result = answerer.ask("How does Zorblax do on MMLU?")
    note = "The abstract of Zorblax does not report results on MMLU."  # a titled paper by its name
    assert result.answer.startswith(note + " What it does report: ")
    assert "2.7× speedup" in result.answer and result.refusal_reason is None and result.grounded
    first, lead = result.sentences[0], result.sentences[1]
    assert (first.text, first.kind, first.verdict, first.cites) == (note, SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED, [])
    assert lead.kind is SentenceKind.STRUCTURE
    for unit in result.sentences:  # every unit sits where it says, after the service's words were put before it
        assert result.answer[unit.start:unit.end] == unit.text
    assert all(c.paper_id == "own:5" and c.supported for c in result.citations)
    assert not result.warnings  # the service's sentence is no uncited claim


def test_the_stream_says_the_absence_first_too(answerer):
    events = list(answerer.stream("How does Zorblax do on MMLU?"))
    text = "".join(e.text for e in events if type(e).__name__ == "Delta")
    assert text == events[-1].answer.answer and text.startswith("The abstract of Zorblax")


def test_an_absent_detail_with_nothing_close_stays_a_refusal(answerer):
    """Glimmer's abstract reports no result at all: nothing to give in place of MMLU."""
    result = answerer.ask("How does Glimmer do on MMLU?")
    assert result.answer == REFUSAL and result.refusal_reason is RefusalReason.DETAIL_MISSING


@pytest.mark.parametrize("question", ["What does the ICLR 2026 paper Zorblax propose?", "In the NeurIPS abstract, what does Quux distill?"])
def test_a_venue_is_never_an_asked_detail(answerer, question):
    result = answerer.ask(question)
    assert result.refusal_reason is None and result.citations and not result.answer.startswith("The abstract of")


@pytest.mark.parametrize("question", ["Which papers do protein folding?", "Which papers compress images with transformers?"])
def test_a_neighbouring_topic_is_off_topic(answerer, question):
    assert answerer.ask(question).refusal_reason is RefusalReason.OFF_TOPIC


def test_the_term_test_looks_at_words_some_abstract_uses_as_the_question_spells_them():
    unseen = {" ", "object"}  # " " stands for a term no abstract uses
    words = corpus_words("Which papers reduce object hallucination in vision-language models?", lambda t: 4.0 if t in unseen else 1.0)
    assert words == {"reduc": "reduce", "hallucin": "hallucination", "vision": "vision-language", "languag": "vision-language"}


@pytest.fixture(scope="module")
def term_test(answerer):
    """The same corpus with the split-term test on (`core_term_gap` 0.27, the default)."""
    assert answerer.settings.core_term_gap == 0.27
    return answerer


@pytest.fixture(scope="module")
def no_term_test(answerer):
    """The same corpus with the split-term test off (`core_term_gap` 2)."""
    settings = answerer.settings.replace(core_term_gap=2.0)
    return build_answerer(settings, ExtractiveModel(), Corpora(settings, answerer.corpora.default))


def test_a_question_joining_two_papers_topics_is_off_topic_with_the_term_test_on(no_term_test, term_test):
    """Floods are own:8's, drones own:7's: the flood paper says nothing near "drone", the sentence test alone lets it through."""
    question = "Which papers forecast river floods from drone images?"
    assert no_term_test.ask(question).refusal_reason is None
    assert term_test.ask(question).refusal_reason is RefusalReason.OFF_TOPIC


@pytest.mark.parametrize("question,paper", [
    ("Which papers track sleep with a smartwatch?", "own:10"),  # "smartwatch" is in no abstract: never the test's term
    ("Which papers synthesize voices from few recordings?", "own:2"),
    ("How do drones help survey seabird colonies?", "own:7"),
])
def test_the_term_test_keeps_answering_a_paraphrase_of_one_paper(term_test, question, paper):
    result = term_test.ask(question)
    assert result.refusal_reason is None and paper in {c.paper_id for c in result.citations}, result.answer


@pytest.mark.parametrize("question,detail", [
    ("Which base model was Zorblax fine-tuned from?", "model used"),  # "2.7×" and the hardware are no model's name
    ("What model size does Quux have, and how many training tokens?", "model size"),
    ("¿Sobre qué modelo base se entrenó Zorblax?", "model used"),  # the same ask in another accepted language
    ("¿Qué tasa de aprendizaje usa Zorblax?", "learning rate"),  # each training detail in each accepted language
    ("Welche Batchgröße verwendet Quux?", "batch size"),
    ("Zorblax 使用的学习率是多少？", "learning rate"),
    ("Qui a écrit Zorblax ?", "authors"),
])
def test_a_training_set_up_the_abstract_does_not_give_is_refused_as_missing(answerer, question, detail):
    result = answerer.ask(question)
    assert result.refusal_reason is RefusalReason.DETAIL_MISSING and result.answer == REFUSAL, result.answer
    assert detail in result.refusal_explanation, result.refusal_explanation


def test_a_model_named_with_a_version_the_corpus_never_uses_is_said_absent(answerer):
    """"Vocoder-3" is in no name book, and its words are corpus words (so it is no unknown name either): it is still
    a named thing the abstract lacks."""
    result = answerer.ask("Did Zorblax beat Vocoder-3 on the chat benchmarks?")
    assert result.answer.startswith("The abstract of Zorblax does not mention Vocoder-3."), result.answer


def test_a_decimal_version_inside_a_question_does_not_split_the_question(answerer):
    result = answerer.ask("What learning rate was used to train Zorblax with Qwen3-1.7B?")
    assert result.refusal_reason is RefusalReason.DETAIL_MISSING and "learning rate" in result.refusal_explanation


def test_a_common_thing_with_a_name_shape_is_no_unknown_paper(answerer):
    """GUI and CPU are words of the language, not a made-up method: the question is answered, not refused as not_in_corpus."""
    result = answerer.ask("What success rates do GUI agents for Android phones reach?")
    assert result.refusal_reason is RefusalReason.OFF_TOPIC, result.answer  # the topic is absent, not a paper called GUI
    made_up = answerer.ask("What does the GraphForgeX paper propose?")
    assert made_up.refusal_reason is RefusalReason.NOT_IN_CORPUS


GRIP = "The abstract of Grasping Unknown Objects with Tactile Feedback"


@pytest.mark.parametrize("question,note", [
    # the abstract speaks of sensors and counts objects, never sensors: the count is said absent, the figures given
    ("How many sensors does TouchGrip read?", f"{GRIP} does not report the number of sensors."),
    # it ranks nothing by name: which object was hardest is not there
    ("Which of the 40 household objects was the hardest for TouchGrip to grasp?", f"{GRIP} does not report which one was hardest."),
])
def test_a_count_or_a_winner_the_abstract_never_gives_is_said_absent(answerer, question, note):
    result = answerer.ask(question)
    assert result.answer.startswith(note + " What it does report: "), result.answer
    assert "61% to 89%" in result.answer and result.sentences[0].kind is SentenceKind.SERVICE


def test_a_count_the_abstract_gives_is_answered_plainly(answerer):
    result = answerer.ask("How many household objects was TouchGrip tested on?")
    assert result.refusal_reason is None and "40 household objects" in result.answer
    assert not result.answer.startswith("The abstract of")


def test_a_count_with_no_result_to_give_instead_is_refused_and_says_what(answerer):
    """Glimmer's abstract has "a tunable laser" and no result at all."""
    result = answerer.ask("How many lasers does Glimmer use?")
    assert result.refusal_reason is RefusalReason.DETAIL_MISSING
    assert "does not state the number of lasers." in result.refusal_explanation


def test_a_figure_the_abstract_lacks_beside_a_question_it_answers_is_said_absent_not_refused(answerer):
    """Glimmer's abstract gives no number at all. Asked one alone, that stays a refusal; asked beside a question the
    abstract answers, the answer says the figure is absent, then answers the other question."""
    alone = answerer.ask("How fast is Glimmer in frames per second?")
    assert alone.refusal_reason is RefusalReason.DETAIL_MISSING, alone.answer
    result = answerer.ask("How fast is Glimmer in frames per second? What does its setup combine?")
    assert result.refusal_reason is None, result.answer
    assert result.answer.startswith("The abstract of Glimmer does not report the figure asked for.")
    assert "confocal microscope" in result.answer and result.grounded


def test_figures_asked_of_an_abstract_that_gives_none_are_said_absent_before_what_it_reports(answerer):
    """"What F1 does Glimmer achieve?" asks figures without a quantity word: Glimmer's abstract has no number, so the
    answer says so, then gives what the abstract does report (never a bare result sentence read as the answer)."""
    result = answerer.ask("What F1 does Glimmer achieve on the ribbon benchmark?")
    assert result.refusal_reason is None, result.answer
    assert result.answer.startswith("The abstract of Glimmer does not report the figure asked for.")
    assert result.sentences[0].kind is SentenceKind.SERVICE


@pytest.mark.parametrize("thing", ["COCO", "MS-COCO", "ImageNet"])
def test_a_benchmark_spelt_as_a_common_word_or_shared_by_the_field_is_a_named_thing(answerer, thing):
    """COCO is a common word in lower case, wordfreq reads MS-COCO as its parts, ImageNet names no one paper: each is still a benchmark."""
    result = answerer.ask(f"What does Zorblax reach on {thing}?")
    assert result.answer.startswith(f"The abstract of Zorblax does not report results on {thing}.")


def test_a_word_in_capitals_for_emphasis_is_no_benchmark(answerer):
    result = answerer.ask("Does Zorblax ONLY speed up chat benchmarks?")
    assert result.refusal_reason is None and not result.answer.startswith("The abstract of")


KINDS = ROOT / "tests" / "data" / "kinds_corpus.jsonl"


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    """Five papers written for these tests (flash-memory codes, backdoors in image classifiers, robot arms, lake ice,
    cell counting); `kinds(**settings)` answers over them with settings changed."""
    index = ingested(tmp_path_factory.mktemp("kinds-data"), KINDS)

    def answerer(**changes):
        settings = index.settings.replace(**changes)
        return build_answerer(settings, ExtractiveModel(), Corpora(settings, index))
    return answerer


@pytest.mark.parametrize("question", ["Which papers do imitation learning for humanoid robots?", "Which papers study humanoid robot arms?"])
def test_a_kind_of_a_thing_that_no_abstract_names_is_off_topic(kinds, question):
    """The corpus has robot arms, not humanoid ones: "humanoid" is in no abstract and says which robots are meant."""
    assert kinds(unseen_kind_dense=0.47).ask(question).refusal_reason is RefusalReason.OFF_TOPIC  # the unseen-kind test on
    off = kinds().ask(question)  # off, the default: the robot-arm paper answers
    assert off.refusal_reason is None and "kind:3" in {c.paper_id for c in off.citations}, off.answer


@pytest.mark.parametrize("question,paper", [
    ("Which papers study poisoning attacks that hide triggers in photo classifiers?", "kind:2"),  # photo: image
    ("How does a learned belief-propagation decoder lower frame errors for chip memory codes?", "kind:1"),
])
def test_an_unseen_word_that_is_a_paraphrase_is_answered(kinds, question, paper):
    """"photo" and "chip" are in no abstract, before words the abstracts use, but an abstract matches the question closely."""
    result = kinds(unseen_kind_dense=0.47).ask(question)
    assert result.refusal_reason is None and paper in {c.paper_id for c in result.citations}, result.answer
    never_close = kinds(unseen_kind_dense=1.0, unseen_kind_sentence=1.0).ask(question)  # no match could save it
    assert never_close.refusal_reason is RefusalReason.OFF_TOPIC


def test_unseen_kinds_are_rare_words_no_abstract_uses_before_a_word_one_does():
    seen = {"error", "correct", "code", "attack", "model", "queri", "robot", "behavior", "whether"}
    idf = lambda term: 1.0 if term in seen else 5.0  # noqa: E731
    question = ("Quantum error-correcting codes, jailbreak attacks, downloaded models, a chosen query, much faster robots, "
                "GUI robots, hiding robots, chatbot behaviour like this, check whether it was forgotten, models")
    core = {"quantum", "jailbreak", "download", "chosen", "much", "gui", "hide", "chatbot", "behaviour", "check", "forgotten"}
    # "behaviour like": no thing follows; "chatbot behaviour": two unseen core words (the judge then finds "behavior"
    # in a paper within the typo budget, so it refuses nothing)
    assert unseen_kinds(question, core, idf, kind_zipf=5.0, function_zipf=6.0) == ["Quantum", "jailbreak", "chatbot behaviour"]
    field = unseen_kinds("Are state space models good for speech recognition?", {"speech", "recognit"}, idf, 5.0, 6.0)
    assert field == ["speech recognition"]  # two unseen core words in a row: a field no abstract has
    assert unseen_kinds(question, core - {"quantum", "chatbot"}, idf, kind_zipf=5.0, function_zipf=6.0) == ["jailbreak"]


@pytest.mark.parametrize("question", [
    "What does BeliefNet-X propose for decoding flash memory codes?",
    "How does the Flash-Shepherd decoder weigh its messages?",  # two words of the language, one made-up name
])
def test_a_made_up_name_the_question_asks_about_is_not_in_corpus_however_close_an_abstract(kinds, question):
    result = kinds(unknown_name_dense=0.0).ask(question)  # every abstract counts as close to it
    assert result.refusal_reason is RefusalReason.NOT_IN_CORPUS, result.answer


def test_a_made_up_name_given_in_passing_does_not_refuse_a_close_question(kinds):
    result = kinds(unknown_name_dense=0.0).ask("Are learned decoders for flash memory codes better than ones like BeliefNet-X?")
    assert result.refusal_reason is None and "kind:1" in {c.paper_id for c in result.citations}, result.answer


def test_a_thing_of_the_world_that_sets_the_scene_does_not_refuse_a_close_question(kinds):
    """NAND is a word of the language (a field the question is set in, as "in cooperative MARL"), no abstract names it:
    a close abstract answers. A made-up name in the same place, or a known one asked about, is still not in the corpus."""
    close = kinds(unknown_name_dense=0.0)  # every abstract counts as close to it
    result = close.ask("How do learned decoders weigh their messages for flash memory codes in NAND storage?")
    assert result.refusal_reason is None and "kind:1" in {c.paper_id for c in result.citations}, result.answer
    made_up = close.ask("How do learned decoders weigh their messages for flash memory codes in NANDFLEX storage?")
    assert made_up.refusal_reason is RefusalReason.NOT_IN_CORPUS, made_up.answer
    asked = close.ask("How does NAND weigh the messages of learned decoders for flash memory codes?")
    assert asked.refusal_reason is RefusalReason.NOT_IN_CORPUS, asked.answer


def test_a_list_question_that_names_a_paper_is_off_topic_when_its_core_is_nowhere(answerer):
    assert answerer.ask("Which papers apply Zorblax to protein folding?").refusal_reason is RefusalReason.OFF_TOPIC


def test_a_list_question_that_names_a_thing_its_paper_holds_is_answered(answerer):
    result = answerer.ask("Which papers use Raman thermometry?")
    assert result.refusal_reason is None and "own:6" in {c.paper_id for c in result.citations}, result.answer


@pytest.mark.parametrize("question,other", [
    ("Quels articles portent sur des agents qui pilotent des interfaces graphiques ?", True),
    ("Wie viele Samples und Subtypen enthält der Benchmark?", True),
    ("¿Hay trabajos sobre traducción automática para lenguas de bajos recursos?", True),
    ("¿Qué artículos usan arquitecturas mixture-of-experts?", True),  # one of the commonest words, two a little less common
    ("Quais artigos usam dados do cérebro humano?", True),
    ("TimeWeaver 时间序列预测方法的主要贡献是什么？", True),
    ("best hiking trails near Lake Como?", False),  # one Italian-looking name
    ("Which EEG datasets was it evaluated on, e.g. TUH or CHB-MIT?", False),
    ("How many training runs in total, and is the video on the web?", False),
])
def test_a_question_in_another_language_is_told_from_an_english_one(answerer, question, other):
    assert in_other_language(question, answerer.settings) is other


def test_a_which_question_whose_things_the_abstract_speaks_of_but_never_names_says_so(answerer):
    """"Which chat benchmarks?" where the abstract says "on three chat benchmarks": the names are said absent, then what
    it does report; a "which" the abstract answers by name is answered as it is."""
    result = answerer.ask("Which chat benchmarks does Zorblax report its speedup on?")
    assert result.refusal_reason is None
    assert result.answer.startswith("The abstract of Zorblax does not report the names of "
                                    "the benchmarks. What it does report: "), result.answer
    assert "three chat benchmarks" in result.answer
    named = answerer.ask("Which thermometry does Glimmer use to image the temperature of graphene ribbons?")
    assert not named.answer.startswith("The abstract of"), named.answer


def test_a_list_of_alternatives_is_answered_by_the_papers_holding_either(answerer):
    """"X or Y": a paper holding the whole core of one alternative is one of the papers asked for, though no paper
    holds the core of the question as a whole."""
    result = answerer.ask("Any papers on training voices that chatter loudly or tactile grasping?")
    assert result.refusal_reason is None and "own:3" in {c.paper_id for c in result.citations}, result.answer


@pytest.mark.parametrize("either", ["or", "ou", "o", "oder", "oppure"])
def test_alternatives_are_read_in_each_accepted_language(answerer, either):
    """The judge reads "X ou Y", "X oder Y" as "X or Y": a paper holding either alternative's core holds the question."""
    from qa_service.answering.answerability import AnswerabilityJudge
    from qa_service.records import PaperHit

    judge = AnswerabilityJudge(answerer.settings)  # every term as rare as any other: the core is the question's own
    legs = PaperHit("a:1", "Legs", 1.0, 0.5, 0.5, 0.5, text="We train a locomotion policy for quadrupeds on rough terrain.")
    heat = PaperHit("a:2", "Heat", 0.9, 0.5, 0.5, 0.5, text="Graphene ribbons conduct heat anisotropically.")
    held = judge._holding(f"quadrupeds on terrain {either} graphene ribbons heat", [legs, heat])
    assert {h.paper_id for h in held} == {"a:1", "a:2"}


def test_a_verb_no_abstract_uses_before_on_or_at_is_the_asking_not_the_topic(answerer):
    """"touch on": the paper holding the rest of the question answers it; a neighbour stays off-topic."""
    result = answerer.ask("Which papers touch on Zorblax-style draft trees?")
    assert result.refusal_reason is None and "own:5" in {c.paper_id for c in result.citations}, result.answer
    assert answerer.ask("Which papers compress images with transformers?").refusal_reason is RefusalReason.OFF_TOPIC


def test_a_function_word_of_english_is_never_the_core_of_a_question(answerer):
    """"refusing too much": no abstract uses "much", but it is one of the language's commonest words, not a topic."""
    from qa_service.answering.evidence import core_terms

    unseen = {"much", "agreeabl", "chatbot"}  # words no abstract uses: the rarest there are
    idf = lambda term: 9.0 if term in unseen or term == " " else 1.0  # noqa: E731
    core = core_terms("Which papers look at chatbots refusing too much?", idf, 0.34, 3, function_zipf=answerer.settings.function_word_zipf)
    assert "much" not in core and "chatbot" in core


def test_a_function_word_of_the_questions_own_language_is_never_its_core(answerer):
    """"de", "en" of a Spanish question are its "of", "in": words the English abstracts may hold ("de novo", "en route"),
    never what the question is about; the core of a question in another language is the abstracts' words it uses."""
    from qa_service.answering.evidence import core_terms

    seen = {"de": 3.0, "en": 3.5, "la": 3.0, "llms": 1.0}  # the rest: no abstract uses them
    idf = lambda term: seen.get(term, 9.0)  # noqa: E731
    question = "¿Qué artículos tratan de la cuantización de LLMs en inferencia?"
    core = core_terms(question, idf, 0.34, 3, seen_only=True, function_zipf=answerer.settings.function_word_zipf)
    assert core == {"llms"}, core
    rare = lambda term: 9.0 if term == " " else 5.0 if term == "de" else 1.0  # noqa: E731
    english = core_terms("Which papers use de novo design?", rare, 0.34, 3, function_zipf=answerer.settings.function_word_zipf)
    assert "de" in english  # of an English question, only English's commonest words are left out


def test_a_search_box_query_that_several_papers_hold_lists_each_of_them(answerer):
    """"speech voices": a few words that neither ask nor tell, the whole of which two papers hold. Whoever types
    that wants the papers on it, one sentence of each; a question about one of them still gets that one."""
    listed = answerer.ask("speech voices")
    assert listed.refusal_reason is None, listed.answer
    assert {"own:1", "own:2"} <= {c.paper_id for c in listed.citations}, listed.answer
    asked = answerer.ask("How does EchoNet handle voices in noisy classrooms?")
    assert {c.paper_id for c in asked.citations} == {"own:1"}, asked.answer


@pytest.mark.parametrize("query,papers", [("voice audio models", {"own:1", "own:2"}), ("robot policies", {"own:3", "own:4"})])
def test_a_search_box_query_naming_no_paper_lists_the_papers_on_its_topic(answerer, query, papers):
    """A few words typed into a search box ask for the papers on that topic, each paper once, though no paper holds
    every word; a question worded for one paper, or a query naming one, is answered from that paper."""
    listed = answerer.ask(query)
    assert listed.refusal_reason is None and papers <= {c.paper_id for c in listed.citations}, listed.answer
    one = answerer.ask("Which controller adjusts finger forces from tactile sensor readings?")
    assert {c.paper_id for c in one.citations} == {"own:3"}, one.answer
    named = answerer.ask("TouchGrip grasp success")
    assert {c.paper_id for c in named.citations} == {"own:3"}, named.answer


@pytest.mark.parametrize("question,thing", [
    ("What grasp success does TouchGrip reach on Robomimic?", "results on Robomimic"),  # a benchmark spelt as a word
    ("Was EchoNet evaluated on Natural Questions?", "Natural Questions"),  # capitalised words in a row: a name
])
def test_a_capitalised_name_the_abstract_lacks_is_said_absent(answerer, question, thing):
    """A benchmark or model written as a capitalised word has no name-shaped spelling to catch it; the paper's abstract
    not mentioning it is said, then what it does report."""
    result = answerer.ask(question)
    service = [s.text for s in result.sentences if s.kind is SentenceKind.SERVICE]
    assert result.refusal_reason is None and service and thing in service[0], result.answer


def test_a_noun_of_a_language_that_capitalises_nouns_is_no_name(answerer):
    """German writes every noun with a capital: "Haushaltsobjekten" is a word of the question, not a benchmark."""
    result = answerer.ask("Wie hoch ist der Greiferfolg von TouchGrip bei Haushaltsobjekten?")
    assert result.refusal_reason is None and not [s for s in result.sentences if s.kind is SentenceKind.SERVICE], result.answer
    assert {c.paper_id for c in result.citations} == {"own:3"}


def test_the_verb_saying_what_papers_are_about_is_never_the_core(answerer):
    """"papers that involve multiple cooperating agents": no abstract may say "involve", yet the topic is cooperation."""
    from qa_service.answering.evidence import core_terms

    idf = lambda term: 9.0 if term in {"involv", "cooper", " "} else 1.0  # noqa: E731
    core = core_terms("papers that involve multiple cooperating agents?", idf, 0.34, 3, function_zipf=answerer.settings.function_word_zipf)
    assert "involv" not in core and "cooper" in core, core


def test_several_absent_things_are_said_as_a_negation_reads_them():
    """"does not report results on MMLU or GSM8K", not "MMLU, GSM8K": a list after "not" is joined by "or"."""
    from qa_service.answering.absence import absence_note
    from qa_service.records import PaperHit, Verdict

    hits = [PaperHit("p:1", "Zorblax", 1.0, 1.0, 1.0, 1.0)]
    note = absence_note(Verdict.yes(["p:1"], False, ["MMLU", "GSM8K", "HumanEval"]), hits, "How does Zorblax do on MMLU, GSM8K and HumanEval?")
    assert note is not None and note.text == "The abstract of Zorblax does not report results on MMLU, GSM8K or HumanEval."
    missing = absence_note(Verdict.yes(["p:1"], False, (), ["the number of GPUs", "which one was best"]), hits, "How many GPUs?")
    assert missing is not None and missing.text == "The abstract of Zorblax does not report the number of GPUs or which one was best."
    several = absence_note(Verdict.yes(["p:1", "p:2"], False, ["MMLU"]), hits + [PaperHit("p:2", "Quux", 1.0, 1.0, 1.0, 1.0)],
                           "How do Zorblax and Quux do on MMLU?")
    assert several is not None and several.opening() == "The abstracts of Zorblax and Quux do not report results on MMLU. What they do report:"
    assert absence_note(Verdict.yes(["p:1"]), hits, "How does Zorblax work?") is None


@pytest.mark.parametrize("question", ["「frame error rate」とは何ですか？どのくらい下がりますか？", "O que é a 'frame error rate' e quanto ela cai?",
                                      "Was bedeutet „frame error rate“ hier, und wie stark sinkt sie?"])
def test_a_term_a_question_in_another_language_quotes_finds_the_abstract_that_holds_it(kinds, question):
    """MiniLM cannot read the question, but the quoted English term is word for word in one abstract: that one answers."""
    result = kinds().ask(question)
    assert result.refusal_reason is None and {c.paper_id for c in result.citations} == {"kind:1"}, result.answer


def test_a_quoted_term_no_abstract_holds_saves_nothing(kinds):
    assert kinds().ask("O que é a 'quantum annealing schedule'?").refusal_reason is RefusalReason.OFF_TOPIC


def test_the_absence_sentence_before_a_list_leaves_the_list_on_lines_of_its_own():
    """A Markdown list read after "What it does report:" on the same line is no list: it opens on the next line."""
    from qa_service.answering.absence import ABSENCE_LEAD, AbsenceNote, state_absence
    from qa_service.records import AnswerSentence, CheckedAnswer, Citation

    listing = "- **Zorblax**: Zorblax drafts tokens [1].\n- **Quux**: Quux reranks passages [2]."
    item = AnswerSentence(15, 41, "Zorblax drafts tokens [1].", cites=[1])
    checked = CheckedAnswer(listing, citations=[Citation(1, "p:1", "Zorblax", "Zorblax drafts tokens", 0, 21, 1.0, True, 0)], sentences=[item])
    out = state_absence(checked, AbsenceNote("The abstract of Zorblax does not report results on MMLU."))
    assert out.answer.startswith(f"The abstract of Zorblax does not report results on MMLU. {ABSENCE_LEAD}\n- **Zorblax**: ")
    moved = out.sentences[-1]
    assert out.answer[moved.start:moved.end] == "Zorblax drafts tokens [1]."
    prose = state_absence(CheckedAnswer("Zorblax drafts tokens [1].", citations=checked.citations), AbsenceNote("The abstract says nothing."))
    assert prose.answer == f"The abstract says nothing. {ABSENCE_LEAD} Zorblax drafts tokens [1]."


@pytest.mark.parametrize("question,thing", [
    ("Zorblax vs Medusa - which one decodes faster?", "Medusa"),  # a method compared with, no abstract names it
    ("Is Zorblax faster than Medusa?", "Medusa"),
    ("zorblax speedup llama3", "llama3"),  # a name typed in lower case, as a search box gets it
])
def test_a_method_compared_with_or_a_name_typed_in_lower_case_the_abstract_lacks_is_said_absent(answerer, question, thing):
    result = answerer.ask(question)
    assert result.refusal_reason is None and result.answer.startswith("The abstract of Zorblax does not "), result.answer
    assert thing in result.sentences[0].text and "2.7× speedup" in result.answer


def test_a_question_describing_its_paper_without_its_name_gets_the_absence_said_too(answerer):
    """No name calls the drone paper; ImageNet, named, is nowhere in its abstract."""
    result = answerer.ask("the drone seabird nest counting paper - does it work on ImageNet images?")
    assert result.refusal_reason is None and result.answer.startswith("The abstract of Counting Birds from Drone Images does not")
    assert "ImageNet" in result.sentences[0].text


def test_a_field_abbreviation_in_a_question_describing_its_paper_is_no_absent_thing(answerer):
    """"kNN-style" describes how a method works; the paper may write it out ("nearest neighbours"), so it is never said absent."""
    result = answerer.ask("the classroom speech recogniser trained on lessons, is it an RNN-style model?")
    assert not result.answer.startswith("The abstract of"), result.answer


def test_a_name_the_abstract_introduces_as_its_own_calls_the_paper_as_its_label_does(tmp_path):
    """STR labels the paper; "we develop KestrelDec, a ..." makes KestrelDec its name too: asked KestrelDec's score on a
    benchmark another abstract names (MMLU), the absence is said of this paper alone, not the MMLU paper answered beside
    it. A name only begun there ("Sparse", of "Sparse Tree Router") is no such name."""
    from qa_service.answering.answerability import _own_name
    from tests.conftest import offline_answerer
    kestrel = ("Decoding long outputs leaves accelerators idle. We propose the Sparse Tree Router (STR). STR prunes unlikely "
               "draft branches, STR keeps outputs identical, and STR needs no training. With STR in place, STR-based "
               "serving is cheap. Building on STR, we develop KestrelDec, a plug-in decoder for chat models. KestrelDec "
               "reaches a 2.1x speedup on three chat benchmarks with identical outputs.")
    assert _own_name(kestrel, "KestrelDec") and not _own_name(kestrel, "Sparse") and not _own_name(kestrel, "STR")
    others = ["Graphene ribbons conduct heat anisotropically. We measure their thermal conductivity with Raman thermometry.",
              "Flood forecasting from radar images uses convolutional networks trained on ten years of rainfall.",
              "Legged robots cross rough terrain with a learned gait controller tested on four outdoor courses.",
              "We distil a small reranker from a large one; it lifts MMLU accuracy by 3 points."]  # MMLU is a corpus name
    result = offline_answerer(tmp_path, [kestrel, *others]).ask("What speedup does KestrelDec reach on MMLU?")
    assert result.refusal_reason is None and result.sentences[0].text == "The abstract of STR does not report results on MMLU."
    assert "2.1x speedup" in result.answer and {c.label for c in result.citations} == {"STR"}, result.answer


def test_a_question_writing_a_paper_s_label_of_several_words_is_about_that_paper_in_any_language():
    """"... rompere la Reversal Curse ..." writes the label the service gives the paper: it is the paper asked about,
    though retrieval marked nothing relevant (the Italian words weigh against it) and no sentence is close. A label cut
    short ("…") is no name a question writes."""
    from qa_service.answering.answerability import AnswerabilityJudge, _labelled
    from qa_service.config import Settings
    from qa_service.records import PaperHit, Retrieval
    curse = PaperHit("p:1", "Reversal Curse", 0.1, 0.37, 0.1, 0.5, relevant=False,
                     text="Models trained on 'A is B' fail to answer 'B is A', the reversal curse. A new architecture breaks it.")
    other = PaperHit("p:2", "Agent-centric benchmarking paradigm that moves beyond…", 0.1, 0.33, 0.1, 0.2, relevant=False,
                     text="We benchmark agents on data augmentation tasks.")
    question = "Quale architettura riesce a rompere la Reversal Curse senza data augmentation?"
    assert _labelled(question, [curse, other]) == [curse]
    assert _labelled("agent-centric benchmarking paradigm that moves beyond static data", [other]) == []
    judge = AnswerabilityJudge(Settings(), closeness=lambda q, texts: [0.2] * len(texts))
    verdict = judge.decide(question, Retrieval(question, [curse, other]))
    assert verdict.answerable and verdict.about == ("p:1",), verdict
