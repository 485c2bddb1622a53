"""A question in Spanish, Portuguese, French or German is read with the English words of the corpus its words are cognates
of: MiniLM and BM25 read English, and "interpretabilidad" shares no word with an abstract on interpretability. Papers
written for the test."""


import pytest

from qa_service.records import RefusalReason
from qa_service.store.cognates import CognateBook, CognateRules
from qa_service.store.filters import normalize
from qa_service.store.lexical import content_terms, stem
from qa_service.web.app import create_app
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Transformer language models remain opaque. We present CircuitLens, an interpretability method that traces the circuits "
    "behind each prediction by patching attention heads. CircuitLens recovers known circuits on six tasks and explains 84% of "
    "the logit difference.",
    "Large language models are costly to serve. We introduce TinyBits, a post-training quantization method that stores "
    "weights in 3 bits with learned rounding. TinyBits keeps perplexity within 0.3 of the full-precision model on WikiText.",
    "Classifiers are often overconfident. We propose TempMix, a calibration method that mixes temperatures per class. "
    "TempMix lowers the expected calibration error by 41% on ImageNet.",
    "Protein structures are slow to predict. We present FoldFast, which predicts protein folds from sequence alone and runs "
    "ten times faster than previous predictors.",
    "Robots lose their way in crowded halls. We propose WayFinder, a navigation policy trained with reinforcement learning "
    "that reaches 92% of goals in numerous simulated offices, under control of a planner.",
]


def book(min_stem: int = 6) -> CognateBook:
    vocabulary = set().union(*(content_terms(text) for text in PAPERS))
    return CognateBook(vocabulary, stem, CognateRules(min_stem=min_stem))


def test_a_word_stemmed_in_its_language_is_the_corpus_english_term():
    assert book().gloss("¿Qué trabajos estudian la interpretabilidad?", "es") == {"interpretabilidad": "interpretability"}
    assert book().gloss("Quais artigos tratam da calibração?", "pt") == {"calibração": "calibration"}


def test_a_cognate_may_be_one_edit_away_per_six_letters():
    """cuantiz -> quantiz: one edit of seven letters."""
    assert book().gloss("¿Hay trabajos sobre cuantización?", "es") == {"cuantización": "quantization"}


def test_a_short_stem_is_never_matched_within_an_edit_a_false_friend_as_likely_as_a_cognate():
    """"numérique" stems to numer, one edit from nothing here but "numerous"'s own numer: five letters are matched only as
    they stand (EXACT_STEM_LETTERS), never an edit away (`cognate_min_stem`)."""
    assert book()._match("numer") == "numer"  # the corpus's stem as it stands
    assert book()._match("numir") is None
    # read by its ending, the word is whole: -ique is English -ic or -ical, and "numerical" is an English word
    assert book().gloss("Des travaux sur le tatouage numérique ?", "fr") == {"numérique": "numerical"}


def test_common_words_on_either_side_are_never_glossed():
    """"welche" is German's own asking word; "controlan" is a cognate of "control", which English uses too often to say
    what a question is about."""
    assert book().gloss("Welche Arbeiten?", "de") == {}
    assert book().gloss("¿Qué agentes controlan robots?", "es") == {}


def test_a_word_the_corpus_writes_already_or_with_no_cognate_adds_nothing():
    assert book().gloss("Welche Arbeiten untersuchen die Beobachtbarkeit?", "de") == {}
    assert book().gloss("Quels travaux sur la navigation des robots ?", "fr") == {}  # "navigation" is the corpus's word


def test_a_stem_is_compared_without_accents_and_with_eszett_as_ss():
    """The cognate look-up folds a stem as filters fold a name: accents off, ß as ss."""
    assert (normalize("Característica"), normalize("Größe")) == ("caracteristica", "grosse")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cognates")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def answerer(index, **overrides):
    return answerer_over(index, **overrides)


@pytest.mark.parametrize("question,label", [
    ("¿Qué trabajos estudian la interpretabilidad de los transformadores?", "CircuitLens"),
    ("Quais artigos tratam da calibração de classificadores?", "TempMix"),
])
def test_a_question_in_another_language_finds_the_paper_its_cognates_name(index, question, label):
    result = answerer(index).ask(question)
    assert result.refusal_reason is None and {c.label for c in result.citations} == {label}
    assert result.question == question  # the question is answered as asked: the gloss is only how it is read
    off = answerer(index, cognate_min_stem=0).ask(question)  # without cognates MiniLM cannot read it: refused
    assert off.refusal_reason is RefusalReason.OFF_TOPIC


def test_the_first_question_of_a_process_is_read_as_any_other(index):
    """`qa-service ask` in Spanish, or a notebook's first question: no search has loaded a corpus yet, and the question is
    read before its search, so its cognates are looked up in the corpus's vocabulary loaded for it, not in none."""
    from qa_service.service import open_service
    fresh = open_service(index.settings.data_dir, index.settings)
    question = "¿Qué trabajos estudian la interpretabilidad de los transformadores?"
    assert "(interpretability)" in fresh.answerer.bridged(question)
    result = open_service(index.settings.data_dir, index.settings).ask(question)
    assert result.refusal_reason is None and {c.label for c in result.citations} == {"CircuitLens"}


def test_the_gloss_follows_each_word_inside_the_question(index):
    bridged = answerer(index).bridged("¿Qué trabajos estudian la interpretabilidad de los circuitos?")
    assert bridged == "¿Qué trabajos estudian la interpretabilidad (interpretability) de los circuitos (circuit)?"
    assert answerer(index).bridged("Which papers study interpretability?") == "Which papers study interpretability?"


def test_the_search_route_reads_the_question_as_an_answer_does(index):
    """POST /api/search ranks for "cuantización" the paper on quantization first, as the answer reads it (unread, MiniLM
    puts the interpretability paper first)."""
    app = create_app(index.settings, index=index)
    app.config["TESTING"] = True
    response = app.test_client().post("/api/search", json={"question": "¿Hay trabajos sobre cuantización?", "k": 3})
    assert response.status_code == 200
    assert response.get_json()["results"][0]["label"] == "TinyBits"


def test_a_question_s_lookups_are_bounded_however_many_words_it_holds(monkeypatch):
    """Each word matched within the edit budget is a scan of the vocabulary: at most `most_lookups` per question."""
    bounded = CognateBook(set().union(*(content_terms(text) for text in PAPERS)), stem, CognateRules(most_lookups=3))
    scans = []
    real = bounded._match
    monkeypatch.setattr(bounded, "_match", lambda own: scans.append(own) or real(own))
    words = " ".join(f"palabrota{chr(97 + i)}{chr(97 + j)}cion" for i in range(20) for j in range(10))
    bounded.gloss(f"¿Qué trabajos {words} sobre cuantización?", "es")
    assert len(scans) == 3


def test_the_edit_budget_is_counted_on_the_shorter_stem():
    """"differentiel" (12 letters) is two edits from the corpus's "differenti" (10): one edit per six letters of the
    shorter allows one, so it is no cognate; "diferenti" (9) is one edit away, and is."""
    small = CognateBook({"differenti"}, stem, CognateRules(suffix_letters=0))
    assert small._match("differentiel") is None
    assert small._match("diferenti") == "differenti"


def test_a_cognate_may_carry_a_derivational_suffix_of_its_own():
    """German "Kalibrierung" stems to kalibrier: calibr (one edit) and the suffix -ier; a longer tail is another word."""
    small = CognateBook({"calibr"}, stem, CognateRules(suffix_letters=4))
    assert small._match("kalibrier") == "calibr"
    assert small._match("kalibrierungs") is None
    assert CognateBook({"calibr"}, stem, CognateRules(suffix_letters=0))._match("kalibrier") is None
    assert small.gloss("Welche Arbeiten nutzen Kalibrierung?", "de") == {"Kalibrierung": "calibration"}


# English words a respelt ending must reach: a long English word stems short ("initialization" -> initi, below
# cognate_min_stem), so no stem of these is found by the stem look-up
RESPELT = [
    "We study initialization of deep networks and its attribution to training dynamics.",
    "A diffusion sampler with quantization and calibration of the scores; evaluated on twelve tasks, it is regularized.",
]


def respelt_book() -> CognateBook:
    return CognateBook(set().union(*(content_terms(text) for text in RESPELT)), stem, CognateRules())


@pytest.mark.parametrize("question, language, word, english", [
    ("¿Cómo se hace la inicialización?", "es", "inicialización", "initialization"),   # -ción is -tion, c for t
    ("¿Qué dice sobre la atribución?", "es", "atribución", "attribution"),            # a single t for tt
    ("Como funciona a difusão?", "pt", "difusão", "diffusion"),                        # -são is -sion, f for ff
    ("Wie wird die Quantisierung gemacht?", "de", "Quantisierung", "quantization"),    # -isierung is -ization
    ("Wie wird die Kalibrierung gemacht?", "de", "Kalibrierung", "calibration"),       # -ierung is -ation, k for c
    ("Wurde es evaluiert?", "de", "evaluiert", "evaluated"),                           # -iert: -ed or -ated, the closer
])
def test_a_word_read_by_its_ending_is_the_english_word_it_corresponds_to(question, language, word, english):
    """A derivational ending is its English one ("inicialización": inicializ + ation), and the word so respelt is one edit
    from the English word at most: the stem look-up cannot find these (initialization stems to initi, five letters)."""
    assert respelt_book().gloss(question, language) == {word: english}
    assert CognateBook(set(), stem, CognateRules()).gloss(question, language) == {}  # only the corpus's terms are named


def test_a_short_respelt_word_must_be_the_english_word_exactly():
    """"lignée" (lineage) respelt is "ligned", one edit from "signed"; "basada" is "based", one edit from "biased": below
    eight letters a respelt word must be an English word as it stands (RESPELT_EDIT_LETTERS), never one edit away."""
    near = CognateBook(set().union(content_terms("signed and biased results")), stem, CognateRules())
    assert near.gloss("Quelle lignée ?", "fr") == {}
    assert near.gloss("¿Está basada en datos?", "es") == {}


def test_a_term_is_given_as_a_word_when_its_stem_is_short_or_ends_as_no_word_does():
    """"evalu" (five letters, matched as it stands) and "auditori" (of auditory) are stems, not words: MiniLM reads the
    gloss, and a stem is no word it knows."""
    vocabulary = content_terms("Models are evaluated on the auditory cortex of listeners.")
    cognates = CognateBook(vocabulary, stem, CognateRules())
    assert cognates.gloss("Sur quel benchmark est-il évalué ?", "fr") == {"évalué": "evaluation"}
    assert cognates.gloss("Was erklärt der auditorischen Kortex?", "de") == {"auditorischen": "auditory", "Kortex": "cortex"}
